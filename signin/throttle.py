"""Count client registrations per client address; refuse more than UPTIMY_OAUTH_REGISTRATIONS_PER_HOUR."""

from __future__ import annotations

import math
import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

PREFIX = "signin:registrations:"
WINDOW_SECONDS = 3600


def registration_wait_seconds(request: HttpRequest) -> int:
    """Count this registration attempt; return 0 when it may go ahead, else the seconds until one may."""
    key = PREFIX + request.META.get("REMOTE_ADDR", "")
    now = time.time()
    attempts: list[float] = [t for t in cache.get(key, []) if t > now - WINDOW_SECONDS]
    limit = settings.UPTIMY_OAUTH_REGISTRATIONS_PER_HOUR
    if limit <= 0:  # an operator who closed registration
        return WINDOW_SECONDS
    if len(attempts) >= limit:
        return max(1, math.ceil(attempts[0] + WINDOW_SECONDS - now))
    attempts.append(now)
    cache.set(key, attempts[-limit:], WINDOW_SECONDS)
    return 0
