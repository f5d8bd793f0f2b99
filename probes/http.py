"""Check an HTTP(S) endpoint (type 1): expected status, keyword present or absent, redirects.

It shares the MCP check's connection layer: the same address guard on the URL and on every
redirect target, the same timings, the same failure kinds and the same 5 MiB body cap.
"""

from __future__ import annotations

import asyncio
import codecs
import time
from dataclasses import replace

import httpx

from probes.connection import (
    MAX_BODY_BYTES,
    REDIRECT_STATUSES,
    CheckFailed,
    Connection,
    media_type,
    redirect_target,
    shown_url,
    text_message,
)
from probes.types import FailureKind, HttpConfig, ProbeOutcome, Status
from probes.wire import Response, WireError

MAX_REDIRECTS = 5


async def check_http(config: HttpConfig, conn: Connection, *, deadline: float) -> ProbeOutcome:
    """Return the outcome of one HTTP check; ``deadline`` is the loop time the whole check ends by."""
    started = time.perf_counter()
    phase = ["request"]
    try:
        async with asyncio.timeout_at(deadline):
            outcome = await _run(config, conn, phase)
    except CheckFailed as failed:
        outcome = ProbeOutcome(
            status=Status.DOWN, kind=failed.kind, reason=failed.reason, http_status=failed.http_status
        )
    except TimeoutError:
        outcome = ProbeOutcome(
            status=Status.DOWN,
            kind=FailureKind.TIMEOUT,
            reason=f"No complete answer within {config.timeout:g} s (during the {phase[0]})",
        )
    total_ms = (time.perf_counter() - started) * 1000
    return replace(outcome, timings=conn.timings(total_ms))


async def _run(config: HttpConfig, conn: Connection, phase: list[str]) -> ProbeOutcome:
    response = await _fetch(config, conn)
    status = response.status_code
    if not any(status in expected for expected in config.expected_status):
        phase[0] = "body"
        body = await _read_some(conn, response)
        return _down(
            FailureKind.HTTP_STATUS,
            _status_words(config, status, text_message(body, media_type(response))),
            status,
        )
    if config.keyword is None or config.method == "HEAD":
        phase[0] = "body"
        warnings = await _drain(conn, response)
        return ProbeOutcome(status=Status.UP, http_status=status, warnings=warnings)
    phase[0] = "body"
    body = await conn.read_body(response)
    found = config.keyword in body.decode(_charset(response), errors="replace")
    if found and config.keyword_absent:
        return _down(
            FailureKind.KEYWORD, f"Keyword {config.keyword!r} is in the response; expected it absent", status
        )
    if not found and not config.keyword_absent:
        return _down(FailureKind.KEYWORD, f"Keyword {config.keyword!r} is not in the response", status)
    return ProbeOutcome(status=Status.UP, http_status=status)


def _charset(response: Response) -> str:
    """Return the charset the Content-Type names when Python knows it, else UTF-8."""
    for param in (response.headers.get("content-type") or "").split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip('"')
            try:
                return codecs.lookup(charset).name
            except LookupError:
                break
    return "utf-8"


def _down(kind: FailureKind, reason: str, status: int) -> ProbeOutcome:
    return ProbeOutcome(status=Status.DOWN, kind=kind, reason=reason, http_status=status)


def _status_words(config: HttpConfig, status: int, message: str) -> str:
    expected = ", ".join(str(item) for item in config.expected_status)
    return f"HTTP {status} (expected {expected})" + (f": {message}" if message else "")


async def _fetch(config: HttpConfig, conn: Connection) -> Response:
    """Return the final response, following redirects through the guard when the check asks to."""
    url = httpx.URL(config.uri)
    method = config.method
    body: bytes | None = config.body.encode() if config.body else None
    for _hop in range(MAX_REDIRECTS + 1):
        response = await conn.send(method, url, headers=list(config.headers), content=body)
        if not config.follow_redirects or response.status_code not in REDIRECT_STATUSES:
            return response
        await conn.discard(response)
        target = redirect_target(url, response)
        # Browsers turn 301/302 POSTs and every 303 into GETs; 307 and 308 keep the request.
        if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
            method, body = ("HEAD" if method == "HEAD" else "GET"), None
        url = target
    raise CheckFailed(
        FailureKind.REDIRECT_REFUSED,
        f"Redirect refused: more than {MAX_REDIRECTS} redirects (next: {shown_url(url)})",
    )


async def _read_some(conn: Connection, response: Response) -> bytes:
    """Return up to 4 KiB of an error body for its message; a larger body is not worth waiting for."""
    chunks: list[bytes] = []
    size = 0
    try:
        while chunk := await response.read_chunk():
            chunks.append(chunk)
            size += len(chunk)
            if size >= 4096:
                break
    except WireError:
        pass
    finally:
        await response.aclose()
    return b"".join(chunks)


async def _drain(conn: Connection, response: Response) -> tuple[str, ...]:
    """Read the body to its end (so the total time includes it) up to the cap; past it, stop and warn."""
    size = 0
    try:
        while chunk := await response.read_chunk():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                return ("The body is larger than 5 MiB; reading stopped at the cap",)
    except WireError as exc:
        raise CheckFailed(
            FailureKind.CONNECT, f"The connection broke while reading the body: {exc.detail}"
        ) from None
    finally:
        await response.aclose()
    return ()
