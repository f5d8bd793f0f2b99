"""A customer's listing as scorecard evidence: the publisher checks, check 12's verified quote, check 22's licence.

The quote verification round (monitors.services.quotes_verify) is driven with recorded pages
(the fetcher itself is tested against a loopback server in test_pagefetch.py).
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.utils import timezone

from directory.models import RepositoryLicence
from directory.services import _repositories_due
from monitors import selectors
from monitors.models import Healthcheck, HealthcheckListing
from monitors.pagefetch import FetchFailed, Page
from monitors.scorecard import ListingSource, LookupStatus, Verdict
from monitors.services import healthcheck_create, listing_set, quotes_verify
from monitors.worker.tasks import verify_quotes
from probes.checks.mcp import MCP

pytestmark = pytest.mark.django_db

PRICING_URL = "https://acme.example/pricing"
QUOTE = "Free tier: 1,000 calls a month"
STATES = Page(PRICING_URL, 200, "text/html", b"<p>Free tier: 1,000 calls a month</p>")
LACKS = Page(PRICING_URL, 200, "text/html", b"<p>Plans from $10</p>")


@pytest.fixture
def mcp_check(org, now) -> Healthcheck:
    return healthcheck_create(
        organization=org, name="docs", check_type=MCP, config={"uri": "https://mcp.example.com/mcp"}, now=now
    )


def listed(healthcheck: Healthcheck, now: datetime, **changes) -> HealthcheckListing:
    data = {
        "namespace": "io.github.acme/docs",
        "website_url": "https://acme.example",
        "repository_url": "https://github.com/Acme/docs-mcp",
        "pricing_url": PRICING_URL,
        "quote": QUOTE,
        **changes,
    }
    return listing_set(healthcheck=healthcheck, data=data, now=now)


def verify(pages: dict[str, Page | FetchFailed], at: datetime, *, limit: int = 10) -> list[str]:
    asked: list[str] = []

    def fetch(url: str) -> Page | FetchFailed:
        asked.append(url)
        return pages[url]

    quotes_verify(fetch=fetch, now=lambda: at, limit=limit)
    return asked


def result(healthcheck: Healthcheck, number: int, now: datetime):
    card = selectors.scorecard_of(healthcheck=healthcheck, now=now)
    return card.results[number - 1]


def test_without_a_listing_the_publisher_checks_are_not_measured(mcp_check, now):
    evidence = selectors.scorecard_evidence(healthcheck=mcp_check, now=now)

    assert (evidence.listing, evidence.free_tier, evidence.licence) == (None, None, None)


def test_the_listing_is_manual_evidence_so_verified_namespace_fails(mcp_check, now):
    listed(mcp_check, now)

    evidence = selectors.scorecard_evidence(healthcheck=mcp_check, now=now)
    namespace = result(mcp_check, 17, now)

    assert evidence.listing is not None
    assert (evidence.listing.source, evidence.listing.name) == (ListingSource.MANUAL, "io.github.acme/docs")
    assert (namespace.verdict, namespace.reason) == (
        Verdict.FAILED,
        "Listed by hand, not in the Official MCP Registry",
    )


@pytest.mark.parametrize(
    ("number", "verdict"),
    [(18, Verdict.NOT_MEASURED), (19, Verdict.PASSED), (20, Verdict.PASSED), (21, Verdict.FAILED)],
    ids=["website (io.github: n/a)", "repo linked", "repo owner (case ignored)", "no registry update date"],
)
def test_the_listing_feeds_the_other_publisher_checks(mcp_check, now, number, verdict):
    listed(mcp_check, now)

    assert result(mcp_check, number, now).verdict is verdict


def test_a_reverse_dns_namespace_is_matched_against_the_website(mcp_check, now):
    listed(mcp_check, now, namespace="com.acme/docs", website_url="https://www.acme.com/")

    assert result(mcp_check, 18, now).verdict is Verdict.PASSED


def test_a_pricing_page_not_yet_fetched_leaves_check_12_not_measured(mcp_check, now):
    listed(mcp_check, now)

    assert result(mcp_check, 12, now).verdict is Verdict.NOT_MEASURED
    assert selectors.scorecard_evidence(healthcheck=mcp_check, now=now).free_tier is None


def test_a_fetch_that_finds_the_quote_passes_check_12_with_its_url_and_date(mcp_check, now):
    listed(mcp_check, now)

    verify({PRICING_URL: STATES}, now)

    free = result(mcp_check, 12, now)
    assert free.verdict is Verdict.PASSED
    assert free.evidence == {"url": PRICING_URL, "quote": QUOTE, "last_found_at": now.isoformat()}
    row = HealthcheckListing.objects.get()
    assert (row.quote_checked_at, row.quote_found_at, row.quote_problem) == (now, now, "")
    assert row.quote_due_at == now + timedelta(days=1)


@pytest.mark.parametrize(
    ("age", "verdict"),
    [(timedelta(days=90), Verdict.PASSED), (timedelta(days=90, seconds=1), Verdict.FAILED)],
    ids=["90 days", "90 days and a second"],
)
def test_check_12_passes_within_90_days_of_the_quote_last_being_found(mcp_check, now, age, verdict):
    listed(mcp_check, now)
    verify({PRICING_URL: STATES}, now)

    assert result(mcp_check, 12, now + age).verdict is verdict


def test_a_later_fetch_without_the_quote_keeps_when_it_was_last_found(mcp_check, now):
    listed(mcp_check, now)
    verify({PRICING_URL: STATES}, now)
    later = now + timedelta(days=1)

    verify({PRICING_URL: LACKS}, later)

    row = HealthcheckListing.objects.get()
    assert (row.quote_checked_at, row.quote_found_at, row.quote_problem) == (
        later,
        now,
        "The page does not state the quote",
    )
    free = result(mcp_check, 12, later)
    assert (free.verdict, free.observed_at) == (Verdict.PASSED, later)


def test_a_page_fetched_that_never_stated_the_quote_fails_check_12(mcp_check, now):
    listed(mcp_check, now)

    verify({PRICING_URL: LACKS}, now)

    free = result(mcp_check, 12, now)
    assert (free.verdict, free.observed_at) == (Verdict.FAILED, now)
    assert free.evidence == {"url": PRICING_URL, "quote": QUOTE, "last_found_at": None}


def test_a_failed_fetch_records_its_reason(mcp_check, now):
    listed(mcp_check, now)

    verify(
        {PRICING_URL: FetchFailed("acme.example's robots.txt disallows Uptimy from fetching /pricing")}, now
    )

    row = HealthcheckListing.objects.get()
    assert (row.quote_found_at, row.quote_problem) == (
        None,
        "acme.example's robots.txt disallows Uptimy from fetching /pricing",
    )


def test_a_page_is_fetched_at_most_daily(mcp_check, now):
    listed(mcp_check, now)
    verify({PRICING_URL: STATES}, now)

    assert verify({PRICING_URL: STATES}, now + timedelta(hours=23)) == []
    assert verify({PRICING_URL: STATES}, now + timedelta(days=1)) == [PRICING_URL]


def test_a_changed_quote_forgets_what_the_old_one_found_and_is_fetched_again(mcp_check, now):
    listed(mcp_check, now)
    verify({PRICING_URL: STATES}, now)
    later = now + timedelta(hours=1)

    listed(mcp_check, later, quote="Freemium: 1,000 calls a month")

    row = HealthcheckListing.objects.get()
    assert (row.quote_checked_at, row.quote_found_at, row.quote_due_at) == (None, None, later)


def test_an_unchanged_quote_keeps_its_verification_when_other_fields_change(mcp_check, now):
    listed(mcp_check, now)
    verify({PRICING_URL: STATES}, now)

    listed(mcp_check, now, website_url="https://docs.acme.example")

    assert HealthcheckListing.objects.get().quote_found_at == now


def test_a_round_fetches_one_page_per_host_and_leaves_the_rest_for_later(org, now):
    checks = [
        healthcheck_create(
            organization=org,
            name=f"docs{n}",
            check_type=MCP,
            config={"uri": "https://mcp.example.com/mcp"},
            now=now,
        )
        for n in range(3)
    ]
    urls = ["https://acme.example/a", "https://www.acme.example/b", "https://other.example/c"]
    for healthcheck, url in zip(checks, urls, strict=True):
        listed(healthcheck, now, pricing_url=url)
    pages = {url: Page(url, 200, "text/html", b"<p>Free tier: 1,000 calls a month</p>") for url in urls}

    first = verify(pages, now)
    second = verify(pages, now)

    assert first == ["https://acme.example/a", "https://other.example/c"]
    assert second == ["https://www.acme.example/b"]


def test_a_quote_changed_during_the_fetch_is_not_recorded(mcp_check, now):
    listed(mcp_check, now)

    def fetch(url: str) -> Page:
        listed(mcp_check, now, quote="Freemium plan for everyone")
        return STATES

    quotes_verify(fetch=fetch, now=lambda: now, limit=10)

    row = HealthcheckListing.objects.get()
    assert (row.quote, row.quote_checked_at) == ("Freemium plan for everyone", None)


def test_the_directory_looks_up_the_licence_of_a_customer_s_repository(mcp_check, now):
    listed(mcp_check, now)

    assert ("acme", "docs-mcp") in _repositories_due(now=now, limit=50)


def test_check_22_reads_the_directory_s_lookup_through_the_signal(mcp_check, now):
    listed(mcp_check, now)
    RepositoryLicence.objects.create(
        owner="acme",
        repo="docs-mcp",
        status="done",
        spdx_id="MIT",
        osi_approved=True,
        list_version="3.27",
        looked_up_at=now,
    )

    evidence = selectors.scorecard_evidence(healthcheck=mcp_check, now=now)
    licence = result(mcp_check, 22, now)

    assert evidence.licence is not None
    assert (evidence.licence.status, evidence.licence.spdx_id) == (LookupStatus.DONE, "MIT")
    assert (licence.verdict, licence.reason) == (Verdict.PASSED, "MIT is OSI-approved")


def test_check_22_is_not_measured_until_the_directory_looked_the_repository_up(mcp_check, now):
    listed(mcp_check, now)

    licence = result(mcp_check, 22, now)

    assert (licence.verdict, licence.reason) == (Verdict.NOT_MEASURED, "The licence lookup has not been done")


def test_the_scorecard_api_shows_the_listing_and_its_quote(client, mcp_check, now):
    listed(mcp_check, now)
    verify({PRICING_URL: STATES}, now)

    body = client.get(f"/api/v1/healthchecks/{mcp_check.public_id}/scorecard/").json()

    assert body["listing"]["namespace"] == "io.github.acme/docs"
    assert body["listing"]["quote_status"] == "found"
    free = body["checks"][11]
    assert (free["verdict"], free["evidence"]["url"], free["evidence"]["quote"]) == (
        "passed",
        PRICING_URL,
        QUOTE,
    )
    assert body["checks"][16]["reason"] == "Listed by hand, not in the Official MCP Registry"


def test_the_beat_verifies_quotes_by_a_task_the_embedded_worker_finds(settings):
    from uptimy.celery import app

    assert settings.CELERY_BEAT_SCHEDULE["verify-quotes"]["task"] == "monitors.verify_quotes"
    assert "monitors.verify_quotes" in app.tasks


class _Pricing(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<p>Free tier: 1,000 calls a month</p>" if self.path == "/pricing" else b""
        self.send_response(200 if body else 404)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def test_the_task_fetches_a_real_pricing_page_and_records_the_quote(mcp_check, settings):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pricing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/pricing"
        listed(mcp_check, timezone.now(), pricing_url=url)

        assert verify_quotes() == 1
    finally:
        server.shutdown()
        server.server_close()
    row = HealthcheckListing.objects.get()
    assert (row.quote_found_at is not None, row.quote_problem) == (True, "")
