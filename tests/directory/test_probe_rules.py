"""The pure rules of directory probing: robots.txt, the Crawl-delay and its cap, each listing's place in the interval."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from directory.probing import HostPacer, next_probe_at, next_start, probe_offset
from directory.robots import origin_key
from probes.robots import RobotsRules, applied_delay, robots_url

MCP = "https://mcp.example.com/mcp"


@pytest.mark.parametrize(
    ("robots", "crawl_delay", "applied"),
    [
        ("", None, 0.0),
        ("User-agent: *\nCrawl-delay: 1\n", 1.0, 1.0),
        ("User-agent: *\nCrawl-delay: 2\n", 2.0, 2.0),
        ("User-agent: *\nCrawl-delay: 3\n", 3.0, 2.0),
        ("User-agent: *\nCrawl-delay: 3600\n", 3600.0, 2.0),
        ("User-agent: *\nCrawl-delay: 0\n", 0.0, 0.0),
        # Our own group wins over *, whichever comes first.
        ("User-agent: *\nCrawl-delay: 1\n\nUser-agent: Uptimy\nCrawl-delay: 10\n", 10.0, 2.0),
        ("User-agent: uptimy\nCrawl-delay: 1\n\nUser-agent: *\nCrawl-delay: 30\n", 1.0, 1.0),
        # Another crawler's delay is not ours.
        ("User-agent: Googlebot\nCrawl-delay: 5\n", None, 0.0),
        # A fraction of a second is read as written (Protego).
        ("User-agent: *\nCrawl-delay: 0.5\n", 0.5, 0.5),
        ("User-agent: *\nCrawl-delay: soon\n", None, 0.0),
    ],
)
def test_the_crawl_delay_is_read_for_uptimy_or_star_and_applied_at_most_2_s(robots, crawl_delay, applied):
    rules = RobotsRules(robots)

    assert (rules.crawl_delay, rules.delay) == (crawl_delay, applied)


@pytest.mark.parametrize(
    ("crawl_delay", "applied"),
    [
        (None, 0.0),
        (-1.0, 0.0),
        (0.0, 0.0),
        (0.5, 0.5),
        (1.999, 1.999),
        (2.0, 2.0),
        (2.001, 2.0),
        (float("inf"), 0.0),
        (float("nan"), 0.0),
    ],
)
def test_the_applied_delay_is_capped_at_2_s(crawl_delay, applied):
    assert applied_delay(crawl_delay) == applied


@pytest.mark.parametrize(
    ("robots", "url", "allowed"),
    [
        ("", MCP, True),
        ("User-agent: *\nDisallow: /\n", MCP, False),
        ("User-agent: *\nDisallow: /mcp\n", MCP, False),
        ("User-agent: *\nDisallow: /mcp\n", "https://mcp.example.com/sse", True),
        ("User-agent: *\nDisallow: /private\n", MCP, True),
        ("User-agent: Uptimy\nDisallow: /\n", MCP, False),
        ("User-agent: Googlebot\nDisallow: /\n", MCP, True),
        # Our own group replaces *.
        ("User-agent: Uptimy\nAllow: /\n\nUser-agent: *\nDisallow: /\n", MCP, True),
        ("User-agent: *\nDisallow:\n", MCP, True),
        ("User-agent: *\nDisallow: /mcp?\n", "https://mcp.example.com/mcp?x=1", False),
        ("\x00\ufffd garbage \n", MCP, True),
        # RFC 9309: * and $ in paths; the longest matching rule wins.
        ("User-agent: *\nDisallow: /*.php$\n", MCP, True),
        ("User-agent: *\nDisallow: /m*p\n", MCP, False),
        ("User-agent: *\nDisallow: /mcp$\n", "https://mcp.example.com/mcp/sub", True),
        ("User-agent: *\nDisallow: /\nAllow: /mcp\n", MCP, True),
    ],
)
def test_a_path_robots_txt_disallows_for_uptimy_is_not_probed(robots, url, allowed):
    assert RobotsRules(robots).allows(url) is allowed


@pytest.mark.parametrize(
    ("url", "robots", "origin"),
    [
        (MCP, "https://mcp.example.com/robots.txt", "https://mcp.example.com"),
        (
            "https://MCP.Example.com:8443/a/b?c=d#e",
            "https://mcp.example.com:8443/robots.txt",
            "https://mcp.example.com:8443",
        ),
        ("http://127.0.0.1:5000/sse", "http://127.0.0.1:5000/robots.txt", "http://127.0.0.1:5000"),
    ],
)
def test_robots_txt_is_read_at_the_root_of_the_origin(url, robots, origin):
    assert (robots_url(url), origin_key(url)) == (robots, origin)


# --- each listing's place in the interval ---------------------------------------------------------

HALF_HOUR = timedelta(minutes=30)
AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def test_a_listing_keeps_its_place_in_every_interval():
    first = next_probe_at(42, after=AT, interval=HALF_HOUR)
    second = next_probe_at(42, after=first, interval=HALF_HOUR)

    assert AT < first <= AT + HALF_HOUR
    assert second - first == HALF_HOUR
    assert next_probe_at(42, after=first - timedelta(microseconds=1), interval=HALF_HOUR) == first


def test_10000_listings_spread_over_the_interval():
    minutes = [probe_offset(listing_id, HALF_HOUR) // timedelta(minutes=1) for listing_id in range(1, 10_001)]

    per_minute = [minutes.count(minute) for minute in range(30)]

    # An even spread puts 333 in each minute; none gets more than half as many again.
    assert min(per_minute) > 333 * 2 / 3
    assert max(per_minute) < 333 * 3 / 2


@pytest.mark.parametrize(
    ("last", "delay", "now", "start"),
    [
        (None, 2.0, 100.0, 100.0),
        (100.0, 0.0, 100.0, 100.0),
        (100.0, 2.0, 100.0, 102.0),
        (100.0, 2.0, 101.0, 102.0),
        (100.0, 2.0, 102.0, 102.0),
        (100.0, 2.0, 150.0, 150.0),
    ],
)
def test_a_host_s_next_probe_starts_a_crawl_delay_after_its_last(last, delay, now, start):
    assert next_start(last, delay, now) == start


def test_probes_of_one_host_are_spaced_and_other_hosts_do_not_wait():
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    pacer = HostPacer(clock=lambda: 10.0, sleep=sleep)

    async def main() -> None:
        for host in ("a.example", "a.example", "b.example", "a.example"):
            await pacer.wait_turn(host, 2.0)

    asyncio.run(main())

    # a at 10, a at 12, b at 10 (no wait), a at 14: booked before each wait.
    assert waits == [2.0, 4.0]
