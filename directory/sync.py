"""Build the registry and GitHub clients and the probes' caps from settings, and run one sync, licence or probe round.

Each is the tasks' and commands' one call.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
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
from directory.services import LicenceReport, SyncReport, licences_look_up, registry_sync
from directory.services_probing import (
    listing_probes_claim,
    listing_probes_prune,
    listing_probes_record,
    listing_probes_return,
)
from probes import __version__
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

    ``overlapped`` says the round did nothing because another still held the probes;
    ``returned`` counts the claimed listings a stopped round left unprobed, due again at once.
    """

    probed: int = 0
    listed: int = 0
    skipped: int = 0
    pruned: int = 0
    overlapped: bool = False
    stopped: bool = False
    returned: int = 0


class RoundStop:
    """Ask a running probe round to stop: its finished probes are recorded, the rest given back, the lease released.

    ``request`` may be called from a signal handler (it only sets flags and wakes the round's loop).
    """

    def __init__(self) -> None:
        self.requested = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._woken: asyncio.Event | None = None

    def request(self) -> None:
        self.requested.set()
        loop, woken = self._loop, self._woken
        if loop is not None and woken is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(woken.set)

    async def wait(self) -> None:
        """Return once a stop is requested (on the running loop)."""
        self._loop, self._woken = asyncio.get_running_loop(), asyncio.Event()
        if self.requested.is_set():
            return
        try:
            await self._woken.wait()
        finally:
            self._loop = self._woken = None


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


def probe_listings(
    *, limit: int | None = None, now: datetime | None = None, stop: RoundStop | None = None
) -> ProbeReport:
    """Probe the listings due (at most ``limit``, default UPTIMY_DIRECTORY_PROBE_BATCH), record them, prune old counts.

    One round at a time: while another holds the probes (a round outlasting the beat's tick,
    a second worker, the command beside Celery) this one claims nothing, since the caps per
    host and in all hold within a round only. The listings it would have claimed stay due.
    A ``stop`` requested mid-round ends the probes still running: the finished ones are
    recorded and the others are due again at once, for the next round, whoever runs it.
    """
    batch = settings.UPTIMY_DIRECTORY_PROBE_BATCH if limit is None else limit
    with probe_round_lease() as held:
        if not held:
            return ProbeReport(overlapped=True)
        now = now or timezone.now()
        targets = listing_probes_claim(
            now=now, interval=timedelta(seconds=settings.UPTIMY_DIRECTORY_PROBE_INTERVAL), limit=batch
        )
        done = asyncio.run(_probe(targets, stop)) if targets else []
        listing_probes_record(done=done)
        finished = {probe.target.listing_id for probe in done}
        unprobed = [target.listing_id for target in targets if target.listing_id not in finished]
        returned = listing_probes_return(listing_ids=unprobed, now=now)
    return ProbeReport(
        probed=sum(1 for probe in done if probe.outcome is not None),
        listed=sum(1 for probe in done if probe.outcome is not None and probe.outcome.tool_count is not None),
        skipped=sum(1 for probe in done if probe.outcome is None),
        pruned=listing_probes_prune(now=now),
        stopped=bool(stop and stop.requested.is_set()),
        returned=returned,
    )


PROBE_ROUND_KEY = "directory:probe-round"


def probe_round_lease_seconds() -> float:
    """Return how long a round's lease lives unrenewed: one tick of the rounds (UPTIMY_DIRECTORY_PROBE_TICK), at least 1 s.

    Its holder renews it every third of that while the round runs, however long the round
    takes; a holder that died (SIGKILL, a lost machine) stops renewing, and its lease is gone
    within one tick, so the next tick's round runs.
    """
    return max(1.0, float(settings.UPTIMY_DIRECTORY_PROBE_TICK))


@contextlib.contextmanager
def probe_round_lease() -> Iterator[bool]:
    """Hold the directory's probes for one round; yield False when another round holds them.

    The lease is a cache key every process shares (Redis wherever Celery runs, else files in
    the var dir), added only if absent, so two rounds never both get it. A thread renews it
    while the round runs (:func:`probe_round_lease_seconds`); it is deleted when the round
    ends, stopped or failing, and expires on its own if its holder dies.
    """
    token = secrets.token_hex(16)
    ttl = probe_round_lease_seconds()
    held = cache.add(PROBE_ROUND_KEY, token, timeout=ttl)
    if not held:
        yield False
        return
    ended = threading.Event()

    def renew() -> None:
        while not ended.wait(ttl / 3):
            # Only our own lease: one that expired and was taken by the next round is that round's.
            if cache.get(PROBE_ROUND_KEY) == token:
                cache.touch(PROBE_ROUND_KEY, timeout=ttl)

    renewer = threading.Thread(target=renew, name="probe-round-lease", daemon=True)
    renewer.start()
    try:
        yield True
    finally:
        ended.set()
        renewer.join()
        if cache.get(PROBE_ROUND_KEY) == token:
            cache.delete(PROBE_ROUND_KEY)


async def _probe(
    targets: Sequence[probing.ProbeTarget], stop: RoundStop | None = None
) -> list[probing.ProbeDone]:
    """Run one round on this loop and return every probe finished (no database here: Django's ORM is not for a running loop).

    A requested ``stop`` cancels the probes still running; they are left out.
    """
    stream = probing.probe_round(
        targets,
        probe_env(),
        robots=robots_cache(),
        timeout=settings.UPTIMY_DIRECTORY_PROBE_TIMEOUT,
        max_in_flight=settings.UPTIMY_DIRECTORY_PROBES_IN_FLIGHT,
        per_host=settings.UPTIMY_DIRECTORY_PROBES_PER_HOST,
    )
    done: list[probing.ProbeDone] = []

    async def consume() -> None:
        async with contextlib.aclosing(stream):
            async for probe in stream:
                done.append(probe)

    consumer = asyncio.create_task(consume())
    stopper = asyncio.create_task(stop.wait()) if stop is not None else None
    await asyncio.wait(
        [task for task in (consumer, stopper) if task is not None], return_when=asyncio.FIRST_COMPLETED
    )
    for task in (consumer, stopper):
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    # Let aborted transports deliver connection_lost before the loop closes.
    await asyncio.sleep(0)
    return done
