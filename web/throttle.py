"""Count sign-in attempts per client address and per user name; refuse more than the settings allow."""

from __future__ import annotations

import hashlib
import math

from django.conf import settings
from django.http import HttpRequest

from monitors.ratelimit import rate_give_back, rate_take

PREFIX = "web:login-failures:"


def _keys(request: HttpRequest, username: str) -> list[str]:
    # Hashed: a user name is whatever was typed, and a counter's key must be short and plain.
    client = request.META.get("REMOTE_ADDR", "")
    named = hashlib.sha256(username.strip().lower().encode()).hexdigest()[:32]
    return [f"{PREFIX}ip:{client}", f"{PREFIX}user:{named}"]


def login_attempt(request: HttpRequest, username: str) -> int:
    """Count one sign-in attempt for the client's address and the user name, before the password is checked.

    Return 0 when the attempt may go ahead, else the seconds to wait: then the password must not
    be checked. Counted atomically (monitors.ratelimit), so parallel attempts can't share a slot.
    """
    return rate_take(
        keys=_keys(request, username),
        limit=settings.UPTIMY_LOGIN_ATTEMPTS,
        window=settings.UPTIMY_LOGIN_WINDOW_SECONDS,
    )


def login_attempt_succeeded(request: HttpRequest, username: str) -> None:
    """Give back the slot of an attempt that signed in: only failures may lock a user out."""
    rate_give_back(keys=_keys(request, username))


def wait_words(seconds: int) -> str:
    """Say a wait in minutes (at least one), as the sign-in form shows it."""
    minutes = max(1, math.ceil(seconds / 60))
    return f"{minutes} minute{'s' if minutes != 1 else ''}"
