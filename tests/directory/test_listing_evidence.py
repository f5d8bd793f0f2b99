"""An imported listing as the scorecard's evidence: checks 17–22 from the registry's own fields."""

from __future__ import annotations

import pytest

from directory.models import Listing
from directory.selectors import listing_evidence, listing_scorecard_evidence
from directory.services import registry_sync
from monitors.scorecard import PUBLISHER_CHECKS, ListingSource, Verdict, scorecard
from tests.conftest import NOW
from tests.directory.support import page

pytestmark = pytest.mark.django_db

P, F, N = Verdict.PASSED, Verdict.FAILED, Verdict.NOT_MEASURED


@pytest.fixture
def imported(registry, client):
    registry.serve(page("full-1"), page("full-2"))
    registry_sync(client=client, full=True, now=NOW)


# Checks 17 to 22, worked out by hand from the recorded pages at NOW (2026-11-29).
@pytest.mark.parametrize(
    ("name", "verdicts"),
    [
        # www.example.com is example.com; updated 9 days ago; not an io.github namespace.
        ("com.example/weather", (P, P, P, N, P, N)),
        # io.github: no domain to match; the repository's owner Octocat is the login, case ignored.
        ("io.github.octocat/notes", (P, N, P, P, P, N)),
        # modelcontextprotocol.io links no website; last updated in February 2025, over 180 days.
        ("io.modelcontextprotocol/filesystem", (P, F, P, N, F, N)),
        # docs.acme.io is not acme.com; no repository.
        ("com.acme/tenant-mcp", (P, F, F, N, P, N)),
        # The registry's empty repository is no repository: 19 and 20 fail.
        ("io.github.someone/new-tool", (P, N, F, F, P, N)),
        ("io.github.someone/old-tool", (P, N, P, P, P, N)),
    ],
)
def test_the_publisher_checks_read_the_listing(imported, name, verdicts):
    listing = Listing.objects.get(name=name, is_latest=True)

    card = scorecard(listing_scorecard_evidence(listing), now=NOW)

    by_number = {result.number: result.verdict for result in card.results}
    assert tuple(by_number[number] for number in PUBLISHER_CHECKS) == verdicts


def test_a_local_only_listing_gets_the_publisher_checks_only(imported):
    listing = Listing.objects.get(name="io.modelcontextprotocol/filesystem")

    card = scorecard(listing_scorecard_evidence(listing), now=NOW)

    assert (card.remote, card.total) == (False, 6)


def test_a_remote_listing_gets_all_22_checks_at_its_first_remote(imported):
    listing = Listing.objects.get(name="com.acme/tenant-mcp")

    evidence = listing_scorecard_evidence(listing)

    assert evidence.endpoint_url == "https://{tenant}.acme.com/mcp"
    assert scorecard(evidence, now=NOW).total == 22


def test_the_evidence_is_the_registrys_observed_at_the_sync(imported):
    listing = Listing.objects.get(name="com.example/weather")

    evidence = listing_evidence(listing)

    assert evidence.source is ListingSource.REGISTRY
    assert (evidence.name, evidence.observed_at, evidence.updated_at) == (
        "com.example/weather",
        NOW,
        listing.updated_at,
    )
    assert (evidence.website_url, evidence.repository_url) == (
        "https://www.example.com/weather",
        "https://github.com/example/weather-mcp",
    )


@pytest.mark.parametrize(
    ("name", "declares"),
    [("io.github.octocat/notes", True), ("com.example/weather", False), ("com.acme/tenant-mcp", False)],
)
def test_a_required_header_declares_credentials(imported, name, declares):
    listing = Listing.objects.get(name=name)

    assert listing_evidence(listing).declares_credentials is declares


def test_without_a_licence_lookup_check_22_is_not_measured(imported):
    listing = Listing.objects.get(name="com.example/weather")

    (licence,) = [
        r for r in scorecard(listing_scorecard_evidence(listing), now=NOW).results if r.number == 22
    ]

    assert (licence.verdict, licence.reason) == (N, "The licence lookup has not been done")
