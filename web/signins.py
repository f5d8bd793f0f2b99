"""Tie the browser's request to its signed-in session record: at sign-in, and as it keeps coming back.

The records themselves are monitors' (``monitors.services.sign_in_session_*``); this module only
reads the request (its session key, client address and User-Agent) and keeps, in the session,
when the session was last marked seen, so the middleware writes at most every few minutes.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from django.http import HttpRequest
from django.utils import timezone

from monitors import services

SEEN_AT = "web_sign_in_seen_at"


def record_sign_in(request: HttpRequest) -> None:
    """Record the session ``login()`` just gave this request; call it right after ``login()``."""
    # login() saves the cycled session; a store that didn't has no key and nothing to end.
    _write(request, services.sign_in_session_record, now=timezone.now())


def mark_seen(request: HttpRequest, *, now: datetime) -> None:
    """Record that this signed-in session is in use, when it was last marked SIGN_IN_SEEN_INTERVAL ago or more."""
    seen_at = request.session.get(SEEN_AT)
    interval = services.SIGN_IN_SEEN_INTERVAL.total_seconds()
    if isinstance(seen_at, int | float) and 0 <= now.timestamp() - seen_at < interval:
        return
    _write(request, services.sign_in_session_seen, now=now)


def _write(request: HttpRequest, record: Callable[..., object], *, now: datetime) -> None:
    """Hand the request's session key, address and User-Agent to ``record``; note in the session when."""
    session_key = request.session.session_key
    if session_key is None:
        return
    record(
        user=request.user,
        session_key=session_key,
        address=request.META.get("REMOTE_ADDR"),
        user_agent=request.META.get("HTTP_USER_AGENT", ""),
        now=now,
    )
    request.session[SEEN_AT] = now.timestamp()
