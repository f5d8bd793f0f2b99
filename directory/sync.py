"""Build the registry and GitHub clients and the probes' caps from settings, and run one sync, licence or probe round.

Each is the tasks' and commands' one call.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import secrets
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from directory import probing
from directory.github import GitHubClient
from directory.registry import RegistryClient
from directory.robots import RobotsCache, fetch_robots
from directory.services import (
    LicenceReport,
    SyncReport,
    licences_look_up,
    listing_probes_claim,
    listing_probes_prune,
    listing_probes_record,
    registry_sync,
)
from probes import __version__
from probes.robots import MAX_CRAWL_DELAY
from probes.runner import ProbeEnv

USER_AGENT = f"Uptimy/{__version__} (+https://uptimy.example; MCP directory import; one request at a time)"


def registry_client() -> RegistryClient:
    """Return the client of the configured registry (UPTIMY_MCP_REGISTRY_URL)."""
    return RegistryClient(
        base_url=settings.UPTIMY_MCP_REGISTRY_URL,
        user_agent=USER_AGENT,
        timeout=settings.UPTIMY_MCP_REGISTRY_TIMEOUT,
    )


def sync_registry(*, full: bool) -> SyncReport:
    """Sync the directory from the configured registry, fully or since the last high-water mark."""
    return registry_sync(client=registry_client(), full=full, now=timezone.now())


def github_client() -> GitHubClient:
    """Return the client of GitHub's REST API (UPTIMY_GITHUB_API_URL), with the token when one is set."""
    return GitHubClient(
        base_url=settings.UPTIMY_GITHUB_API_URL,
        user_agent=USER_AGENT,
        token=settings.UPTIMY_GITHUB_TOKEN or None,
    )


def look_up_licences(*, limit: int) -> LicenceReport:
    """Ask GitHub for the licences of up to ``limit`` listed repositories that are due."""
    return licences_look_up(client=github_client(), now=timezone.now(), limit=limit)


# --- directory probing ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ProbeReport:
    """What one probe round did: listings probed, of which listed tools, skipped (robots.txt), and rows pruned.

    ``overlapped`` says the round did nothing because another still held the probes.
    """

    probed: int = 0
    listed: int = 0
    skipped: int = 0
    pruned: int = 0
    overlapped: bool = False


def probe_env() -> ProbeEnv:
    """Return what every directory probe shares: the address guard, the DNS servers, the directory's User-Agent."""
    return ProbeEnv(
        allow_private=settings.UPTIMY_ALLOW_PRIVATE_TARGETS,
        nameservers=tuple(settings.UPTIMY_DNS_SERVERS),
        user_agent=probing.USER_AGENT,
    )


_robots: RobotsCache | None = None
_robots_lock = threading.Lock()


def robots_cache() -> RobotsCache:
    """Return this process's robots.txt cache (each worker keeps its own), built on first use from settings."""
    global _robots
    with _robots_lock:
        if _robots is None:
            env = probe_env()
            fetch = functools.partial(
                fetch_robots,
                allow_private=env.allow_private,
                user_agent=env.user_agent,
                nameservers=env.nameservers,
            )
            _robots = RobotsCache(fetch, ttl=settings.UPTIMY_DIRECTORY_ROBOTS_TTL)
        return _robots


def probe_listings(*, limit: int | None = None, now: datetime | None = None) -> ProbeReport:
    """Probe the listings due (at most ``limit``, default UPTIMY_DIRECTORY_PROBE_BATCH), record them, prune old counts.

    One round at a time: while another holds the probes (a round outlasting the beat's tick,
    a second worker, the command beside Celery) this one claims nothing, since the caps per
    host and in all hold within a round only. The listings it would have claimed stay due.
    """
    batch = settings.UPTIMY_DIRECTORY_PROBE_BATCH if limit is None else limit
    with probe_round_lease(batch) as held:
        if not held:
            return ProbeReport(overlapped=True)
        now = now or timezone.now()
        targets = listing_probes_claim(
            now=now, interval=timedelta(seconds=settings.UPTIMY_DIRECTORY_PROBE_INTERVAL), limit=batch
        )
        done = asyncio.run(_probe(targets)) if targets else []
        listing_probes_record(done=done)
    return ProbeReport(
        probed=sum(1 for probe in done if probe.outcome is not None),
        listed=sum(1 for probe in done if probe.outcome is not None and probe.outcome.tool_count is not None),
        skipped=sum(1 for probe in done if probe.outcome is None),
        pruned=listing_probes_prune(now=now),
    )


PROBE_ROUND_KEY = "directory:probe-round"


def probe_round_lease_seconds(batch: int) -> float:
    """Return the longest a round of ``batch`` probes can take: every wave at its timeout, after robots.txt and a Crawl-delay, plus a minute.

    The lease outlives a worker killed mid-round by this much at most.
    """
    waves = math.ceil(max(1, batch) / max(1, settings.UPTIMY_DIRECTORY_PROBES_IN_FLIGHT))
    return waves * (2 * settings.UPTIMY_DIRECTORY_PROBE_TIMEOUT + MAX_CRAWL_DELAY) + 60


@contextlib.contextmanager
def probe_round_lease(batch: int) -> Iterator[bool]:
    """Hold the directory's probes for one round of ``batch``; yield False when another round holds them.

    The lease is a cache key every process shares (Redis wherever Celery runs), added only if
    absent, so two rounds never both get it; it expires on its own if its holder dies.
    """
    token = secrets.token_hex(16)
    held = cache.add(PROBE_ROUND_KEY, token, timeout=probe_round_lease_seconds(batch))
    try:
        yield held
    finally:
        # Only our own lease: one that expired and was taken by the next round is that round's.
        if held and cache.get(PROBE_ROUND_KEY) == token:
            cache.delete(PROBE_ROUND_KEY)


async def _probe(targets: Sequence[probing.ProbeTarget]) -> list[probing.ProbeDone]:
    """Run one round on this loop and return every probe (no database here: Django's ORM is not for a running loop)."""
    stream = probing.probe_round(
        targets,
        probe_env(),
        robots=robots_cache(),
        timeout=settings.UPTIMY_DIRECTORY_PROBE_TIMEOUT,
        max_in_flight=settings.UPTIMY_DIRECTORY_PROBES_IN_FLIGHT,
        per_host=settings.UPTIMY_DIRECTORY_PROBES_PER_HOST,
    )
    async with contextlib.aclosing(stream):
        done = [probe async for probe in stream]
    # Let aborted transports deliver connection_lost before the loop closes.
    await asyncio.sleep(0)
    return done
