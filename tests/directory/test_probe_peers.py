"""Directory probing end to end: imported listings pointed at the official SDK's servers on loopback, two rounds, the scorecard.

The listings come from the recorded registry pages (tests/directory/fixtures); their remotes are
moved to loopback peers (tests/peers/servers/sdk_servers.py), so every probe is the real engine
against a real server. The expected verdicts of checks 1–16 are worked out by hand below.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.utils import timezone

from directory import sync
from directory.models import Listing, ListingProbeState, ListingRemote
from directory.selectors import listing_scorecard_evidence
from directory.services import registry_sync
from directory.sync import probe_listings
from monitors.scorecard import Verdict, scorecard
from tests.conftest import NOW
from tests.directory.probe_support import sdk_servers
from tests.directory.support import page
from tests.peers.peer_support import free_port

pytestmark = pytest.mark.django_db

P, F, N = Verdict.PASSED, Verdict.FAILED, Verdict.NOT_MEASURED


@pytest.fixture(scope="module")
def sdk() -> Iterator[dict[str, str]]:
    """Serve the SDK's streamable HTTP, legacy SSE and OAuth-protected servers; yield their base URLs."""
    with sdk_servers("stateful", "legacy", "oauth-root", "as-root") as urls:
        yield urls


@pytest.fixture
def directory(registry, client, sdk, settings, monkeypatch) -> dict[str, Listing]:
    """Import the recorded pages and point the remotes at the peers (and one at a port nobody listens on)."""
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    monkeypatch.setattr(sync, "_robots", None)
    registry.serve(page("full-1"), page("full-2"))
    registry_sync(client=client, full=True, now=NOW)
    remotes = {
        "com.example/weather": sdk["stateful"] + "/mcp",
        "io.github.octocat/notes": sdk["legacy"] + "/sse",
        "io.github.someone/old-tool": sdk["oauth-root"] + "/mcp",
        "io.github.someone/new-tool": f"http://127.0.0.1:{free_port()}/mcp",
        # Deleted: never probed, though its server answers.
        "com.gone/server": sdk["stateful"] + "/mcp",
    }
    for name, url in remotes.items():
        ListingRemote.objects.filter(listing__name=name).update(url=url)
    return {listing.name: listing for listing in Listing.objects.filter(is_latest=True)}


def two_rounds() -> None:
    probe_listings()
    # Every listing's next slot is within the interval (30 minutes) after the first round.
    probe_listings(now=timezone.now() + timedelta(minutes=31))


def verdicts(listing: Listing) -> dict[int, Verdict]:
    now = timezone.now()
    card = scorecard(listing_scorecard_evidence(listing, now=now), now=now)
    return {result.number: result.verdict for result in card.results if result.number <= 16}


# Worked out by hand. The SDK servers list search_docs, get_status and echo, each readOnlyHint,
# descriptions of 31, 26 and 19 characters, inputs q, text and times without descriptions; all
# served over plain HTTP on loopback. Two probes: too few samples for checks 6–8; no pricing
# evidence at all, so free tier (12) is not measured.
SDK_TOOLS = {13: F, 14: P, 15: F, 16: P}
EXPECTED = {
    # Streamable HTTP, open.
    "com.example/weather": {
        **{1: P, 2: P, 3: P, 4: P, 5: F, 6: N, 7: N, 8: N, 9: P, 10: P, 11: N, 12: N},
        **SDK_TOOLS,
    },
    # Legacy SSE, open, but the listing declares a required Authorization header: 10 fails.
    "io.github.octocat/notes": {
        **{1: P, 2: P, 3: P, 4: P, 5: F, 6: N, 7: N, 8: N, 9: P, 10: F, 11: N, 12: N},
        **SDK_TOOLS,
    },
    # 401 with RFC 9728 metadata: 1–4 not measured, no attempts counted, open access fails,
    # standard auth passes; no tool list.
    "io.github.someone/old-tool": {
        **{1: N, 2: N, 3: N, 4: N, 5: F, 6: N, 7: N, 8: N, 9: N, 10: F, 11: P, 12: N},
        **{13: N, 14: N, 15: N, 16: N},
    },
    # Nobody listening: the attempt failed, agreed no version and listed nothing.
    "io.github.someone/new-tool": {
        **{1: F, 2: F, 3: F, 4: N, 5: F, 6: N, 7: N, 8: N, 9: N, 10: N, 11: N, 12: N},
        **{13: N, 14: N, 15: N, 16: N},
    },
}


def test_two_rounds_give_each_listing_the_scorecard_worked_out_by_hand(directory):
    two_rounds()

    assert {name: verdicts(directory[name]) for name in EXPECTED} == EXPECTED


def test_an_sse_listing_is_probed_over_legacy_sse(directory):
    probe_listings()

    state = ListingProbeState.objects.get(listing=directory["io.github.octocat/notes"])
    assert (state.transport, state.tool_count, state.server_name) == ("sse", 3, "sdk-legacy-sse")


def test_a_deleted_templated_or_local_only_listing_is_not_probed(directory):
    two_rounds()

    probed = set(
        ListingProbeState.objects.filter(probed_at__isnull=False).values_list("listing__name", flat=True)
    )
    assert probed == set(EXPECTED)
    for name in ("com.gone/server", "com.acme/tenant-mcp", "io.modelcontextprotocol/filesystem"):
        assert name not in probed


def test_a_local_only_listing_still_gets_the_publisher_checks_only(directory):
    two_rounds()

    card = scorecard(
        listing_scorecard_evidence(directory["io.modelcontextprotocol/filesystem"]), now=timezone.now()
    )

    assert [result.number for result in card.results] == [17, 18, 19, 20, 21, 22]
