"""Read a host's robots.txt for directory probing: may Uptimy probe this path, and how long to wait between probes.

Pure asyncio, no Django. The file is fetched through the check engine's own connection layer
(``probes.connection``: the address guard, pinned addresses, capped bodies), read as every
Uptimy fetcher reads one (``probes.robots``), and kept per origin for a while by
:class:`RobotsCache`.

What an answer means follows RFC 9309 where it does not hide an outage: a 2xx is the rules,
a 4xx (no file) allows everything, and so does a 5xx or no answer at all. A host that cannot
answer its robots.txt is usually down, and its probe must fail and count against its
reliability, not be skipped: a probe is two requests of a monitor, not a crawl.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Awaitable, Callable

import httpx

from probes.connection import CheckFailed, Connection, redirect_target
from probes.robots import MAX_ROBOTS_BYTES, RobotsRules, robots_url
from probes.runner import default_ssl_context
from probes.text import storable
from probes.wire import Response, WireError

# RFC 9309: a crawler follows at least five redirects for robots.txt.
MAX_ROBOTS_REDIRECTS = 5
ROBOTS_TIMEOUT = 10.0
NO_FILE = RobotsRules()
UNANSWERED = RobotsRules(answered=False)
# How long an unanswered robots.txt is kept at most before it is asked again.
UNANSWERED_TTL = 3600.0


def origin_key(url: str) -> str:
    """Return the origin robots.txt applies to ("https://host:port")."""
    parsed = httpx.URL(url)
    return f"{parsed.scheme}://{parsed.netloc.decode('ascii').lower()}"


async def fetch_robots(
    url: str,
    *,
    allow_private: bool,
    user_agent: str,
    ssl_context: ssl.SSLContext | None = None,
    nameservers: tuple[str, ...] = (),
    timeout: float = ROBOTS_TIMEOUT,
) -> RobotsRules:
    """Return the rules of the robots.txt of ``url``'s origin, read through the engine's address guard.

    Anything but a 2xx answer within ``timeout`` allows everything (see the module docstring): a
    4xx as the host's own word, anything else as :data:`UNANSWERED`; a body over 500 KiB is cut
    there, as Google does.
    """
    loop = asyncio.get_running_loop()
    conn = Connection(
        allow_private=allow_private,
        user_agent=user_agent,
        ssl_context=ssl_context or default_ssl_context(),
        nameservers=nameservers,
        deadline=loop.time() + timeout,
    )
    target = httpx.URL(robots_url(url))
    try:
        async with asyncio.timeout(timeout):
            for _hop in range(MAX_ROBOTS_REDIRECTS + 1):
                response = await conn.send("GET", target, headers=[("Accept", "text/plain")])
                if response.status_code in (301, 302, 303, 307, 308):
                    await conn.discard(response)
                    target = redirect_target(target, response)
                    continue
                if not 200 <= response.status_code < 300:
                    await conn.discard(response)
                    return NO_FILE if 400 <= response.status_code < 500 else UNANSWERED
                body = await _read_capped(response)
                return RobotsRules(storable(body.decode("utf-8", errors="replace")))
            return UNANSWERED
    except (CheckFailed, WireError, TimeoutError, httpx.InvalidURL, UnicodeError):
        return UNANSWERED
    finally:
        await conn.aclose()


async def _read_capped(response: Response) -> bytes:
    """Return at most MAX_ROBOTS_BYTES of the body, dropping the connection past that."""
    chunks: list[bytes] = []
    size = 0
    try:
        while size < MAX_ROBOTS_BYTES and (chunk := await response.read_chunk()):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        await response.aclose()
    return b"".join(chunks)[:MAX_ROBOTS_BYTES]


class RobotsCache:
    """Keep each origin's rules for ``ttl`` seconds (an unanswered one at most an hour); one fetch per origin at a time.

    ``fetch`` is a coroutine function of a URL (any of the origin's) returning its rules;
    ``clock`` a monotonic clock. At most ``max_origins`` are kept: the expired go first, then the oldest.
    """

    def __init__(
        self,
        fetch: Callable[[str], Awaitable[RobotsRules]],
        *,
        ttl: float,
        clock: Callable[[], float] = time.monotonic,
        max_origins: int = 50_000,
    ) -> None:
        self._fetch = fetch
        self._ttl = ttl
        self._clock = clock
        self._max = max_origins
        self._rules: dict[str, tuple[float, RobotsRules]] = {}
        self._pending: dict[str, asyncio.Future[RobotsRules]] = {}

    async def rules_for(self, url: str) -> RobotsRules:
        """Return the rules of ``url``'s origin, fetching them when none are kept or they expired."""
        key = origin_key(url)
        kept = self._rules.get(key)
        if kept is not None and kept[0] > self._clock():
            return kept[1]
        pending = self._pending.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[RobotsRules] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            rules = await self._fetch(url)
        except BaseException as exc:
            # A bug or a cancellation: those waiting on this fetch learn of it, the next asks again.
            future.set_exception(exc)
            future.exception()  # marked retrieved: nobody else may be waiting
            raise
        finally:
            del self._pending[key]
        future.set_result(rules)
        self._keep(key, rules)
        return rules

    def _keep(self, key: str, rules: RobotsRules) -> None:
        now = self._clock()
        if len(self._rules) >= self._max:
            for stale in [origin for origin, (until, _) in self._rules.items() if until <= now]:
                del self._rules[stale]
            while len(self._rules) >= self._max:
                del self._rules[next(iter(self._rules))]
        ttl = self._ttl if rules.answered else min(self._ttl, UNANSWERED_TTL)
        self._rules.pop(key, None)
        self._rules[key] = (now + ttl, rules)
