"""Resolve an ``Authorization`` header to what its bearer may do: the one place credentials are read.

An API key (monitors' ApiKey) grants its organization, read only or read and write. An OAuth
access token issued by Uptimy's authorization server (``signin``) grants the organization and
scopes its user consented to, bound to the MCP endpoint's URL (:func:`_oauth_grant`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from django.utils import timezone

from monitors.access_rules import api_key_expired, api_key_expired_message
from monitors.audit import Actor
from monitors.models import ApiKey
from monitors.selectors import api_key_by_hash
from monitors.services import api_key_touch, hash_api_key
from signin.tokens import oauth_grant

READ = "read"
WRITE = "write"


@dataclass(frozen=True, slots=True)
class Grant:
    """What one credential may do: its organization, its scopes, who (when a person signed in), and how."""

    organization_id: int
    scopes: frozenset[str]
    user_id: int | None
    via: Literal["key", "oauth"]
    # Which credential, for the audit log (monitors.audit): not part of what it grants.
    api_key_id: int | None = field(default=None, compare=False)
    oauth_client_id: str = field(default="", compare=False)
    oauth_client_name: str = field(default="", compare=False)

    @property
    def can_write(self) -> bool:
        return WRITE in self.scopes

    def actor(self, *, address: str | None, user_agent: str) -> Actor:
        """Return who acts with this grant, for the audit log: the key, or the OAuth client and its person, via MCP."""
        if self.via == "key":
            actor = Actor(kind="api_key", via="mcp", api_key_id=self.api_key_id)
        else:
            actor = Actor(
                kind="oauth_client",
                via="mcp",
                user_id=self.user_id,
                oauth_client_id=self.oauth_client_id,
                oauth_client_name=self.oauth_client_name,
            )
        return actor.seen_from(address=address, user_agent=user_agent)


class CredentialExpired(Exception):
    """Refuse a known credential whose time is up; ``message`` says so (the 401's detail)."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


def grant_for(authorization: str | None, *, resource: str, address: str | None = None) -> Grant | None:
    """Return the grant of an ``Authorization: Bearer …`` header value, or None for no or a bad credential.

    ``resource`` is the MCP endpoint's public URL, which an OAuth token must have been issued for;
    ``address`` is the client's, recorded as a key's last use. An expired API key raises
    :class:`CredentialExpired`, so its holder hears why.
    """
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return _key_grant(token, address=address) or _oauth_grant(token, resource=resource)


def _key_grant(raw_key: str, *, address: str | None) -> Grant | None:
    api_key = api_key_by_hash(key_hash=hash_api_key(raw_key))
    if api_key is None or not api_key.is_active:
        return None
    now = timezone.now()
    if api_key.expires_at is not None and api_key_expired(api_key.expires_at, now=now):
        raise CredentialExpired(api_key_expired_message(api_key.expires_at))
    api_key_touch(api_key=api_key, now=now, address=address)
    scopes = {READ, WRITE} if api_key.scope == ApiKey.Scope.READ_WRITE else {READ}
    return Grant(
        organization_id=api_key.organization_id,
        scopes=frozenset(scopes),
        user_id=None,
        via="key",
        api_key_id=api_key.pk,
    )


def _oauth_grant(token: str, *, resource: str) -> Grant | None:
    """Return the grant of an OAuth access token Uptimy's authorization server issued for ``resource``."""
    granted = oauth_grant(token, resource=resource)
    if granted is None:
        return None
    return Grant(
        organization_id=granted.organization_id,
        scopes=granted.scopes,
        user_id=granted.user_id,
        via="oauth",
        oauth_client_id=granted.client_id,
        oauth_client_name=granted.client_name,
    )
