"""Reading robots.txt: what each answer means, the size cap, the address guard, and the cache per origin."""

from __future__ import annotations

import asyncio

import pytest

from directory.robots import UNANSWERED, RobotsCache, fetch_robots
from probes.robots import MAX_ROBOTS_BYTES, RobotsRules
from tests.directory.probe_support import ENV, Reply, Site, serve


def fetch(url: str, *, allow_private: bool = True) -> RobotsRules:
    return asyncio.run(fetch_robots(url, allow_private=allow_private, user_agent=ENV.user_agent, timeout=5.0))


@pytest.mark.parametrize(
    ("reply", "answered", "allowed"),
    [
        (Reply(200, b"User-agent: *\nDisallow: /mcp\n"), True, False),
        (Reply(200, b"User-agent: *\nDisallow: /other\n"), True, True),
        # No file: the host's own word that everything is allowed.
        (Reply(404), True, True),
        (Reply(403), True, True),
        # No usable answer: probing goes on, and the probe tells whether the host is up.
        (Reply(500), False, True),
        (Reply(503), False, True),
    ],
)
def test_what_each_answer_to_robots_txt_means(reply, answered, allowed):
    site = Site(replies={"/robots.txt": reply})
    with serve(site, "127.0.0.1") as (url,):
        rules = fetch(f"{url}/mcp")

    assert (rules.answered, rules.allows(f"{url}/mcp")) == (answered, allowed)


def test_a_redirected_robots_txt_is_followed():
    site = Site(
        replies={
            "/robots.txt": Reply(301, headers=(("Location", "/real-robots.txt"),)),
            "/real-robots.txt": Reply(200, b"User-agent: *\nDisallow: /\n"),
        }
    )
    with serve(site, "127.0.0.1") as (url,):
        rules = fetch(f"{url}/mcp")

    assert not rules.allows(f"{url}/mcp")


def test_only_the_first_500_kib_of_robots_txt_are_read():
    padding = b"# " + b"x" * MAX_ROBOTS_BYTES + b"\n"
    site = Site(replies={"/robots.txt": Reply(200, b"User-agent: *\n" + padding + b"Disallow: /mcp\n")})
    with serve(site, "127.0.0.1") as (url,):
        rules = fetch(f"{url}/mcp")

    assert rules.allows(f"{url}/mcp")
    assert len(rules.text) <= MAX_ROBOTS_BYTES


def test_robots_txt_of_a_private_address_is_never_asked_without_allow_private():
    site = Site(replies={"/robots.txt": Reply(200, b"User-agent: *\nDisallow: /\n")})
    with serve(site, "127.0.0.1") as (url,):
        rules = fetch(f"{url}/mcp", allow_private=False)

    assert rules is UNANSWERED
    assert site.seen == []


class Fetches:
    """A robots.txt fetcher that answers from a table and counts its fetches, held until released."""

    def __init__(self, rules: RobotsRules) -> None:
        self.rules = rules
        self.urls: list[str] = []
        self.release = asyncio.Event()

    async def __call__(self, url: str) -> RobotsRules:
        self.urls.append(url)
        await self.release.wait()
        return self.rules


def test_probes_of_one_origin_asking_at_once_share_one_fetch():
    fetches = Fetches(RobotsRules("User-agent: *\nCrawl-delay: 1\n"))
    cache = RobotsCache(fetches, ttl=3600, clock=lambda: 0.0)

    async def main() -> list[RobotsRules]:
        asks = [asyncio.create_task(cache.rules_for(f"https://a.example/mcp{n}")) for n in range(5)]
        await asyncio.sleep(0)
        fetches.release.set()
        return await asyncio.gather(*asks)

    answers = asyncio.run(main())

    assert fetches.urls == ["https://a.example/mcp0"]
    assert all(rules is fetches.rules for rules in answers)


@pytest.mark.parametrize(
    ("rules", "age", "fetched"),
    [
        (RobotsRules(""), 3599.0, 1),
        (RobotsRules(""), 86399.0, 1),
        (RobotsRules(""), 86400.0, 2),
        (UNANSWERED, 3599.0, 1),
        (UNANSWERED, 3600.0, 2),
    ],
)
def test_rules_are_kept_a_day_and_an_unanswered_robots_txt_an_hour(rules, age, fetched):
    now = [0.0]
    fetches = Fetches(rules)
    fetches.release.set()
    cache = RobotsCache(fetches, ttl=86400, clock=lambda: now[0])

    async def main() -> None:
        await cache.rules_for("https://a.example/mcp")
        now[0] = age
        await cache.rules_for("https://a.example/other")

    asyncio.run(main())

    assert len(fetches.urls) == fetched


def test_each_origin_has_its_own_rules():
    fetches = Fetches(RobotsRules(""))
    fetches.release.set()
    cache = RobotsCache(fetches, ttl=3600, clock=lambda: 0.0)

    async def main() -> None:
        for url in (
            "https://a.example/mcp",
            "https://a.example:8443/mcp",
            "http://a.example/mcp",
            "https://b.example/x",
        ):
            await cache.rules_for(url)

    asyncio.run(main())

    assert len(fetches.urls) == 4
