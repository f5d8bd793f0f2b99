"""Fetch a publisher's pricing page politely, for the free-tier quote (scorecard check 12).

No Django: plain values in, a :class:`Page` or :class:`FetchFailed` out. It rides the check
engine's guarded connection (``probes.connection``): the host is resolved once, every address
passes the address guard (``probes.netguard``) unless ``allow_private``, and the socket goes to
the address that was checked. On top of that, what a polite crawler does:

- it names itself (:data:`USER_AGENT`, with a contact URL) and asks robots.txt first, honouring
  ``Disallow`` for that User-Agent per RFC 9309 (``probes.robots``; an unreadable or missing robots.txt
  allows, a 5xx one disallows, as the RFC says);
- it follows at most :data:`MAX_REDIRECTS` redirects and only on the same host (``www.`` added
  or dropped allowed) and never from https to http, each new URL asked of robots.txt again;
- it reads at most ``max_bytes`` and stops at one deadline for the whole fetch (DNS, connect,
  TLS, robots.txt, the page).

Never raises for the site's behaviour: every refusal is a FetchFailed with a sentence naming
the host, not the query.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx

from monitors.quotes import MAX_PAGE_BYTES
from probes import __version__, wire
from probes.connection import REDIRECT_STATUSES, CheckFailed, Connection, host_of
from probes.robots import MAX_ROBOTS_BYTES, RobotsRules
from probes.runner import default_ssl_context, run_sync
from probes.types import FailureKind

USER_AGENT = (
    f"Uptimy/{__version__} (+https://uptimy.example/bot; free-tier quote check; at most daily per page)"
)
MAX_REDIRECTS = 3
ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9"


@dataclass(frozen=True, slots=True)
class Page:
    """A fetched page: where it ended up, its status, its Content-Type and its body (within the cap)."""

    url: str
    status: int
    content_type: str
    body: bytes


@dataclass(frozen=True, slots=True)
class FetchFailed:
    """Why the page could not be fetched (robots.txt, the address guard, a redirect, a timeout, …)."""

    reason: str


class _Refused(Exception):
    def __init__(self, reason: str, *, too_large: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.too_large = too_large


def _same_site(a: str, b: str) -> bool:
    return a.removeprefix("www.") == b.removeprefix("www.")


async def _read(conn: Connection, url: httpx.URL, *, accept: str, cap: int) -> tuple[int, str, bytes, str]:
    """Return (status, content type, body, location) of one GET; a body over ``cap`` is refused."""
    try:
        response = await conn.send("GET", url, headers=[("Accept", accept)])
        status = response.status_code
        location = response.headers.get("location") or ""
        content_type = response.headers.get("content-type") or ""
        if status in REDIRECT_STATUSES or status >= 400:
            await response.aclose()
            return status, content_type, b"", location
        body = await conn.read_body(response, cap)
    except CheckFailed as failed:
        raise _Refused(failed.reason, too_large=failed.kind is FailureKind.TOO_LARGE) from None
    return status, content_type, body, location


async def _robots_allow(conn: Connection, url: httpx.URL) -> bool:
    """Return whether the site's robots.txt lets Uptimy fetch ``url`` (RFC 9309's reading).

    Its redirects are followed on the same site only (up to MAX_REDIRECTS); one elsewhere, like
    a missing file, means no rules.
    """
    robots_url = url.copy_with(path="/robots.txt", query=None, fragment=None)
    for _ in range(MAX_REDIRECTS + 1):
        try:
            status, _, body, location = await _read(
                conn, robots_url, accept="text/plain", cap=MAX_ROBOTS_BYTES
            )
        except _Refused as refused:
            if refused.too_large:
                return True  # RFC 9309: a crawler may ignore what lies past its limit (500 KiB at least)
            raise
        if status in REDIRECT_STATUSES:
            target = _redirect_target(robots_url, location)
            if target is None or not _same_site(host_of(target), host_of(url)):
                return True
            robots_url = target
            continue
        if status >= 500:
            return False  # "unreachable": assume complete disallow
        if status != 200:
            return True  # "unavailable" (4xx): no rules
        return RobotsRules(body.decode("utf-8", "replace")).allows(str(url))
    return True


def _redirect_target(url: httpx.URL, location: str) -> httpx.URL | None:
    """Return where a redirect points when it is a usable http(s) URL, else None."""
    try:
        target = url.join(location) if location else None
    except httpx.InvalidURL:
        return None
    return target if target is not None and target.scheme in ("http", "https") else None


async def _fetch(conn: Connection, url: httpx.URL, max_bytes: int) -> Page:
    host = host_of(url)
    for _ in range(MAX_REDIRECTS + 1):
        if not await _robots_allow(conn, url):
            raise _Refused(f"{host_of(url)}'s robots.txt disallows Uptimy from fetching {url.path}")
        status, content_type, body, location = await _read(conn, url, accept=ACCEPT, cap=max_bytes)
        if status not in REDIRECT_STATUSES:
            if status >= 400:
                raise _Refused(f"{host_of(url)} answered HTTP {status}")
            return Page(str(url), status, content_type, body)
        target = _redirect_target(url, location)
        if target is None:
            raise _Refused(f"{host_of(url)} answered HTTP {status} without a usable Location")
        if url.scheme == "https" and target.scheme != "https":
            raise _Refused(f"{host_of(url)} redirected from https to http; Uptimy does not follow that")
        if not _same_site(host_of(target), host):
            raise _Refused(
                f"{host_of(url)} redirected to {host_of(target)}, another host; Uptimy follows redirects on the same host only"
            )
        url = target
    raise _Refused(f"{host} redirected more than {MAX_REDIRECTS} times")


async def fetch_page_async(
    url: str,
    *,
    timeout: float,
    allow_private: bool,
    nameservers: tuple[str, ...] = (),
    max_bytes: int = MAX_PAGE_BYTES,
    user_agent: str = USER_AGENT,
) -> Page | FetchFailed:
    """Fetch ``url`` as described above, all of it within ``timeout`` seconds."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, UnicodeError):
        return FetchFailed("The pricing page's URL is not a valid URL")
    if parsed.scheme not in ("http", "https") or not parsed.host:
        return FetchFailed("The pricing page's URL is not an http(s) URL")
    loop = asyncio.get_running_loop()
    conn = Connection(
        allow_private=allow_private,
        user_agent=user_agent,
        ssl_context=default_ssl_context(),
        nameservers=nameservers,
        deadline=loop.time() + timeout,
    )
    try:
        async with asyncio.timeout(timeout):
            return await _fetch(conn, parsed, max_bytes)
    except _Refused as refused:
        return FetchFailed(refused.reason)
    except TimeoutError:
        words = conn.dns_timeout_words(timeout) or f"{host_of(parsed)} did not answer within {timeout:g} s"
        return FetchFailed(words)
    except OSError as error:
        return FetchFailed(f"The connection to {host_of(parsed)} failed: {wire.os_error_words(error)}")
    finally:
        await conn.aclose()


