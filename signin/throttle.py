"""Count client registrations per client address; refuse more than UPTIMY_OAUTH_REGISTRATIONS_PER_HOUR."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest

from monitors.ratelimit import rate_take

PREFIX = "signin:registrations:"
WINDOW_SECONDS = 3600


def registration_wait_seconds(request: HttpRequest) -> int:
    """Count this registration attempt atomically; return 0 when it may go ahead, else the seconds until one may."""
    return rate_take(
        keys=[PREFIX + request.META.get("REMOTE_ADDR", "")],
        limit=settings.UPTIMY_OAUTH_REGISTRATIONS_PER_HOUR,
        window=WINDOW_SECONDS,
    )
