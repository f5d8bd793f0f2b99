"""Post a status page's notices to webhook subscribers, signed per Standard Webhooks; pure (no Django).

Signing is the specification's reference library (``standardwebhooks``): ``webhook-id`` is
the delivery's id, the same on every retry, so a receiver drops duplicates;
``webhook-timestamp`` is this attempt's Unix time; ``webhook-signature`` is ``v1,<base64
HMAC-SHA256 of "{id}.{timestamp}.{body}">`` keyed with the bytes after ``whsec_``.

The request goes out the way checks reach targets (``probes.connection``): the host is resolved
once, every address passes ``probes.netguard`` unless ``allow_private``, the socket goes to the
address that was checked, and no redirect is followed (a 3xx is a failed attempt). One deadline
covers the whole attempt, and at most :data:`MAX_ANSWER_BYTES` of the answer are read.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import secrets
import ssl
import time
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx
from standardwebhooks import Webhook

from probes import wire
from probes.connection import CheckFailed, Connection, host_of
from probes.types import FailureKind

SECRET_PREFIX = "whsec_"
MAX_URL = 2048
MAX_ANSWER_BYTES = 16 * 1024
USER_AGENT = "Uptimy-StatusPages/1.0 (+https://uptimy.example; status page webhook)"


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    # The checks' trust (certifi's roots, as httpx builds them), built once per process; HTTP/1.1 only.
    context = httpx.create_ssl_context()
    context.set_alpn_protocols(["http/1.1"])
    return context


class BadUrl(ValueError):
    """Say why a webhook URL is refused, in a sentence for the API."""


def generate_secret() -> str:
    """Return a new signing secret: ``whsec_`` and 32 random bytes in base64 (shown once by the API)."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def check_url(value: str) -> str:
    """Return ``value`` when it is an http(s) URL with a host and nothing a URL should not carry."""
    if len(value) > MAX_URL:
        raise BadUrl(f"must be at most {MAX_URL} characters")
    try:
        url = httpx.URL(value)
    except (httpx.InvalidURL, UnicodeError):
        raise BadUrl("is not a valid URL") from None
    if url.scheme not in {"http", "https"}:
        raise BadUrl("must be an http:// or https:// URL")
    if not url.host:
        raise BadUrl("must name a host")
    if url.userinfo:
        raise BadUrl("must not carry a user name or password; verify the signature instead")
    if url.fragment:
        raise BadUrl("must not have a #fragment")
    return value


def masked_url(url: str) -> str:
    """Return the URL's origin, with ``/********`` for a path or query that may carry a token."""
    parsed = httpx.URL(url)
    origin = str(parsed.copy_with(path="/", query=None, fragment=None)).rstrip("/")
    return f"{origin}/********" if parsed.path not in {"", "/"} or parsed.query else origin


def signed_headers(*, secret: str, msg_id: str, timestamp: int, body: bytes) -> tuple[tuple[str, str], ...]:
    """Return the request's headers: the content type and the three Standard Webhooks headers."""
    moment = datetime.fromtimestamp(timestamp, UTC)
    signature = Webhook(secret).sign(msg_id=msg_id, timestamp=moment, data=body.decode())
    return (
        ("Content-Type", "application/json"),
        ("webhook-id", msg_id),
        ("webhook-timestamp", str(timestamp)),
        ("webhook-signature", signature),
    )


@dataclass(frozen=True)
class Posted:
    """What one attempt gave: delivered (2xx), or why not; ``permanent`` when retrying cannot help."""

    ok: bool
    status_code: int | None = None
    error: str = ""
    permanent: bool = False
    retry_after: float | None = None


def _shown(url: httpx.URL) -> str:
    return host_of(url) + (f":{url.port}" if url.port else "")


async def _post(
    url: httpx.URL, headers: tuple[tuple[str, str], ...], body: bytes, conn: Connection
) -> Posted:
    try:
        response = await conn.send("POST", url, headers=list(headers), content=body)
    except CheckFailed as exc:
        return Posted(ok=False, error=exc.reason, permanent=exc.kind is FailureKind.BLOCKED_ADDRESS)
    size = 0
    try:
        while chunk := await response.read_chunk():
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                break  # the rest is never read: closing the connection drops it
    except wire.WireError:
        pass  # the status came; a body cut short is still an answer
    finally:
        await response.aclose()
    status = response.status_code
    shown = _shown(url)
    if 200 <= status < 300:
        return Posted(ok=True, status_code=status)
    if 300 <= status < 400:
        return Posted(
            ok=False,
            status_code=status,
            error=f"{shown} answered HTTP {status}, a redirect; status page webhooks follow no redirect",
        )
    retry_after = None
    value = (response.headers.get("retry-after") or "").strip()
    if status in {429, 503} and value.isdigit():
        retry_after = float(min(int(value), 24 * 3600))
    return Posted(
        ok=False,
        status_code=status,
        error=f"{shown} answered HTTP {status}",
        permanent=status == 410,
        retry_after=retry_after,
    )


def post_signed(
    *,
    url: str,
    secret: str,
    msg_id: str,
    body: bytes,
    timeout: float,
    allow_private: bool,
    nameservers: tuple[str, ...] = (),
    now: float | None = None,
) -> Posted:
    """Post ``body`` to ``url`` signed with ``secret``, all within ``timeout`` seconds; never raise for the receiver."""
    target = httpx.URL(url)
    headers = signed_headers(
        secret=secret, msg_id=msg_id, timestamp=int(time.time() if now is None else now), body=body
    )

    async def attempt() -> Posted:
        loop = asyncio.get_running_loop()
        conn = Connection(
            allow_private=allow_private,
            user_agent=USER_AGENT,
            ssl_context=_ssl_context(),
            nameservers=nameservers,
            deadline=loop.time() + timeout,
        )
        try:
            async with asyncio.timeout(timeout):
                return await _post(target, headers, body, conn)
        except TimeoutError:
            words = conn.dns_timeout_words(timeout) or f"{_shown(target)} did not answer within {timeout:g} s"
            return Posted(ok=False, error=words)
        except OSError as exc:
            return Posted(
                ok=False, error=f"The connection to {_shown(target)} failed: {wire.os_error_words(exc)}"
            )
        finally:
            await conn.aclose()

    return asyncio.run(attempt())


def target_problem(
    url: str, *, allow_private: bool, nameservers: tuple[str, ...] = (), timeout: float = 5.0
) -> str | None:
    """Return why the address guard refuses ``url``'s host (or its lookup fails), else None.

    For the API to refuse a webhook at a private address on save; every delivery checks again,
    since DNS answers change.
    """

    async def check() -> str | None:
        conn = Connection(
            allow_private=allow_private,
            user_agent=USER_AGENT,
            ssl_context=_ssl_context(),
            nameservers=nameservers,
        )
        try:
            async with asyncio.timeout(timeout):
                await conn.pin(httpx.URL(url))
        except CheckFailed as exc:
            return exc.reason
        except TimeoutError:
            return f"DNS lookup of {_shown(httpx.URL(url))} got no answer within {timeout:g} s"
        finally:
            await conn.aclose()
        return None

    return asyncio.run(check())
