"""The registry's entries and pages, read and validated: a bad entry is rejected alone, a bad page stops."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from directory.registry import (
    InvalidEntry,
    ListingStatus,
    RegistryError,
    Transport,
    parse_entry,
    parse_page,
    retry_after_seconds,
)
from tests.directory.support import page

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
OFFICIAL = "io.modelcontextprotocol.registry/official"


def entry(**server: Any) -> dict[str, Any]:
    """Return a valid registry entry, its server fields replaced (None removes one)."""
    item = copy.deepcopy(page("full-1")["servers"][0])
    for key, value in server.items():
        if value is None:
            item["server"].pop(key, None)
        else:
            item["server"][key] = value
    return item


def with_official(**official: Any) -> dict[str, Any]:
    item = entry()
    meta = item["_meta"]["io.modelcontextprotocol.registry/official"]
    for key, value in official.items():
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = value
    return item


def test_a_remote_entry_is_read_whole():
    parsed = parse_entry(entry())

    assert (parsed.name, parsed.version, parsed.is_latest) == ("com.example/weather", "2.1.0", True)
    assert parsed.website_url == "https://www.example.com/weather"
    assert (parsed.repository_url, parsed.repository_source) == (
        "https://github.com/example/weather-mcp",
        "github",
    )
    assert [(r.transport, r.url, r.headers_required, r.templated) for r in parsed.remotes] == [
        (Transport.STREAMABLE_HTTP, "https://mcp.example.com/mcp", False, False)
    ]
    assert parsed.status is ListingStatus.ACTIVE
    # Go's nanoseconds are cut to microseconds.
    assert parsed.updated_at == datetime(2026, 11, 20, 10, 0, 0, 123456, tzinfo=UTC)
    assert parsed.published_at == datetime(2026, 6, 2, 8, 14, 51, 123456, tzinfo=UTC)


def test_a_local_only_entry_keeps_its_packages():
    parsed = parse_entry(page("full-1")["servers"][2])

    assert parsed.local_only
    assert [(p.registry_type, p.identifier, p.version, p.transport) for p in parsed.packages] == [
        ("npm", "@modelcontextprotocol/server-filesystem", "1.0.2", "stdio")
    ]


def test_a_templated_remote_is_kept_and_marked():
    parsed = parse_entry(page("full-1")["servers"][3])

    assert [(r.url, r.templated) for r in parsed.remotes] == [("https://{tenant}.acme.com/mcp", True)]


def test_a_required_header_is_declared():
    parsed = parse_entry(page("full-1")["servers"][1])

    (remote,) = parsed.remotes
    assert (remote.transport, remote.headers_required, remote.header_names) == (
        Transport.SSE,
        True,
        ("Authorization", "X-Notes-Region"),
    )


def test_a_deprecated_entry_keeps_its_message():
    parsed = parse_entry(page("full-2")["servers"][0])

    assert (parsed.status, parsed.status_message) == (
        ListingStatus.DEPRECATED,
        "Moved to io.github.someone/new-tool",
    )


def test_an_empty_repository_is_no_repository():
    parsed = parse_entry(page("full-2")["servers"][4])

    assert (parsed.repository_url, parsed.repository_source) == (None, None)


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        ("not an object", "The entry is not an object"),
        ({"_meta": {}}, '"server" is not an object'),
        (entry(name=None), '"name" is missing or not a string'),
        (entry(name="weather"), "\"name\" 'weather' is not namespace/name"),
        (entry(name="com.example/we ather"), "is not namespace/name"),
        (entry(name="a/" + "b" * 199), '"name" is longer than 200 characters'),
        (entry(version=None), '"version" is missing or not a string'),
        (entry(version=" "), '"version" is empty'),
        (entry(version=2), '"version" is missing or not a string'),
        (entry(description=None), '"description" is not a string'),
        (entry(title=7), '"title" is not a string'),
        (entry(repository="https://github.com/x/y"), '"repository" is not an object'),
        (
            entry(repository={"url": "https://github.com/x/y", "source": 1}),
            '"repository.source" is not a string',
        ),
        (
            entry(repository={"url": "https://github.com/x/y", "source": "g" * 101}),
            "longer than 100 characters",
        ),
        (entry(description="nul \x00 inside"), "The entry holds a NUL character"),
        (
            entry(remotes=[{"type": "sse", "url": "https://x.example/sse", "headers": [{"name": "A\x00"}]}]),
            "NUL",
        ),
        (entry(remotes={}), '"remotes" is not a list'),
        (entry(remotes=["https://x.example/mcp"]), '"remotes[0]" is not an object'),
        (entry(remotes=[{"type": "stdio", "url": "https://x.example/mcp"}]), "is not streamable-http or sse"),
        (entry(remotes=[{"type": "sse"}]), '"remotes[0].url" is not an http(s) URL or a URL template'),
        (
            entry(remotes=[{"type": "sse", "url": "ftp://x.example/sse"}]),
            "is not an http(s) URL or a URL template",
        ),
        (
            entry(remotes=[{"type": "sse", "url": "https://x.example/ s"}]),
            "is not an http(s) URL or a URL template",
        ),
        (
            entry(remotes=[{"type": "sse", "url": "https://x.example/sse", "headers": {}}]),
            '"remotes[0].headers" is not a list',
        ),
        (
            entry(remotes=[{"type": "sse", "url": "https://x.example/sse", "headers": [{}]}]),
            '"remotes[0].headers[0]" has no name',
        ),
        (
            entry(
                remotes=[
                    {
                        "type": "sse",
                        "url": "https://x.example/sse",
                        "headers": [{"name": "A", "isRequired": "yes"}],
                    }
                ]
            ),
            '"remotes[0].headers[0].isRequired" is not a boolean',
        ),
        (entry(packages={}), '"packages" is not a list'),
        (entry(packages=[{"identifier": "x"}]), '"packages[0].registryType" is missing or not a string'),
        (entry(packages=[{"registryType": "npm"}]), '"packages[0].identifier" is missing or not a string'),
        (
            entry(packages=[{"registryType": "npm", "identifier": "x", "version": 1}]),
            '"packages[0].version" is not a string',
        ),
        ({"server": entry()["server"], "_meta": []}, '"_meta" is not an object'),
        ({"server": entry()["server"], "_meta": {OFFICIAL: "x"}}, f'"_meta.{OFFICIAL}" is not an object'),
        (with_official(status="gone"), "\"status\" 'gone' is not active, deprecated or deleted"),
        (with_official(status=1), '"status" is not a string'),
        (entry(websiteUrl=7), '"websiteUrl" is not a string'),
        (with_official(isLatest="true"), '"isLatest" is not a boolean'),
        (with_official(updatedAt="yesterday"), "\"updatedAt\" 'yesterday' is not an RFC 3339 timestamp"),
        (with_official(publishedAt=20260101), '"publishedAt" is not a string'),
        (with_official(statusMessage=["x"]), '"statusMessage" is not a string'),
    ],
)
def test_a_malformed_entry_is_rejected_naming_its_field(item, reason):
    with pytest.raises(InvalidEntry, match=None) as raised:
        parse_entry(item)

    assert reason in str(raised.value)


@pytest.mark.parametrize(
    ("item", "read"),
    [
        ({"server": entry()["server"]}, (ListingStatus.ACTIVE, None, None)),
        ({"server": entry()["server"], "_meta": {}}, (ListingStatus.ACTIVE, None, None)),
        (with_official(status=None), (ListingStatus.ACTIVE, True, "2026-11-20T10:00:00.123456+00:00")),
        (with_official(isLatest=None), (ListingStatus.ACTIVE, None, "2026-11-20T10:00:00.123456+00:00")),
        (with_official(updatedAt=None), (ListingStatus.ACTIVE, True, None)),
    ],
    ids=["no _meta", "no official metadata", "no status", "no isLatest", "no updatedAt"],
)
def test_an_entry_without_the_optional_official_metadata_is_read(item, read):
    parsed = parse_entry(item)

    updated = parsed.updated_at.isoformat() if parsed.updated_at else None
    assert (parsed.status, parsed.is_latest, updated) == read


@pytest.mark.parametrize(
    ("item", "left_out"),
    [
        (entry(websiteUrl="javascript:alert(1)"), ('"websiteUrl" is not an http(s) URL: left out',)),
        (entry(websiteUrl="https://"), ('"websiteUrl" is not an http(s) URL: left out',)),
        (
            entry(repository={"url": "git@github.com:x/y.git", "source": "github"}),
            ('"repository.url" is not an http(s) URL: left out',),
        ),
    ],
)
def test_a_link_the_directory_cannot_show_is_left_out_and_said(item, left_out):
    parsed = parse_entry(item)

    assert parsed.left_out == left_out
    assert (parsed.website_url is None) or (parsed.repository_url is None)
    assert parsed.repository_source is None or parsed.repository_url is not None


def test_a_page_rejects_bad_entries_and_keeps_the_rest():
    parsed = parse_page(page("full-2"))

    assert [e.name for e in parsed.entries] == [
        "io.github.someone/old-tool",
        "com.gone/server",
        "io.github.someone/new-tool",
    ]
    assert [(r.index, r.name) for r in parsed.rejected] == [
        (1, "io.github.someone/broken"),
        (2, "com.example/ftp-remote"),
    ]
    assert parsed.next_cursor is None


def test_a_page_hands_over_its_cursor():
    assert parse_page(page("full-1")).next_cursor == "com.acme/tenant-mcp:0.4.0"


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ([], "The page is not a JSON object"),
        ({}, 'The page has no "servers" list'),
        ({"servers": {}}, 'The page has no "servers" list'),
        ({"servers": [], "metadata": []}, 'The page\'s "metadata" is not an object'),
        ({"servers": [], "metadata": {"nextCursor": 3}}, 'The page\'s "metadata.nextCursor" is not a string'),
    ],
)
def test_a_malformed_page_is_an_error(payload, reason):
    with pytest.raises(RegistryError) as raised:
        parse_page(payload)

    assert str(raised.value) == reason


@pytest.mark.parametrize(
    ("payload", "cursor"),
    [
        ({"servers": []}, None),
        ({"servers": [], "metadata": None}, None),
        ({"servers": [], "metadata": {"nextCursor": ""}}, None),
        ({"servers": [], "metadata": {"nextCursor": "a/b:1"}}, "a/b:1"),
    ],
)
def test_an_empty_or_missing_cursor_ends_the_listing(payload, cursor):
    assert parse_page(payload).next_cursor == cursor


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("7", 7.0),
        ("0", 0.0),
        ("-3", 0.0),
        ("3600", 60.0),  # capped
        ("Sun, 29 Nov 2026 12:00:30 GMT", 30.0),
        ("Sun, 29 Nov 2026 11:00:00 GMT", 0.0),  # already past
        (None, 5.0),
        ("soon", 5.0),
        ("nan", 5.0),
    ],
)
def test_retry_after_is_read_and_capped(header, seconds):
    assert retry_after_seconds(header, now=NOW, cap=60.0) == seconds