async def address_problem_async(
    url: str, *, nameservers: tuple[str, ...] = (), timeout: float = 5.0
) -> str | None:
    """Return the address guard's refusal of ``url``'s host, else None.

    The guard and its words are the channels' on save (``probes.connection.Connection.pin``:
    a literal or resolved private, loopback or link-local address is refused). A lookup that
    fails or does not answer in time is no refusal here: the fetch says so when it runs.
    """
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, UnicodeError):
        return None
    loop = asyncio.get_running_loop()
    conn = Connection(
        allow_private=False,
        user_agent=USER_AGENT,
        ssl_context=default_ssl_context(),
        nameservers=nameservers,
        deadline=loop.time() + timeout,
    )
    try:
        async with asyncio.timeout(timeout):
            await conn.pin(parsed)
    except CheckFailed as failed:
        return failed.reason if failed.kind is FailureKind.BLOCKED_ADDRESS else None
    except (TimeoutError, OSError):
        return None
    finally:
        await conn.aclose()
    return None


def address_problem(url: str, *, nameservers: tuple[str, ...] = (), timeout: float = 5.0) -> str | None:
    """Return the address guard's refusal of ``url``'s host from synchronous code, else None (see above)."""
    return run_sync(lambda: address_problem_async(url, nameservers=nameservers, timeout=timeout))


def fetch_page(
    url: str,
    *,
    timeout: float,
    allow_private: bool,
    nameservers: tuple[str, ...] = (),
    max_bytes: int = MAX_PAGE_BYTES,
) -> Page | FetchFailed:
    """Fetch ``url`` from synchronous code (a thread of its own when an event loop runs here)."""
    return run_sync(
        lambda: fetch_page_async(
            url, timeout=timeout, allow_private=allow_private, nameservers=nameservers, max_bytes=max_bytes
        )
    )
