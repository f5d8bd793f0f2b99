"""A probe round against loopback servers: the caps, robots.txt, the Crawl-delay, redirects, hostile answers."""

from __future__ import annotations

import json

from directory.probing import ROBOTS_DISALLOWED, HostPacer, ProbeTarget
from probes.types import FailureKind
from tests.directory.probe_support import ENV, Reply, Site, round_in_thread, run_round, serve


def targets(*urls: str) -> list[ProbeTarget]:
    return [ProbeTarget(listing_id=index, url=url) for index, url in enumerate(urls, start=1)]


def test_at_most_2_probes_of_one_host_run_at_once():
    site = Site()
    site.gate.closed = True
    with serve(site, "127.0.0.1", "127.0.0.2") as (a, b):
        # The other host's probe is created last: once it arrives, the round has started all it may.
        work = targets(*(f"{a}/mcp{n}" for n in range(5)), f"{b}/mcp")
        with round_in_thread(work) as done:
            site.gate.wait_for(
                lambda g: g.arrived.get("127.0.0.1", 0) >= 2 and g.arrived.get("127.0.0.2", 0) >= 1
            )
            held = site.gate.in_flight["127.0.0.1"]
            site.gate.open()

    assert held == 2
    assert site.gate.peak["127.0.0.1"] == 2
    assert len(site.posts()) == 6
    assert len(done) == 6


def test_at_most_8_probes_run_at_once_in_all():
    site = Site()
    site.gate.closed = True
    addresses = [f"127.0.0.{n}" for n in range(1, 13)]
    with serve(site, *addresses) as urls, round_in_thread(targets(*(f"{url}/mcp" for url in urls))) as done:
        site.gate.wait_for(lambda g: sum(g.arrived.values()) >= 8)
        held = sum(site.gate.in_flight.values())
        site.gate.open()

    assert held == 8
    assert site.gate.total_peak == 8
    assert len(site.posts()) == 12
    assert len(done) == 12


def test_probes_and_robots_txt_send_uptimy_s_user_agent():
    site = Site()
    with serve(site, "127.0.0.1") as (url,):
        run_round(targets(f"{url}/mcp"))

    assert {(seen.method, seen.path, seen.user_agent) for seen in site.seen} == {
        ("GET", "/robots.txt", ENV.user_agent),
        ("POST", "/mcp", ENV.user_agent),
    }


def test_a_path_robots_txt_disallows_is_skipped_with_its_reason_and_never_requested():
    site = Site(replies={"/robots.txt": Reply(200, b"User-agent: *\nDisallow: /mcp\n")})
    with serve(site, "127.0.0.1") as (url,):
        done = {probe.target.url: probe for probe in run_round(targets(f"{url}/mcp", f"{url}/open"))}

    assert (done[f"{url}/mcp"].outcome, done[f"{url}/mcp"].skipped) == (None, ROBOTS_DISALLOWED)
    assert done[f"{url}/open"].outcome is not None
    assert [seen.path for seen in site.posts()] == ["/open"]


def test_robots_txt_is_read_once_per_origin_in_a_round():
    site = Site()
    with serve(site, "127.0.0.1", "127.0.0.2") as (a, b):
        run_round(targets(f"{a}/one", f"{a}/two", f"{a}/three", f"{b}/one"))

    robots = sorted(seen.host.split(":")[0] for seen in site.seen if seen.path == "/robots.txt")
    assert robots == ["127.0.0.1", "127.0.0.2"]


def test_the_crawl_delay_spaces_a_host_s_probes_capped_at_2_s():
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    site = Site(replies={"/robots.txt": Reply(200, b"User-agent: *\nCrawl-delay: 30\n")})
    with serve(site, "127.0.0.1", "127.0.0.2") as (a, b):
        run_round(
            targets(f"{a}/one", f"{a}/two", f"{a}/three", f"{b}/one"),
            pacer=HostPacer(clock=lambda: 0.0, sleep=sleep),
        )

    # 127.0.0.1's three probes start at 0, 2 and 4 s; 127.0.0.2's first does not wait for them.
    assert sorted(waits) == [2.0, 4.0]


