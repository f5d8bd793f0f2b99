"""Answer /ping/… straight from ASGI, before Django's handler: the heartbeat ping endpoint at its fastest.

The same endpoint as :mod:`monitors.ping_views` (which the URLconf keeps, for reverse() and the
test client), without what a ping never needs: the middleware stack (sessions, CSRF, auth, the
audit actor, the security headers of HTML pages), the URL resolver and the request and response
objects. uptimy/asgi.py routes ``/ping/`` here. A ping sets no cookie and reads no session; the
access log is gunicorn's, which redacts the ping id (uptimy.log_redaction) as before.

The database work runs on the worker's one thread for synchronous code, as Django runs a
synchronous view, and keeps that thread's connection between pings (Django would open one per
request under ASGI): a connection that failed is closed, and the next ping opens another.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from asgiref.sync import sync_to_async
from django.db import DatabaseError, connection
from django.utils import timezone

from monitors.access_rules import clean_user_agent, client_address
from monitors.ping_views import action_kind
from monitors.services.heartbeats import MAX_BODY_BYTES, PingAnswer, ping_record
from probes.heartbeats import PingKind

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

PREFIX = "/ping/"
METHODS = frozenset({"GET", "HEAD", "POST"})


async def ping_application(scope: Scope, receive: Receive, send: Send) -> None:
    """Record one ping and answer OK (200), 404 for an unknown id or action, 405, or 429 over the rate limit."""
    ping_id, kind, exit_status = _parse(scope["path"])
    method = scope["method"]
    if method not in METHODS:
        await _answer(send, 405, b"Method not allowed", head=False, allow=True)
        return
    head = method == "HEAD"
    if ping_id is None or kind is None:
        await _answer(send, 404, b"Not found", head=head)
        return
    body = await _body(receive) if method == "POST" else b""
    headers = dict(scope.get("headers") or [])
    client = scope.get("client")
    answer = await sync_to_async(_record, thread_sensitive=True)(
        ping_id=ping_id,
        kind=kind,
        exit_status=exit_status,
        body=body,
        source=client_address(client[0] if client else None),
        user_agent=clean_user_agent(headers.get(b"user-agent", b"").decode("latin-1")),
    )
    if not answer.found:
        await _answer(send, 404, b"Not found", head=head)
    elif answer.limited:
        await _answer(send, 429, b"Rate limited", head=head)
    else:
        await _answer(send, 200, b"OK", head=head)


def _record(**ping: Any) -> PingAnswer:
    try:
        return ping_record(now=timezone.now(), **ping)
    except DatabaseError:
        connection.close()  # a broken connection must not answer the next ping
        raise


def _parse(path: str) -> tuple[uuid.UUID | None, PingKind | None, int | None]:
    # The URLconf's own shapes: ping/<uuid> and ping/<uuid>/<action>, the uuid in lower case.
    match = _PATH.fullmatch(path)
    if match is None:
        return None, None, None
    kind, exit_status = action_kind(match["action"] or "")
    return uuid.UUID(match["id"]), kind, exit_status


_PATH = re.compile(
    r"/ping/(?P<id>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:/(?P<action>[^/]+))?"
)


async def _body(receive: Receive) -> bytes:
    """Read the request body up to the cap; what lies past it is left unread, never buffered."""
    chunks: list[bytes] = []
    size = 0
    while size < MAX_BODY_BYTES:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)[:MAX_BODY_BYTES]


async def _answer(send: Send, status: int, text: bytes, *, head: bool, allow: bool = False) -> None:
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(text)).encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"cache-control", b"no-store"),
    ]
    if allow:
        headers.append((b"allow", b"GET, HEAD, POST"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else text})
