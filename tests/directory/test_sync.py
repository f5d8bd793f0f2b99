"""A sync against a loopback registry serving recorded pages: full, incremental, deleted, deprecated, 429, malformed."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.db import IntegrityError

from directory import services
from directory.models import (
    Listing,
    ListingProbeHour,
    ListingProbeState,
    ListingToolChange,
    ListingToolList,
    RegistrySync,
)
from directory.registry import RegistryClient
from directory.selectors import visible_listings
from directory.services import registry_sync
from tests.conftest import NOW
from tests.directory.support import Answer, page

pytestmark = pytest.mark.django_db

LAST_UPDATE = datetime(2026, 11, 20, 10, 0, 0, 123456, tzinfo=UTC)


def full_sync(registry, client):
    registry.serve(page("full-1"), page("full-2"))
    return registry_sync(client=client, full=True, now=NOW)


def test_a_full_sync_asks_for_latest_versions_page_by_page(registry, client):
    full_sync(registry, client)

    first, second = registry.requests
    assert first.path == second.path == "/v0.1/servers"
    assert first.query == {"limit": "100", "include_deleted": "true", "version": "latest"}
    assert second.query == {**first.query, "cursor": "com.acme/tenant-mcp:0.4.0"}


def test_every_request_names_the_client(registry, client):
    full_sync(registry, client)

    assert {request.user_agent for request in registry.requests} == {"Uptimy-test (directory import)"}


def test_a_full_sync_stores_every_valid_entry_and_reports_the_rest(registry, client):
    report = full_sync(registry, client)

    assert (report.ok, report.full, report.pages, report.stored) == (True, True, 2, 7)
    assert report.rejected == [
        'io.github.someone/broken (page 2): "version" is missing or not a string',
        'com.example/ftp-remote (page 2): "remotes[0].url" is not an http(s) URL or a URL template',
    ]
    assert Listing.objects.count() == 7


def test_the_directory_shows_deprecated_listings_and_hides_deleted_ones(registry, client):
    full_sync(registry, client)

    assert [listing.name for listing in visible_listings()] == [
        "com.acme/tenant-mcp",
        "com.example/weather",
        "io.github.octocat/notes",
        "io.github.someone/new-tool",
        "io.github.someone/old-tool",
        "io.modelcontextprotocol/filesystem",
    ]
    deprecated = Listing.objects.get(name="io.github.someone/old-tool")
    assert (deprecated.status, deprecated.status_message) == (
        "deprecated",
        "Moved to io.github.someone/new-tool",
    )
    assert Listing.objects.get(name="com.gone/server").status == "deleted"


def test_a_listing_keeps_its_remotes_in_order(registry, client):
    full_sync(registry, client)

    notes = Listing.objects.get(name="io.github.octocat/notes")
    tenant = Listing.objects.get(name="com.acme/tenant-mcp")
    assert [(r.transport, r.url, r.headers_required, r.templated) for r in notes.remotes.all()] == [
        ("sse", "https://notes.octocat.dev/sse", True, False)
    ]
    assert [(r.url, r.templated) for r in tenant.remotes.all()] == [("https://{tenant}.acme.com/mcp", True)]


def test_a_local_only_listing_stores_its_packages(registry, client):
    full_sync(registry, client)

    filesystem = Listing.objects.get(name="io.modelcontextprotocol/filesystem")
    assert filesystem.local_only
    assert filesystem.packages == [
        {
            "registry_type": "npm",
            "identifier": "@modelcontextprotocol/server-filesystem",
            "version": "1.0.2",
            "transport": "stdio",
        }
    ]


def test_a_listing_keeps_its_raw_entry(registry, client):
    full_sync(registry, client)

    weather = Listing.objects.get(name="com.example/weather")
    assert weather.raw == page("full-1")["servers"][0]


def test_an_oversized_raw_entry_is_not_kept(registry, client):
    big = page("full-1")
    big["servers"] = big["servers"][:1]
    big["servers"][0]["server"]["_meta"] = {"com.example": {"blob": "x" * 70_000}}
    big["metadata"] = {}
    registry.serve(big)

    registry_sync(client=client, full=True, now=NOW)

    assert Listing.objects.get().raw == {
        "truncated": True,
        "bytes": len(json.dumps(big["servers"][0], separators=(",", ":"))),
    }


def test_the_high_water_mark_is_the_latest_update_seen(registry, client):
    full_sync(registry, client)

    state = RegistrySync.objects.get(base_url=registry.url)
    assert (state.updated_since, state.last_full_at, state.last_run_at, state.last_error) == (
        LAST_UPDATE,
        NOW,
        NOW,
        "",
    )


def test_an_incremental_sync_asks_since_the_high_water_mark(registry, client):
    full_sync(registry, client)
    registry.serve(page("incremental"))

    report = registry_sync(client=client, full=False, now=NOW)

    assert report.full is False
    assert registry.requests[-1].query == {
        "limit": "100",
        "include_deleted": "true",
        "updated_since": "2026-11-20T10:00:00.123456Z",
    }
    assert RegistrySync.objects.get().updated_since == datetime(2026, 11, 26, tzinfo=UTC)


def test_an_incremental_sync_moves_latest_to_the_new_version(registry, client):
    full_sync(registry, client)
    registry.serve(page("incremental"))

    registry_sync(client=client, full=False, now=NOW)

    versions = Listing.objects.filter(name="com.example/weather").order_by("version")
    assert [(v.version, v.is_latest) for v in versions] == [("2.1.0", False), ("2.2.0", True)]
    latest = visible_listings().get(name="com.example/weather")
    assert [r.url for r in latest.remotes.all()] == ["https://mcp.example.com/v2/mcp"]


def test_a_deletion_seen_incrementally_hides_the_listing(registry, client):
    full_sync(registry, client)
    registry.serve(page("incremental"))

    registry_sync(client=client, full=False, now=NOW)

    assert not visible_listings().filter(name="com.acme/tenant-mcp").exists()
    assert Listing.objects.get(name="com.acme/tenant-mcp").status == "deleted"


def test_an_incremental_sync_without_a_mark_is_a_full_one(registry, client):
    registry.serve(page("full-1"), page("full-2"))

    report = registry_sync(client=client, full=False, now=NOW)

    assert report.full is True
    assert registry.requests[0].query["version"] == "latest"


def test_the_same_pages_twice_store_the_same_listings(registry, client):
    full_sync(registry, client)
    full_sync(registry, client)

    assert Listing.objects.count() == 7
    assert Listing.objects.get(name="io.github.octocat/notes").remotes.count() == 1


def test_a_429_is_waited_out_as_retry_after_says(registry, client, sleeps):
    registry.serve(Answer(429, b"slow down", (("Retry-After", "7"),)), page("full-1"), page("full-2"))

    report = registry_sync(client=client, full=True, now=NOW)

    assert report.ok
    assert sleeps.waits == [7.0]
    assert registry.requests[0].query == registry.requests[1].query


def test_a_long_retry_after_is_capped(registry, client, sleeps):
    registry.serve(Answer(429, b"", (("Retry-After", "86400"),)), page("full-1"), page("full-2"))

    registry_sync(client=client, full=True, now=NOW)

    assert sleeps.waits == [60.0]


def test_endless_429s_stop_the_sync_and_keep_the_mark(registry, client, sleeps):
    full_sync(registry, client)
    registry.serve(*[Answer(429, b"", (("Retry-After", "1"),))] * 6)

    report = registry_sync(client=client, full=False, now=NOW)

    assert report.error == "Still rate-limited (HTTP 429) after 5 waits"
    assert sleeps.waits == [1.0] * 5
    state = RegistrySync.objects.get()
    assert (state.updated_since, state.last_error) == (LAST_UPDATE, report.error)


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (Answer(500, b"oops"), "The registry answered HTTP 500"),
        (Answer(301, b"", (("Location", "https://elsewhere.example/"),)), "The registry answered HTTP 301"),
        (Answer(200, b"<html>"), "The page is not JSON"),
        (Answer.json({"servers": {}}), 'The page has no "servers" list'),
    ],
)
def test_a_bad_second_page_keeps_the_first_and_the_mark(registry, client, answer, error):
    registry.serve(page("full-1"), answer)

    report = registry_sync(client=client, full=True, now=NOW)

    assert (report.error, report.pages, report.stored) == (error, 1, 4)
    assert Listing.objects.count() == 4
    state = RegistrySync.objects.get()
    assert (state.updated_since, state.last_full_at, state.last_error) == (None, None, error)


def test_a_failed_sync_loses_no_stored_listing(registry, client):
    full_sync(registry, client)
    registry.serve(Answer(503, b""))

    registry_sync(client=client, full=True, now=NOW)

    assert Listing.objects.count() == 7


def test_a_repeated_cursor_stops_the_sync(registry, client):
    registry.serve(page("full-1"), page("full-1"))

    report = registry_sync(client=client, full=True, now=NOW)

    assert report.error == "The registry repeated the cursor 'com.acme/tenant-mcp:0.4.0'"
    assert len(registry.requests) == 2


def test_an_oversized_page_is_refused(registry):
    registry.serve(Answer.json(page("full-1")))
    small = RegistryClient(base_url=registry.url, user_agent="t", max_page_bytes=1_000)

    report = registry_sync(client=small, full=True, now=NOW)

    assert report.error == "The page is larger than 1000 bytes"


def test_a_page_nested_200_000_deep_is_refused_and_keeps_the_mark(registry, client):
    full_sync(registry, client)
    mark = RegistrySync.objects.get().updated_since
    registry.serve(Answer(200, b"[" * 200_000 + b"]" * 200_000, (("Content-Type", "application/json"),)))

    report = registry_sync(client=client, full=False, now=NOW)

    assert report.error == "The page nests deeper than 64 levels"
    assert RegistrySync.objects.get().updated_since == mark


def test_an_unreachable_registry_is_an_error():
    closed = RegistryClient(base_url="http://127.0.0.1:9", user_agent="t", timeout=2.0)

    report = registry_sync(client=closed, full=True, now=NOW)

    assert (report.error or "").startswith("The registry could not be reached")


def test_an_entry_the_database_refuses_is_skipped_alone(registry, client, monkeypatch):
    store = services._listing_store

    def refuse_notes(entry, *, now, is_latest):
        if entry.name == "io.github.octocat/notes":
            raise IntegrityError("value too long")
        store(entry, now=now, is_latest=is_latest)

    monkeypatch.setattr(services, "_listing_store", refuse_notes)

    report = full_sync(registry, client)

    assert report.ok
    assert report.stored == 6
    assert "io.github.octocat/notes 1.0.0: the database refused it (IntegrityError)" in report.rejected
    assert not Listing.objects.filter(name="io.github.octocat/notes").exists()


def probe_history_of(listing: Listing, *, due: datetime) -> None:
    """Give ``listing`` a probed past: its state, an hour's counts, its tool list and a tool change."""
    ListingProbeState.objects.create(listing=listing, next_probe_at=due, probed_at=NOW, tool_count=3)
    ListingProbeHour.objects.create(listing=listing, hour=NOW.replace(minute=0), attempts=2, successes=2)
    ListingToolList.objects.create(listing=listing, digest="d", tools=[], tool_count=3, current_since=NOW)
    ListingToolChange.objects.create(listing=listing, at=NOW, removed=["forecast"], removed_count=1)