def test_a_robots_txt_that_cannot_be_read_leaves_the_probe_to_speak_for_the_host():
    site = Site(replies={"/robots.txt": Reply(503, b"down")})
    with serve(site, "127.0.0.1") as (url,):
        (done,) = run_round(targets(f"{url}/mcp"))

    assert done.outcome is not None
    assert done.outcome.http_status == 500


def test_a_redirect_to_another_host_is_refused():
    site = Site()
    with serve(site, "127.0.0.1", "127.0.0.2") as (a, b):
        site.replies["/mcp"] = Reply(307, headers=(("Location", f"{b}/mcp"),))
        (done,) = run_round(targets(f"{a}/mcp"))

    assert done.outcome is not None
    assert done.outcome.kind is FailureKind.REDIRECT_REFUSED
    assert "another host" in done.outcome.reason
    assert [seen.host.split(":")[0] for seen in site.posts()] == ["127.0.0.1"]


def test_a_redirect_on_the_same_host_is_followed():
    site = Site(replies={"/mcp": Reply(307, headers=(("Location", "/mcp/"),))})
    with serve(site, "127.0.0.1") as (url,):
        run_round(targets(f"{url}/mcp"))

    assert [seen.path for seen in site.posts()] == ["/mcp", "/mcp/"]


def test_hostile_answers_fail_only_their_own_probe():
    sse = (("Content-Type", "text/event-stream"),)
    as_json = (("Content-Type", "application/json"),)
    site = Site(
        replies={
            "/huge": Reply(200, b"x" * (6 * 1024 * 1024), as_json),
            "/nul": Reply(200, b"data: \x00\x00\xff\xfe\n\n", sse),
            "/deep": Reply(200, b"[" * 100_000 + b"]" * 100_000, as_json),
            "/named": Reply(
                200,
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "result": {
                            "protocolVersion": "2025-06-18",
                            "capabilities": {},
                            "serverInfo": {"name": "evil\x00name", "version": "1"},
                        },
                    }
                ).encode(),
                as_json,
            ),
        }
    )
    with serve(site, "127.0.0.1") as (url,):
        work = targets(
            f"{url}/huge", f"{url}/nul", f"{url}/deep", f"{url}/named", f"{url}/hang", "ftp://127.0.0.1/mcp"
        )
        done = {probe.target.url: probe for probe in run_round(work, per_host=6, timeout=1.0)}

    assert done[f"{url}/huge"].outcome.kind is FailureKind.TOO_LARGE
    assert done[f"{url}/hang"].outcome.kind is FailureKind.TIMEOUT
    for path in ("/nul", "/deep"):
        assert done[f"{url}{path}"].outcome.tool_count is None
        assert done[f"{url}{path}"].outcome.kind is not None
    # Its text is made storable as the probe ends: no NUL reaches the database.
    assert "\x00" not in done[f"{url}/named"].outcome.server.name
    assert done["ftp://127.0.0.1/mcp"].outcome is None
    assert done["ftp://127.0.0.1/mcp"].skipped.startswith("Not probed: the listing's URL can't be checked")


def test_a_legacy_sse_message_endpoint_on_another_origin_is_refused():
    site = Site()
    with serve(site, "127.0.0.1", "127.0.0.2") as (a, b):
        site.replies["POST /sse"] = Reply(405)
        site.replies["GET /sse"] = Reply(
            200,
            f"event: endpoint\ndata: {b}/messages?session=1\n\n".encode(),
            (("Content-Type", "text/event-stream"),),
        )
        (done,) = run_round(targets(f"{a}/sse"))

    assert done.outcome is not None
    assert done.outcome.kind is FailureKind.REDIRECT_REFUSED
    assert "legacy SSE endpoint is on another origin" in done.outcome.reason
    assert [seen.path for seen in site.posts()] == ["/sse"]
