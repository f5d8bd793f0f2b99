"""Write a person's signed-in web sessions: record one at sign-in, see it, end it; keyword-only.

Django's session (the database engine's ``django_session`` row) is what signs a browser in;
:class:`monitors.models.SignInSession` is what the person sees of it. Ending one deletes both, so
that browser's next request is anonymous and sent to sign in.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.sessions.models import Session
from django.db import transaction

from monitors.access_rules import clean_user_agent, client_address
from monitors.models import SignInSession

# How stale last_seen_at may get: writing it on every request would turn each page view into a write.
SIGN_IN_SEEN_INTERVAL = timedelta(minutes=5)


def _session_store_delete(session_keys: list[str]) -> None:
    # Through the engine, not the table: its cache (if a cached engine is configured one day) goes too.
    store_class = import_module(settings.SESSION_ENGINE).SessionStore
    for key in session_keys:
        store_class().delete(key)


def sign_in_session_record(
    *, user: Any, session_key: str, address: str | None, user_agent: str, now: datetime
) -> SignInSession:
    """Record the session a person just signed in with; forget their sessions Django no longer has."""
    with transaction.atomic():
        SignInSession.objects.filter(user=user).exclude(
            session_key__in=Session.objects.filter(expire_date__gt=now).values("session_key")
        ).delete()
        record, _ = SignInSession.objects.update_or_create(
            session_key=session_key, defaults=_new_record(user, address, user_agent, now)
        )
    return record


def sign_in_session_seen(
    *, user: Any, session_key: str, address: str | None, user_agent: str, now: datetime
) -> None:
    """Record that a signed-in session made a request at ``now`` (the caller calls at most every few minutes).

    A session signed in before sessions were recorded (or by a path that records none) is
    recorded here, from its first request seen.
    """
    updated = SignInSession.objects.filter(session_key=session_key, user=user).update(
        last_seen_at=now, address=client_address(address)
    )
    if not updated:
        SignInSession.objects.get_or_create(
            session_key=session_key, defaults=_new_record(user, address, user_agent, now)
        )


def _new_record(user: Any, address: str | None, user_agent: str, now: datetime) -> dict[str, Any]:
    """Return a new session record's fields: begun and last seen ``now``, from the cleaned address and browser."""
    return {
        "user": user,
        "created_at": now,
        "last_seen_at": now,
        "address": client_address(address),
        "user_agent": clean_user_agent(user_agent),
    }


def sign_in_session_end(*, user: Any, public_id: str, current_session_key: str | None) -> bool:
    """End one of ``user``'s other sessions; return False when they have no such session.

    The current session is not ended here (signing out does that): a person ends the others.
    """
    with transaction.atomic():
        record = (
            SignInSession.objects.select_for_update()
            .filter(user=user, public_id=public_id)
            .exclude(session_key=current_session_key or "")
            .first()
        )
        if record is None:
            return False
        session_key = record.session_key
        record.delete()
    _session_store_delete([session_key])
    return True


def sign_in_sessions_end_others(*, user: Any, current_session_key: str | None) -> int:
    """End every session of ``user`` but the current one (None: every one); return how many were ended."""
    with transaction.atomic():
        others = SignInSession.objects.select_for_update().filter(user=user)
        if current_session_key:
            others = others.exclude(session_key=current_session_key)
        keys = list(others.values_list("session_key", flat=True))
        SignInSession.objects.filter(session_key__in=keys).delete()
    _session_store_delete(keys)
    return len(keys)


def sign_in_session_rekey(*, old_session_key: str | None, new_session_key: str | None) -> None:
    """Follow a session whose key Django cycled (update_session_auth_hash after a password change)."""
    if not old_session_key or not new_session_key or old_session_key == new_session_key:
        return
    SignInSession.objects.filter(session_key=old_session_key).update(session_key=new_session_key)


def sign_in_session_password_changed(
    *, user: Any, old_session_key: str | None, new_session_key: str | None
) -> int:
    """Keep the session whose person changed the password (its key cycled), end the others; return how many."""
    sign_in_session_rekey(old_session_key=old_session_key, new_session_key=new_session_key)
    return sign_in_sessions_end_others(user=user, current_session_key=new_session_key)
