"""Sign and read the acknowledge links that alerts carry: no login, bound to one incident, expiring.

django.core.signing with SECRET_KEY and a salt of its own, so no other signed value of the
project can pass for one; the token holds the incident's public id and when it was made.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.core import signing
from django.urls import reverse

SALT = "uptimy.alerts.acknowledge"


class LinkInvalid(Exception):
    """The token was not signed here, or was changed."""


class LinkExpired(LinkInvalid):
    """The token was signed here but is older than its lifetime."""


class _Signer(signing.TimestampSigner):
    """Stamp tokens with a given moment instead of the clock's (the caller's ``now``)."""

    def __init__(self, *, made_at: datetime | None = None) -> None:
        super().__init__(salt=SALT)
        self._made_at = made_at

    def timestamp(self) -> str:
        if self._made_at is None:
            return super().timestamp()
        return signing.b62_encode(int(self._made_at.timestamp()))


def link_lifetime() -> timedelta:
    return timedelta(hours=int(settings.UPTIMY_ACK_LINK_HOURS))


def acknowledge_token(*, incident_public_id: uuid.UUID, now: datetime) -> str:
    """Return a token that acknowledges this incident until ``now`` + the link lifetime."""
    return _Signer(made_at=now).sign(str(incident_public_id))


def incident_of_token(token: str) -> uuid.UUID:
    """Return the incident a token acknowledges; raise LinkExpired or LinkInvalid."""
    try:
        value = _Signer().unsign(token, max_age=link_lifetime())
    except signing.SignatureExpired:
        raise LinkExpired(
            "This acknowledge link has expired; acknowledge the incident in the API instead."
        ) from None
    except signing.BadSignature:
        raise LinkInvalid("This acknowledge link is not valid.") from None
    try:
        return uuid.UUID(value)
    except ValueError:
        raise LinkInvalid("This acknowledge link is not valid.") from None


def acknowledge_url(*, incident_public_id: uuid.UUID, now: datetime) -> str:
    """Return the absolute acknowledge link an alert carries (UPTIMY_PUBLIC_URL + the route)."""
    token = acknowledge_token(incident_public_id=incident_public_id, now=now)
    path = reverse("alerts:acknowledge-link", kwargs={"token": token})
    return settings.UPTIMY_PUBLIC_URL.rstrip("/") + path
