"""Tie each authorization code, access token and refresh token to the organization it was granted for.

django-oauth-toolkit stores the codes and tokens (user, client, scopes, RFC 8707 resource, expiry);
an organization is Uptimy's own idea, so it lives beside them, one row per code or token, deleted
with it. A token without its row is not Uptimy's to honour (``signin.tokens.oauth_grant``).
"""

from __future__ import annotations

from django.db import models
from oauth2_provider.settings import oauth2_settings

from monitors.models import Organization


class OrganizationBinding(models.Model):
    """Say which organization the access was granted for."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"organization {self.organization_id}"


class GrantOrganization(OrganizationBinding):
    """The organization chosen on the consent screen, carried by the authorization code."""

    grant = models.OneToOneField(
        oauth2_settings.GRANT_MODEL, on_delete=models.CASCADE, related_name="uptimy_organization"
    )


class AccessTokenOrganization(OrganizationBinding):
    """The organization an access token acts in."""

    access_token = models.OneToOneField(
        oauth2_settings.ACCESS_TOKEN_MODEL, on_delete=models.CASCADE, related_name="uptimy_organization"
    )


class RefreshTokenOrganization(OrganizationBinding):
    """The organization the access tokens a refresh token mints act in."""

    refresh_token = models.OneToOneField(
        oauth2_settings.REFRESH_TOKEN_MODEL, on_delete=models.CASCADE, related_name="uptimy_organization"
    )


class CodeRedemption(models.Model):
    """Remember an authorization code once exchanged, and what it issued, so that its replay revokes that.

    RFC 6749 §4.1.2: a code presented twice SHOULD revoke the tokens issued from it. The toolkit
    deletes a code when it is exchanged, so the code is kept here, by its SHA-256 only. The
    unique checksum is the race guard: of two exchanges of one code, one inserts this row and
    the other is the replay. Kept as long as the longest-lived token it can have issued
    (``signin.services.code_redemptions_clear``).
    """

    code_checksum = models.CharField(max_length=64, unique=True)
    application = models.ForeignKey(
        oauth2_settings.APPLICATION_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    # What the exchange issued: its access token, and its refresh tokens' family (their rotations included).
    access_token = models.ForeignKey(
        oauth2_settings.ACCESS_TOKEN_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    token_family = models.UUIDField(null=True)
    redeemed_at = models.DateTimeField(auto_now_add=True, db_index=True)
    replayed_at = models.DateTimeField(null=True)

    def __str__(self) -> str:
        return f"code redeemed {self.redeemed_at:%Y-%m-%d %H:%M}"
