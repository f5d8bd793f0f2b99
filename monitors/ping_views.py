"""The heartbeat ping endpoint: /ping/<uuid>[/start|/fail|/<exit status>], GET, HEAD or POST; no session, no CSRF."""

from __future__ import annotations

import uuid

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from monitors.access_rules import clean_user_agent, client_address
from monitors.services.heartbeats import MAX_BODY_BYTES, ping_record
from probes.heartbeats import PingKind


@csrf_exempt
@require_http_methods(["GET", "HEAD", "POST"])
def ping(request: HttpRequest, ping_id: uuid.UUID, action: str = "") -> HttpResponse:
    """Record one ping and answer OK (200), 404 for an unknown id or action, 429 over the rate limit."""
    kind, exit_status = action_kind(action)
    if kind is None:
        return _text("Not found", 404)
    # Read at most the cap: a larger body is cut, never buffered whole.
    body = request.read(MAX_BODY_BYTES) if request.method == "POST" else b""
    answer = ping_record(
        ping_id=ping_id,
        kind=kind,
        exit_status=exit_status,
        body=body,
        source=client_address(request.META.get("REMOTE_ADDR")),
        user_agent=clean_user_agent(request.META.get("HTTP_USER_AGENT", "")),
        now=timezone.now(),
    )
    if not answer.found:
        return _text("Not found", 404)
    if answer.limited:
        return _text("Rate limited", 429)
    return _text("OK", 200)


def action_kind(action: str) -> tuple[PingKind | None, int | None]:
    """Return what a ping URL's action says (kind, exit status), or (None, None) for no known action."""
    if action == "":
        return PingKind.SUCCESS, None
    if action in ("start", "fail"):
        return PingKind(action), None
    if action.isascii() and action.isdigit() and len(action) <= 3 and int(action) <= 255:
        return PingKind.EXIT, int(action)
    return None, None


def _text(text: str, status: int) -> HttpResponse:
    return HttpResponse(text, status=status, content_type="text/plain; charset=utf-8")
