"""The directory from outside: a loopback registry, the official SDK's servers, a real HTTP client on the live pages.

``manage.py syncregistry`` imports a page the registry's schema allows (entries without the
optional official metadata), the probe rounds reach the SDK's servers, the scorecards are
recomputed, and httpx reads the server pages and the JSON API from a live server.
"""

from __future__ import annotations

import copy
import io
import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from django.core.management import call_command
from django.utils import timezone

from directory import sync
from directory.services import scorecards_recompute
from directory.sync import probe_listings
from tests.directory.probe_support import sdk_servers
from tests.directory.support import page

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

OFFICIAL = "io.modelcontextprotocol.registry/official"
# p95 needs 20 successful samples in 7 days (check 7).
ROUNDS = 20


@pytest.fixture(scope="module")
def sdk() -> Iterator[dict[str, str]]:
    """Serve an open SDK server and one behind a bare 401 (no protected-resource metadata anywhere)."""
    with sdk_servers("stateful", "oauth-bare") as urls:
        yield urls


def entry(name: str, url: str, **official: Any) -> dict[str, Any]:
    """Return a recorded entry renamed and pointed at ``url``, its official metadata replaced (None removes a field)."""
    item = copy.deepcopy(page("full-1")["servers"][0])
    item["server"]["name"] = name
    item["server"]["remotes"] = [{"type": "streamable-http", "url": url}]
    meta = item["_meta"][OFFICIAL]
    for key, value in official.items():
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = value
    return item


@pytest.fixture
def synced(registry, sdk, settings, monkeypatch) -> str:
    """Sync a page of schema-valid entries with ``manage.py syncregistry``; return what the command printed."""
    settings.UPTIMY_MCP_REGISTRY_URL = registry.url
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    monkeypatch.setattr(sync, "_robots", None)
    bare = entry("io.github.someone/bare-auth", sdk["oauth-bare"] + "/mcp")
    del bare["_meta"]  # the schema requires only "server"
    unlinked = entry("com.example/odd-link", sdk["stateful"] + "/mcp")
    unlinked["server"]["websiteUrl"] = "javascript:alert(1)"  # a URI, but no link to show
    unshowable = entry("com.example/nul", sdk["stateful"] + "/mcp")
    unshowable["server"]["description"] = "a NUL \x00 inside"
    registry.serve(
        {
            "servers": [
                entry("com.example/weather", sdk["stateful"] + "/mcp", updatedAt=None),
                bare,
                unlinked,
                unshowable,
            ],
            "metadata": {"count": 4},
        }
    )
    out = io.StringIO()
    call_command("syncregistry", "--full", stdout=out)
    return out.getvalue()


def probe_rounds(rounds: int) -> None:
    """Probe every listing ``rounds`` times (each round half an hour after the last), then recompute the scorecards."""
    start = timezone.now()
    for round_number in range(rounds):
        report = probe_listings(now=start + timedelta(minutes=31 * round_number))
        assert report.probed == 3, report
    scorecards_recompute(now=timezone.now())


@pytest.fixture
def probed(synced) -> None:
    probe_rounds(1)


def checks_of(answer: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {check["number"]: check for check in answer["checks"]}


def row_of(html: str, number: int) -> str:
    """Return the server page's table row of check ``number``."""
    rows = re.findall(r"<tr><td>(\d+)</td>(.*?)</tr>", html, re.S)
    return next(row for n, row in rows if int(n) == number)


def test_the_sync_stores_entries_without_official_metadata_and_says_what_it_refused(synced):
    lines = synced.splitlines()

    assert lines[0] == "full sync: 1 pages, 3 listings stored, 1 skipped"
    assert lines[1] == "skipped com.example/nul (page 1): The entry holds a NUL character"
    assert lines[2] == (
        'stored without a field: com.example/odd-link 2.1.0: "websiteUrl" is not an http(s) URL: left out'
    )


def test_a_listing_without_updated_at_has_a_page_where_recently_updated_fails(probed, live_server):
    response = httpx.get(f"{live_server.url}/directory/com.example/weather/")

    assert response.status_code == 200
    assert "Not given by the registry" in response.text
    answer = httpx.get(f"{live_server.url}/api/v1/directory/servers/com.example/weather/").json()
    assert answer["updated_at"] is None
    assert (checks_of(answer)[21]["verdict"], checks_of(answer)[21]["reason"]) == (
        "failed",
        "The listing has no update date",
    )


def test_a_listing_without_pricing_evidence_leaves_free_tier_not_measured(probed, live_server):
    answer = httpx.get(f"{live_server.url}/api/v1/directory/servers/com.example/weather/").json()
    html = httpx.get(f"{live_server.url}/directory/com.example/weather/").text

    assert checks_of(answer)[12]["verdict"] == "not_measured"
    assert "Not measured" in row_of(html, 12)


def test_a_401_without_protected_resource_metadata_fails_standard_auth(probed, live_server):
    answer = httpx.get(f"{live_server.url}/api/v1/directory/servers/io.github.someone/bare-auth/").json()
    checks = checks_of(answer)

    assert checks[11]["verdict"] == "failed"
    assert checks[11]["evidence"]["http_status"] == 401
    assert {number: checks[number]["verdict"] for number in (1, 2, 3, 4)} == dict.fromkeys(
        (1, 2, 3, 4), "not_measured"
    )


def test_the_median_and_p95_are_shown_and_stored_for_ranking(synced, live_server):
    probe_rounds(ROUNDS)

    answer = httpx.get(f"{live_server.url}/api/v1/directory/servers/com.example/weather/").json()
    checks = checks_of(answer)
    html = httpx.get(f"{live_server.url}/directory/com.example/weather/").text

    fast, consistent = checks[6], checks[7]
    assert (fast["verdict"], consistent["verdict"]) == ("passed", "passed")  # loopback: well under 1 s
    assert (fast["evidence"]["samples"], consistent["evidence"]["samples"]) == (ROUNDS, ROUNDS)
    p50, p95 = fast["evidence"]["p50_ms"], consistent["evidence"]["p95_ms"]
    assert 0 < p50 <= p95 <= 1000
    assert (answer["p50_ms"], answer["p95_ms"]) == (p50, p95)
    assert f"<code>p50_ms</code>: {p50}" in row_of(html, 6)
    listed = httpx.get(f"{live_server.url}/api/v1/directory/servers/").json()["results"]
    assert {item["name"]: (item["p50_ms"], item["p95_ms"]) for item in listed}["com.example/weather"] == (
        p50,
        p95,
    )