def test_a_new_version_takes_over_the_servers_probe_history(registry, client):
    full_sync(registry, client)
    old = Listing.objects.get(name="com.example/weather", version="2.1.0")
    probe_history_of(old, due=NOW + timedelta(minutes=20))
    registry.serve(page("incremental"))

    registry_sync(client=client, full=False, now=NOW)

    new = Listing.objects.get(name="com.example/weather", version="2.2.0")
    assert ListingProbeState.objects.get(listing=new).tool_count == 3
    assert ListingProbeState.objects.get(listing=new).next_probe_at == NOW  # its remote may have moved
    assert ListingProbeHour.objects.get(listing=new).attempts == 2
    assert ListingToolList.objects.get(listing=new).tool_count == 3
    assert ListingToolChange.objects.get(listing=new).removed == ["forecast"]
    assert not ListingProbeState.objects.filter(listing=old).exists()


def test_a_version_probed_before_keeps_its_own_history(registry, client):
    full_sync(registry, client)
    registry.serve(page("incremental"))
    registry_sync(client=client, full=False, now=NOW)
    old = Listing.objects.get(name="com.example/weather", version="2.1.0")
    new = Listing.objects.get(name="com.example/weather", version="2.2.0")
    probe_history_of(old, due=NOW)
    ListingProbeState.objects.create(listing=new, next_probe_at=NOW, probed_at=NOW, tool_count=7)

    services._probe_history_follow(to=new, now=NOW)

    assert ListingProbeState.objects.get(listing=new).tool_count == 7
    assert ListingProbeHour.objects.filter(listing=old).count() == 1
