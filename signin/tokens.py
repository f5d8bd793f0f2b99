"""Answer the MCP endpoint's one question about a bearer token: whose, for which organization, allowing what.

``oauth_grant`` is the whole interface between sign-in and the MCP server. It reads the token the
toolkit stored (by its SHA-256: tokens are hashed at rest) and the organization beside it, and
checks it against the membership as it is now, so a removed member's assistant stops at once and a
demoted one's loses write.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from django.utils import timezone
from oauth2_provider.models import get_access_token_model

from monitors.models import Membership
from signin.consent import WRITE, granted_scopes


@dataclass(frozen=True, slots=True)
class OAuthGrant:
    """Say what a valid access token lets its bearer do: act as ``user_id`` in ``organization_id`` with ``scopes``."""

    organization_id: int
    user_id: int
    scopes: frozenset[str]
    # Which client holds the token, for the audit log (not part of what it grants).
    client_id: str = field(default="", compare=False)
    client_name: str = field(default="", compare=False)

    @property
    def can_write(self) -> bool:
        return WRITE in self.scopes


def oauth_grant(token: str, *, resource: str) -> OAuthGrant | None:
    """Return what ``token`` grants at ``resource`` (the MCP endpoint's URL), or None when it grants nothing there.

    None for a token Uptimy never issued, an expired or revoked one, one issued for another
    resource (RFC 8707: a token for another server must not work here, nor one for here there),
    one without an organization (the registration endpoint's own tokens), and one whose user is
    inactive or no longer a member. Scopes are those granted, narrowed to what the user's role
    allows today (a viewer gets read only).
    """
    if not token:
        return None
    checksum = hashlib.sha256(token.encode()).hexdigest()
    access_token = (
        get_access_token_model()
        .objects.select_related("user", "uptimy_organization", "application")
        .filter(token_checksum=checksum)
        .first()
    )
    if access_token is None or access_token.expires <= timezone.now():
        return None
    binding = getattr(access_token, "uptimy_organization", None)
    user = access_token.user
    if binding is None or user is None or not user.is_active:
        return None
    if list(access_token.resource or []) != [resource]:
        return None
    role = (
        Membership.objects.filter(user_id=user.pk, organization_id=binding.organization_id)
        .values_list("role", flat=True)
        .first()
    )
    if role is None:
        return None
    scopes = granted_scopes(access_token.scope.split(), role)
    if not scopes:
        return None
    application = access_token.application
    return OAuthGrant(
        organization_id=binding.organization_id,
        user_id=user.pk,
        scopes=frozenset(scopes),
        client_id=str(getattr(application, "client_id", "") or ""),
        client_name=str(getattr(application, "name", "") or ""),
    )
