"""Fetch a client's metadata document the way checks reach targets: guarded, pinned, bounded, anonymous.

Pure (no Django, no settings: the caller passes the address-guard switch, the TLS trust and the
timeout). The request goes through the check engine's connection layer (``probes.connection``):
the host is resolved once, every address passes ``probes.netguard`` unless ``allow_private``, and
the socket goes to the address that was checked. One GET, https only, redirects never followed
(the draft forbids following them), no cookie and no credential (the connection sends none), one
deadline for DNS, connect, TLS and the answer, and at most ``MAX_DOCUMENT_BYTES`` read.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass

import httpx

from probes import wire
from probes.connection import CheckFailed, Connection, media_type
from probes.runner import run_sync
from probes.types import FailureKind
from signin.client_metadata import MAX_DOCUMENT_BYTES, ClientMetadataRefused, RefusalReason

USER_AGENT = "Uptimy-SignIn/1.0 (+https://uptimy.example; OAuth client metadata fetch)"
ACCEPT = "application/json, application/*+json"


@dataclass(frozen=True, slots=True)
class FetchedDocument:
    """Hold a document's bytes as served, and the Cache-Control header that says how long to keep it."""

    body: bytes
    cache_control: str | None


def fetch_document(
    url: str,
    *,
    allow_private: bool,
    ssl_context: ssl.SSLContext,
    timeout: float,
    nameservers: tuple[str, ...] = (),
) -> FetchedDocument:
    """Return the document at ``url``, or raise ``ClientMetadataRefused`` saying why it could not be had.

    Runs its own event loop (on a thread of its own when the caller already runs one).
    """

    return run_sync(
        lambda: _fetch(
            url,
            allow_private=allow_private,
            ssl_context=ssl_context,
            timeout=timeout,
            nameservers=nameservers,
        )
    )


async def _fetch(
    url: str,
    *,
    allow_private: bool,
    ssl_context: ssl.SSLContext,
    timeout: float,
    nameservers: tuple[str, ...],
) -> FetchedDocument:
    try:
        target = httpx.URL(url)
        host = target.host  # decodes an IDNA name, which may fail
    except (httpx.InvalidURL, UnicodeError):
        raise ClientMetadataRefused(
            "bad_url", "The client_id is not a valid URL (its host name cannot be encoded)."
        ) from None
    if target.scheme != "https":
        raise ClientMetadataRefused("bad_url", "The client_id must be an https URL.")
    loop = asyncio.get_running_loop()
    conn = Connection(
        allow_private=allow_private,
        user_agent=USER_AGENT,
        ssl_context=ssl_context,
        nameservers=nameservers,
        deadline=loop.time() + timeout,
    )
    try:
        async with asyncio.timeout(timeout):
            return await _get(conn, target, host)
    except TimeoutError:
        words = conn.dns_timeout_words(timeout) or f"{host} did not answer within {timeout:g} s"
        raise ClientMetadataRefused(
            "timeout", f"Uptimy could not fetch the client's metadata: {words}."
        ) from None
    except OSError as exc:
        raise ClientMetadataRefused(
            "unreachable", f"Uptimy could not fetch the client's metadata: {wire.os_error_words(exc)}."
        ) from None
    finally:
        await conn.aclose()


async def _get(conn: Connection, target: httpx.URL, host: str) -> FetchedDocument:
    try:
        response = await conn.send("GET", target, headers=[("Accept", ACCEPT)])
    except CheckFailed as failed:
        raise _refusal(failed) from None
    status = response.status_code
    if status != 200:
        await response.aclose()
        if 300 <= status < 400:
            raise ClientMetadataRefused(
                "redirect",
                f"{host} answered HTTP {status}, a redirect; Uptimy fetches the client's metadata document"
                " from its client_id URL itself and follows no redirect.",
            )
        raise ClientMetadataRefused(
            "http_status",
            f"{host} answered HTTP {status} for the client's metadata document (200 is needed).",
        )
    served_as = media_type(response)
    if served_as != "application/json" and not (
        served_as.startswith("application/") and served_as.endswith("+json")
    ):
        await response.aclose()
        raise ClientMetadataRefused(
            "not_json",
            f"{host} served the client's metadata document as {served_as or 'no media type'}, not application/json.",
        )
    try:
        body = await conn.read_body(response, MAX_DOCUMENT_BYTES)
    except CheckFailed as failed:
        raise _refusal(failed) from None
    return FetchedDocument(body=body, cache_control=response.headers.get("cache-control"))


def _refusal(failed: CheckFailed) -> ClientMetadataRefused:
    reasons: dict[FailureKind, RefusalReason] = {
        FailureKind.BLOCKED_ADDRESS: "blocked_address",
        FailureKind.TOO_LARGE: "too_large",
    }
    reason = reasons.get(failed.kind, "unreachable")
    if reason == "too_large":
        return ClientMetadataRefused(
            "too_large", f"The client's metadata document is larger than {MAX_DOCUMENT_BYTES} bytes."
        )
    return ClientMetadataRefused(
        reason, f"Uptimy could not fetch the client's metadata: {failed.reason.rstrip('.')}."
    )
