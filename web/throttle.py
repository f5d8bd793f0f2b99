"""Count failed sign-ins per client address and per user name; refuse more than the settings allow."""

from __future__ import annotations

import hashlib
import math
import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

PREFIX = "web:login-failures:"


def _keys(request: HttpRequest, username: str) -> list[str]:
    # Hashed: a user name is whatever was typed, and a cache key must be short and plain.
    client = request.META.get("REMOTE_ADDR", "")
    named = hashlib.sha256(username.strip().lower().encode()).hexdigest()[:32]
    return [f"{PREFIX}ip:{client}", f"{PREFIX}user:{named}"]


def login_wait_seconds(request: HttpRequest, username: str) -> int:
    """Return how many seconds this client (or this user name) must wait before trying again; 0: may try."""
    now = time.time()
    waits = []
    for key in _keys(request, username):
        failures: list[float] = [
            t for t in cache.get(key, []) if t > now - settings.UPTIMY_LOGIN_WINDOW_SECONDS
        ]
        if len(failures) >= settings.UPTIMY_LOGIN_ATTEMPTS:
            waits.append(failures[0] + settings.UPTIMY_LOGIN_WINDOW_SECONDS - now)
    return math.ceil(max(waits)) if waits else 0


def login_failed(request: HttpRequest, username: str) -> None:
    """Count one failed sign-in for the client's address and for the user name tried."""
    now = time.time()
    window = settings.UPTIMY_LOGIN_WINDOW_SECONDS
    for key in _keys(request, username):
        failures = [t for t in cache.get(key, []) if t > now - window]
        failures.append(now)
        cache.set(key, failures[-settings.UPTIMY_LOGIN_ATTEMPTS :], window)


def wait_words(seconds: int) -> str:
    """Say a wait in minutes (at least one), as the sign-in form shows it."""
    minutes = max(1, math.ceil(seconds / 60))
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


# --- one attempt at a time: replaced by the atomic version at merge -----------------------------------


def login_attempt(request: HttpRequest, username: str) -> int:
    """Count one attempt for the client's address and the user name; return 0 when it may go ahead, else seconds to wait.

    Counted before the attempt is judged, so a wrong code counts; login_attempt_succeeded takes
    a good one back. (Thin wrapper over the functions above; replaced by the atomic version at merge.)
    """
    wait = login_wait_seconds(request, username)
    if wait:
        return wait
    login_failed(request, username)
    return 0


def login_attempt_succeeded(request: HttpRequest, username: str) -> None:
    """Take back the attempt login_attempt counted, now that it succeeded (replaced by the atomic version at merge)."""
    for key in _keys(request, username):
        failures: list[float] = cache.get(key, [])
        if failures:
            cache.set(key, failures[:-1], settings.UPTIMY_LOGIN_WINDOW_SECONDS)
