"""The stored scorecard: one row per shown listing, its ranking figures, written in bulk by scorecards_recompute."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from directory.models import Listing, ListingProbeState, ListingScorecard, RepositoryLicence
from directory.selectors import listing_scorecard_evidence, listings_scorecard_evidence, with_probe_evidence
from directory.services import registry_sync, scorecard_row, scorecards_recompute
from monitors.scorecard import (
    Attempt,
    AttemptCounts,
    Evidence,
    LatencyWindow,
    Verdict,
    scorecard,
)
from tests.conftest import NOW
from tests.directory.factories import make_listing
from tests.directory.support import page

pytestmark = pytest.mark.django_db


@pytest.fixture
def imported(registry, client):
    registry.serve(page("full-1"), page("full-2"))
    registry_sync(client=client, full=True, now=NOW)


def test_every_shown_listing_gets_one_scorecard(imported):
    written = scorecards_recompute(now=NOW)

    shown = Listing.objects.filter(is_latest=True).exclude(status=Listing.Status.DELETED)
    assert written == shown.count()
    assert set(ListingScorecard.objects.values_list("listing_id", flat=True)) == set(
        shown.values_list("pk", flat=True)
    )


def test_the_stored_results_are_the_scorecards_own(imported):
    scorecards_recompute(now=NOW)
    listing = Listing.objects.get(name="com.example/weather", is_latest=True)

    stored = ListingScorecard.objects.get(listing=listing)
    card = scorecard(listing_scorecard_evidence(listing), now=NOW)

    assert (stored.passed, stored.total, stored.remote) == (card.passed, 22, True)
    assert [(r["number"], r["name"], r["verdict"], r["reason"]) for r in stored.results] == [
        (r.number, r.name, r.verdict.value, r.reason) for r in card.results
    ]


@pytest.mark.parametrize(
    ("name", "remote", "total"),
    [
        ("com.example/weather", True, 22),
        ("io.modelcontextprotocol/filesystem", False, 6),  # local-only: the publisher checks
    ],
)
def test_a_local_only_listing_is_stored_apart_with_its_six_checks(imported, name, remote, total):
    scorecards_recompute(now=NOW)

    stored = ListingScorecard.objects.get(listing__name=name, listing__is_latest=True)

    assert (stored.remote, stored.total, len(stored.results)) == (remote, total, total)


def test_a_listing_deleted_since_loses_its_scorecard():
    gone = make_listing("com.gone/server")
    scorecards_recompute(now=NOW)
    Listing.objects.filter(pk=gone.pk).update(status=Listing.Status.DELETED)

    scorecards_recompute(now=NOW)

    assert not ListingScorecard.objects.filter(listing=gone).exists()


def test_a_replaced_version_loses_its_scorecard_to_the_new_one():
    old = make_listing("com.example/app", version="1.0.0")
    scorecards_recompute(now=NOW)
    Listing.objects.filter(pk=old.pk).update(is_latest=False)
    new = make_listing("com.example/app", version="2.0.0")

    scorecards_recompute(now=NOW)

    assert list(ListingScorecard.objects.values_list("listing_id", flat=True)) == [new.pk]


def test_a_second_recompute_updates_in_place(imported):
    scorecards_recompute(now=NOW)
    later = NOW + timedelta(days=400)

    scorecards_recompute(now=later)

    assert (
        ListingScorecard.objects.count()
        == Listing.objects.filter(is_latest=True).exclude(status="deleted").count()
    )
    assert set(ListingScorecard.objects.values_list("computed_at", flat=True)) == {later}
    # 400 days on, no listing is recently updated (21).
    weather = ListingScorecard.objects.get(listing__name="com.example/weather", listing__is_latest=True)
    assert next(r for r in weather.results if r["number"] == 21)["verdict"] == "failed"


def test_the_licence_lookup_reaches_the_stored_scorecard(imported):
    RepositoryLicence.objects.create(
        owner="example",
        repo="weather-mcp",
        status="done",
        spdx_id="MIT",
        osi_approved=True,
        list_version="3.25",
        looked_up_at=NOW,
    )

    scorecards_recompute(now=NOW)

    weather = ListingScorecard.objects.get(listing__name="com.example/weather", listing__is_latest=True)
    licence = next(r for r in weather.results if r["number"] == 22)
    assert (licence["verdict"], licence["evidence"]["spdx_id"]) == ("passed", "MIT")


def test_the_bulk_evidence_is_each_listings_own(imported):
    RepositoryLicence.objects.create(
        owner="octocat", repo="notes-mcp", status="failed", reason="HTTP 500", looked_up_at=NOW
    )
    listings = list(Listing.objects.filter(is_latest=True).prefetch_related("remotes"))

    bulk = listings_scorecard_evidence(listings, now=NOW)

    assert bulk == {listing.pk: listing_scorecard_evidence(listing, now=NOW) for listing in listings}


def test_the_bulk_evidence_is_one_query_for_any_number_of_listings(imported):
    for n in range(30):
        make_listing(f"io.github.user{n}/server")
    listings = list(Listing.objects.filter(is_latest=True).prefetch_related("remotes"))

    with CaptureQueriesContext(connection) as queries:
        listings_scorecard_evidence(listings, now=NOW)

    assert len(queries) == 1 + 6  # the licences; directory probing's evidence (probe_evidence)


@pytest.mark.parametrize("listings", [10, 25])
def test_recompute_takes_a_fixed_number_of_queries_per_chunk(listings):
    for n in range(listings):
        make_listing(f"io.github.user{n}/server")
    Listing.objects.update(repository_url="https://github.com/user/server")

    with CaptureQueriesContext(connection) as queries:
        scorecards_recompute(now=NOW, chunk_size=10)

    statements = [q["sql"] for q in queries if "SAVEPOINT" not in q["sql"]]
    chunks = -(-listings // 10)
    # The ids; per chunk its listings, their remotes, their licences, probe_evidence's six and one
    # upsert; the clean-up.
    assert len(statements) == 1 + 10 * chunks + 1


def test_probe_evidence_is_merged_with_the_publishers():
    listing = make_listing("com.example/app")
    listing = Listing.objects.prefetch_related("remotes").get(pk=listing.pk)
    publisher = listings_scorecard_evidence([listing], now=NOW)
    probed = {
        listing.pk: Evidence(
            endpoint_url="https://com.example.app/mcp",
            latest=Attempt(at=NOW, tools_listed=True, protocol="2025-06-18", server_name="app", tool_count=3),
        )
    }

    merged = with_probe_evidence(publisher, probed)[listing.pk]

    assert merged.latest == probed[listing.pk].latest
    assert (merged.listing, merged.licence) == (publisher[listing.pk].listing, publisher[listing.pk].licence)


def test_a_listing_probing_has_nothing_for_keeps_its_publisher_evidence():
    listing = make_listing("com.example/app")
    listing = Listing.objects.prefetch_related("remotes").get(pk=listing.pk)
    publisher = listings_scorecard_evidence([listing], now=NOW)

    assert with_probe_evidence(publisher, {}) == publisher


def test_the_ranking_figures_come_from_the_evidence():
    evidence = Evidence(
        endpoint_url="https://a.example/mcp",
        latest=Attempt(at=NOW, tools_listed=True, protocol="2025-06-18", server_name="a", tool_count=1),
        latency_7d=LatencyWindow.of(
            [200.0, 300.0, 400.0, 500.0, 900.0], observed_at=NOW - timedelta(hours=1)
        ),
        attempts_30d=AttemptCounts(attempts=200, successes=199, observed_at=NOW),
    )
    card = scorecard(evidence, now=NOW)

    row = scorecard_row(1, card, evidence, now=NOW)

    assert (row.core_passed, row.success_ratio, row.p50_ms, row.observed_at) == (4, 199 / 200, 400.0, NOW)
    assert row.passed == card.passed


def test_without_attempts_the_success_and_latency_are_unknown():
    evidence = Evidence(endpoint_url="https://a.example/mcp")

    row = scorecard_row(1, scorecard(evidence, now=NOW), evidence, now=NOW)

    assert (row.success_ratio, row.p50_ms, row.core_passed) == (None, None, 0)
    assert all(r["verdict"] == Verdict.NOT_MEASURED for r in row.results[:4])


def test_the_command_recomputes_and_says_how_many(imported, capsys):
    call_command("recomputescorecards")

    assert capsys.readouterr().out.startswith(f"{ListingScorecard.objects.count()} scorecards recomputed in ")


def test_the_periodic_task_recomputes():
    from directory.tasks import recompute_scorecards

    make_listing("com.example/app")

    assert recompute_scorecards() == 1
    assert ListingScorecard.objects.count() == 1


def test_the_beat_recomputes_the_scorecards():
    from django.conf import settings

    assert settings.CELERY_BEAT_SCHEDULE["recompute-scorecards"]["task"] == "directory.recompute_scorecards"


def test_a_sync_that_deletes_a_listing_removes_its_scorecard_at_once(imported, registry, client):
    scorecards_recompute(now=NOW)
    registry.serve(page("incremental"))

    registry_sync(client=client, full=False, now=NOW)

    assert not ListingScorecard.objects.filter(listing__name="com.acme/tenant-mcp").exists()


def test_a_sync_that_brings_a_new_version_removes_the_old_ones_scorecard(imported, registry, client):
    scorecards_recompute(now=NOW)
    registry.serve(page("incremental"))

    registry_sync(client=client, full=False, now=NOW)

    assert not ListingScorecard.objects.filter(listing__name="com.example/weather").exists()
    scorecards_recompute(now=NOW)
    assert ListingScorecard.objects.get(listing__name="com.example/weather").listing.version == "2.2.0"


def test_directory_probings_latest_attempt_reaches_the_stored_scorecard():
    listing = make_listing("com.example/app")
    ListingProbeState.objects.create(
        listing=listing,
        next_probe_at=NOW,
        url="https://com.example.app/mcp",
        probed_at=NOW - timedelta(minutes=5),
        tool_count=3,
        total_ms=420.0,
        protocol="2025-06-18",
        server_name="app",
    )

    scorecards_recompute(now=NOW)

    stored = ListingScorecard.objects.get(listing=listing)
    assert [r["verdict"] for r in stored.results[:4]] == ["passed"] * 4
    assert (stored.core_passed, stored.observed_at) == (4, NOW)
