"""Send alerts over HTTP the way checks reach targets: resolved once, guarded, pinned, bounded.

This reuses the check engine's connection layer (``probes.connection``): the host is resolved
once through ``probes.resolver``, every address passes ``probes.netguard`` (unless
``allow_private``, the checks' own switch), the socket goes to the address that was checked
while the Host header and TLS SNI keep the name, and redirects are never followed. On top of it
this module puts what a delivery needs: one deadline for the whole attempt (DNS, connect, TLS,
request, answer), an answer read to at most :data:`MAX_ANSWER_BYTES` (the rest is never
buffered: the connection is closed), and the verdict as an :class:`~alerts.channels.base.Attempt`
whose sentence names the host only, never a path, a query or a secret the receiver echoed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

import httpx

from alerts.channels.base import Attempt
from probes import wire
from probes.connection import CheckFailed, Connection, host_of, text_message
from probes.redact import Redactor, redacting
from probes.runner import default_ssl_context, run_sync
from probes.types import FailureKind

# What a delivery reads of an answer: enough for an error message or an API's JSON reply.
MAX_ANSWER_BYTES = 64 * 1024
# The longest wait a receiver's Retry-After can ask for; anything longer is clamped.
MAX_RETRY_AFTER = 24 * 3600
USER_AGENT = "Uptimy-Alerts/1.0 (+https://uptimy.example; alert delivery)"

T = TypeVar("T")


@dataclass(frozen=True)
class Request:
    """One HTTP request of an attempt."""

    method: str
    url: str
    headers: tuple[tuple[str, str], ...]
    body: bytes | None = None


@dataclass(frozen=True)
class Answer:
    """A receiver's answer: status, headers, and at most MAX_ANSWER_BYTES of its body."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    # False when the body was longer than the cap (the rest was not read) or was cut short.
    complete: bool
    host: str

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((value for key, value in self.headers if key == name), None)


class Refused(Exception):
    """Carry the sentence of an attempt that got no usable answer (guard, DNS, connect, timeout)."""

    def __init__(self, sentence: str, *, permanent: bool = False) -> None:
        super().__init__(sentence)
        self.sentence = sentence
        self.permanent = permanent


def shown_host(url: str) -> str:
    """Return the host of ``url`` (and a non-default port) for a sentence: never its path or query."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, UnicodeError):
        return "the receiver"
    host = parsed.host or "the receiver"
    return f"{host}:{parsed.port}" if parsed.port else host


async def exchange(conn: Connection, request: Request) -> Answer:
    """Send one request on ``conn`` and return the answer, its body read to the cap at most."""
    url = httpx.URL(request.url)
    try:
        response = await conn.send(request.method, url, headers=list(request.headers), content=request.body)
    except CheckFailed as exc:
        raise Refused(exc.reason, permanent=exc.kind is FailureKind.BLOCKED_ADDRESS) from None
    chunks: list[bytes] = []
    size = 0
    complete = False
    try:
        while chunk := await response.read_chunk():
            room = MAX_ANSWER_BYTES - size
            chunks.append(chunk[:room])
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                break  # the rest is never read: closing the connection drops it
        else:
            complete = True
    except wire.WireError:
        pass  # the status came; a body cut short is still an answer
    finally:
        await response.aclose()
    headers = tuple(response.headers.items)
    return Answer(response.status_code, headers, b"".join(chunks), complete, host_of(url))


def verdict(
    answer: Answer,
    *,
    duration: float,
    secrets: Sequence[str] = (),
    is_permanent: Callable[[Answer], bool] | None = None,
    now: float | None = None,
) -> Attempt:
    """Return the attempt an answer makes: 2xx delivered; a redirect, 4xx or 5xx failed, saying why."""
    status = answer.status
    if 200 <= status < 300:
        return Attempt(ok=True, duration=duration, status_code=status)
    if 300 <= status < 400:
        target = answer.header("location")
        where = f" to {shown_host(target)}" if target else ""
        error = (
            f"{answer.host} answered HTTP {status}, a redirect{where}; alert deliveries follow no redirect"
        )
        return Attempt(ok=False, duration=duration, status_code=status, error=error)
    error = f"{answer.host} answered HTTP {status}"
    with redacting(Redactor(list(secrets))):
        detail = text_message(answer.body, _media_type(answer))
    if detail:
        error = f"{error}: {detail}"
    retry_after = None
    if status in {429, 503}:
        retry_after = retry_after_seconds(answer.header("retry-after"), now=now)
    return Attempt(
        ok=False,
        duration=duration,
        status_code=status,
        error=error,
        permanent=(is_permanent or gone)(answer),
        retry_after=retry_after,
    )


def gone(answer: Answer) -> bool:
    """Return whether the receiver says it is gone for good (410): retrying cannot help."""
    return answer.status == 410


def _media_type(answer: Answer) -> str:
    value = answer.header("content-type") or ""
    return value.split(";", 1)[0].strip().lower()


def retry_after_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """Return the seconds a Retry-After header asks for (delta-seconds or an HTTP date), clamped."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(min(int(value), MAX_RETRY_AFTER))
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    current = datetime.fromtimestamp(time.time() if now is None else now, UTC)
    return min(max(0.0, (moment - current).total_seconds()), float(MAX_RETRY_AFTER))


