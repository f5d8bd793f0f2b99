"""Probe the directory's remote listings with the MCP check engine, politely: robots.txt, Crawl-delay, caps.

Pure asyncio, no Django: :func:`probe_round` takes plain targets and yields each one's
:class:`ProbeDone` as it ends. Every probe is the engine's own MCP check (``probes.runner.run_check``),
keyless (a listing names headers, never their values), sent with Uptimy's directory User-Agent.
Before a host is probed its origin's robots.txt is read (``directory.robots``, cached): a path it
disallows for Uptimy is not probed (the probe is *skipped*, with the reason), and its
Crawl-delay, at most 2 s, spaces the probes of that host. At most ``per_host`` probes of one
host and ``max_in_flight`` in all run at once, as the engine's ``stream_batch`` caps them.

What the engine already does for every check holds here too: redirects to another host are
refused (``probes.mcp.transport``), a legacy SSE server's message endpoint must be on the
stream's origin (``probes.mcp.legacy``), every address passes the guard.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import httpx

from directory.robots import RobotsCache
from probes import __version__
from probes.checks.mcp import parse_mcp_config
from probes.config import ConfigError
from probes.connection import host_of
from probes.robots import RobotsRules
from probes.runner import ProbeEnv, crashed_outcome, run_check, utc_now
from probes.types import ProbeOutcome, ToolInfo

USER_AGENT = (
    f"Uptimy/{__version__} (+https://uptimy.example; MCP directory; sends only initialize and tools/list)"
)
ROBOTS_DISALLOWED = "Not probed: the host's robots.txt disallows this path for Uptimy"


@dataclass(frozen=True, slots=True)
class ProbeTarget:
    """One listing's remote to probe: the listing's id and the remote's URL."""

    listing_id: int
    url: str


@dataclass(frozen=True, slots=True)
class ProbeDone:
    """One target's probe as it ended: the engine's outcome, or, for a probe not made, why (``skipped``)."""

    target: ProbeTarget
    at: datetime
    outcome: ProbeOutcome | None
    skipped: str = ""


# --- scheduling ----------------------------------------------------------------------------------


def probe_offset(listing_id: int, interval: timedelta) -> timedelta:
    """Return the listing's stable place in every interval, so 10,000 listings spread over it evenly.

    A hash of the id, not the id itself: listings imported together have neighbouring ids.
    """
    seconds = int(interval.total_seconds())
    if seconds <= 0:
        return timedelta(0)
    digest = hashlib.sha256(f"directory-probe:{listing_id}".encode()).digest()
    return timedelta(seconds=int.from_bytes(digest[:8], "big") % seconds)


def next_probe_at(listing_id: int, *, after: datetime, interval: timedelta) -> datetime:
    """Return the listing's first slot strictly after ``after``: its offset plus a whole number of intervals."""
    seconds = int(interval.total_seconds())
    if seconds <= 0:
        return after
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    offset = probe_offset(listing_id, interval)
    elapsed = (after - epoch - offset).total_seconds()
    slot = (int(elapsed // seconds) + 1) * seconds
    return epoch + offset + timedelta(seconds=slot)


def next_start(last_start: float | None, delay: float, now: float) -> float:
    """Return when a host's next probe may start: ``delay`` after its last one, and never before ``now``."""
    if last_start is None:
        return now
    return max(now, last_start + delay)


class HostPacer:
    """Space the probes of each host by its Crawl-delay: each start is booked before the wait, so two never share one."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        self._last: dict[str, float] = {}

    async def wait_turn(self, host: str, delay: float) -> None:
        """Wait until a probe of ``host`` may start, and book that start."""
        now = self._clock()
        start = next_start(self._last.get(host), delay, now)
        self._last[host] = start
        if start > now:
            await self._sleep(start - now)


# --- a round ----------------------------------------------------------------------------------------


async def probe_round(
    targets: Sequence[ProbeTarget],
    env: ProbeEnv,
    *,
    robots: RobotsCache,
    timeout: float,
    max_in_flight: int = 8,
    per_host: int = 2,
    pacer: HostPacer | None = None,
    clock: Callable[[], datetime] = utc_now,
) -> AsyncGenerator[ProbeDone, None]:
    """Yield every target's probe as it ends; one target's failure (or a bug in its probe) is its own.

    A host's slot is taken first, then a slot of the round for its robots.txt (cached, so
    mostly no request) and, after the Crawl-delay, another for the probe: a probe waiting for
    its host or its turn holds no slot of the round. Closing the iterator early cancels the
    probes still running.
    """
    in_flight = asyncio.Semaphore(max_in_flight)
    hosts: dict[str, asyncio.Semaphore] = {}
    pacer = pacer or HostPacer()

    async def one(target: ProbeTarget) -> ProbeDone:
        try:
            config = parse_mcp_config({"uri": target.url, "timeout": timeout})
        except ConfigError as error:
            problems = "; ".join(f"{name}: {words}" for name, words in sorted(error.errors.items()))
            return ProbeDone(
                target, clock(), None, f"Not probed: the listing's URL can't be checked ({problems})"
            )
        host = _host_key(config.uri)
        async with hosts.setdefault(host, asyncio.Semaphore(per_host)):
            async with in_flight:
                rules = await _rules(robots, config.uri)
            if not rules.allows(config.uri):
                return ProbeDone(target, clock(), None, ROBOTS_DISALLOWED)
            await pacer.wait_turn(host, rules.delay)
            async with in_flight:
                try:
                    outcome = await run_check(config, env)
                except Exception as exc:
                    outcome = crashed_outcome(config, exc)
        return ProbeDone(target, clock(), outcome)

    ended: asyncio.Queue[asyncio.Task[ProbeDone]] = asyncio.Queue()
    tasks = [asyncio.create_task(one(target)) for target in targets]
    for task in tasks:
        task.add_done_callback(ended.put_nowait)
    try:
        for _ in tasks:
            yield (await ended.get()).result()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _rules(robots: RobotsCache, url: str) -> RobotsRules:
    """Return the rules for ``url``; a bug reading them allows the probe, which then speaks for the host."""
    try:
        return await robots.rules_for(url)
    except Exception:
        return RobotsRules()


def _host_key(uri: str) -> str:
    try:
        return host_of(httpx.URL(uri))
    except (httpx.InvalidURL, UnicodeError):
        return uri


# --- the stored tool list ------------------------------------------------------------------------


def stored_tools(tools: Sequence[ToolInfo]) -> list[dict[str, object]]:
    """Return the tools as a ListingToolList keeps them (JSON): every field of ToolInfo."""
    return [dataclasses.asdict(tool) for tool in tools]


def tools_of(stored: object) -> tuple[ToolInfo, ...]:
    """Return stored tools (:func:`stored_tools`) as the engine's ToolInfo; anything else in the JSON is left out."""
    if not isinstance(stored, list):
        return ()
    known = {field.name for field in dataclasses.fields(ToolInfo)}
    tools = []
    for item in stored:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            values = {key: value for key, value in item.items() if key in known}
            values["required_inputs"] = tuple(values.get("required_inputs") or ())
            tools.append(ToolInfo(**values))
    return tuple(tools)
