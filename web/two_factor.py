"""Hold a sign-in between its two steps: the password was right, the second factor is still owed.

The session keeps the user's id, when the password step passed, the backend that checked it,
where to go next and the account's session hash; nobody is signed in (``request.user`` stays
anonymous) until the second step calls ``login``. The state expires after
UPTIMY_TWO_FACTOR_PENDING_SECONDS, lives only in this session (a new session key is issued
when it starts, so a planted session id is worth nothing), and dies with a password change.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.http import HttpRequest
from django.utils.crypto import constant_time_compare

PENDING = "web_two_factor_pending"


@dataclass(frozen=True, slots=True)
class Pending:
    """Say who passed the password step of this session's sign-in, and where they go once through."""

    user: AbstractBaseUser
    backend: str
    next_url: str


def pending_expired(*, started: float, now: float, lifetime: int) -> bool:
    """Return whether a password step passed at ``started`` is too old (or from the future) at ``now``."""
    return not 0 <= now - started <= lifetime


def pending_begin(
    request: HttpRequest, user: AbstractBaseUser, *, backend: str, next_url: str, now: datetime
) -> None:
    """Put ``user`` in this session as passed the password step, not signed in."""
    request.session.cycle_key()
    request.session[PENDING] = {
        "user": user.pk,
        "at": now.timestamp(),
        "backend": backend,
        "next": next_url,
        "hash": user.get_session_auth_hash(),
    }


def pending_of(request: HttpRequest, *, now: datetime) -> Pending | None:
    """Return this session's pending sign-in while it holds; clear it and return None once it doesn't."""
    state = request.session.get(PENDING)
    if not isinstance(state, dict):
        return None
    lifetime = settings.UPTIMY_TWO_FACTOR_PENDING_SECONDS
    if pending_expired(started=float(state.get("at", 0)), now=now.timestamp(), lifetime=lifetime):
        pending_clear(request)
        return None
    user_id = state.get("user")
    if not isinstance(user_id, int):
        pending_clear(request)
        return None
    user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
    # A password changed (or reset) since the first step ends the pending state: the hash moved.
    if user is None or not constant_time_compare(user.get_session_auth_hash(), str(state.get("hash", ""))):
        pending_clear(request)
        return None
    return Pending(user=user, backend=str(state.get("backend", "")), next_url=str(state.get("next", "")))


def pending_clear(request: HttpRequest) -> None:
    """Forget this session's pending sign-in."""
    request.session.pop(PENDING, None)