async def within_deadline(
    work: Callable[[Connection], Awaitable[T]],
    *,
    timeout: float,
    allow_private: bool,
    nameservers: tuple[str, ...],
    shown: str,
) -> T:
    """Run ``work`` on a fresh guarded connection, all of it within ``timeout`` seconds.

    Raises :class:`Refused` when the deadline passes (naming the DNS lookup when that was
    what hung) so a receiver that never answers ends in a bounded attempt.
    """
    loop = asyncio.get_running_loop()
    conn = Connection(
        allow_private=allow_private,
        user_agent=USER_AGENT,
        ssl_context=default_ssl_context(),
        nameservers=nameservers,
        deadline=loop.time() + timeout,
    )
    try:
        async with asyncio.timeout(timeout):
            return await work(conn)
    except TimeoutError:
        words = conn.dns_timeout_words(timeout) or f"{shown} did not answer within {timeout:g} s"
        raise Refused(words) from None
    except OSError as exc:
        raise Refused(f"The connection to {shown} failed: {wire.os_error_words(exc)}") from None
    finally:
        await conn.aclose()


def send_requests(
    requests: Sequence[Request],
    *,
    timeout: float,
    allow_private: bool,
    nameservers: tuple[str, ...] = (),
    secrets: Sequence[str] = (),
    is_permanent: Callable[[Answer], bool] | None = None,
) -> Attempt:
    """Send ``requests`` in order on one connection; the first that fails ends the attempt.

    Never raises for the receiver's behaviour: refusals, timeouts and error answers are attempts.
    """
    started = time.perf_counter()
    shown = shown_host(requests[0].url) if requests else "the receiver"

    async def work(conn: Connection) -> Attempt:
        last = Attempt(ok=True, duration=0.0)
        for index, request in enumerate(requests):
            answer = await exchange(conn, request)
            last = verdict(
                answer,
                duration=time.perf_counter() - started,
                secrets=secrets,
                is_permanent=is_permanent,
            )
            if not last.ok:
                if len(requests) > 1:
                    sentence = f"{last.error} (request {index + 1} of {len(requests)})"
                    last = Attempt(
                        ok=False,
                        duration=last.duration,
                        status_code=last.status_code,
                        error=sentence,
                        permanent=last.permanent,
                        retry_after=last.retry_after,
                    )
                return last
        return last

    try:
        return run_sync(
            lambda: within_deadline(
                work, timeout=timeout, allow_private=allow_private, nameservers=nameservers, shown=shown
            )
        )
    except Refused as exc:
        return Attempt(
            ok=False, duration=time.perf_counter() - started, error=exc.sentence, permanent=exc.permanent
        )


def target_problem(
    url: str, *, allow_private: bool, nameservers: tuple[str, ...] = (), timeout: float = 5.0
) -> str | None:
    """Return why the address guard refuses ``url``'s host (or its lookup fails), else None.

    For the API to tell on save that a channel points at a private address; the senders check
    again before every delivery, since DNS answers change.
    """

    async def work(conn: Connection) -> None:
        try:
            await conn.pin(httpx.URL(url))
        except CheckFailed as exc:
            raise Refused(exc.reason) from None

    try:
        run_sync(
            lambda: within_deadline(
                work,
                timeout=timeout,
                allow_private=allow_private,
                nameservers=nameservers,
                shown=shown_host(url),
            )
        )
    except Refused as exc:
        return exc.sentence
    return None
