"""Adapt django-oauth-toolkit to Uptimy: S256 alone for PKCE, and an organization on every code and token.

The toolkit runs the protocol (oauthlib underneath) and stores codes and tokens with their
client, user, scopes and RFC 8707 resource; these two classes, named in settings.OAUTH2_PROVIDER,
add what is Uptimy's. The organization chosen on the consent screen rides on the oauthlib request
(``request.uptimy_organization_id``) from the consent to the code, from the code to the tokens,
and from a refresh token to the tokens it mints. A code exchanged twice revokes what it issued
(``validate_code``, ``save_bearer_token``; signin.models.CodeRedemption).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2 import Server
from oauthlib.oauth2.rfc6749 import errors
from oauthlib.oauth2.rfc6749.grant_types.authorization_code import code_challenge_method_s256

from monitors.models import Membership
from signin.client_metadata import ClientMetadataRefused, is_metadata_url
from signin.models import AccessTokenOrganization, GrantOrganization, RefreshTokenOrganization
from signin.services import (
    client_token_revoke,
    code_redemption_claim,
    code_redemption_link,
    code_redemption_replayed,
    grant_organization_bind,
    issued_tokens_revoke,
    metadata_client_refresh,
)

ORGANIZATION_ATTRIBUTE = "uptimy_organization_id"
# The code exchange under way (signin.models.CodeRedemption) and what it issued, on the oauthlib request.
REDEMPTION_ATTRIBUTE = "uptimy_code_redemption_id"
ISSUED_ACCESS_ATTRIBUTE = "uptimy_issued_access_token_id"
ISSUED_FAMILY_ATTRIBUTE = "uptimy_issued_token_family"


class S256Server(Server):  # type: ignore[misc]  # oauthlib is untyped
    """Refuse PKCE's "plain" method, and a challenge sent without a method (which RFC 7636 reads as plain)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # oauthlib looks the method up in this mapping at the authorize step and again at the
        # token step; with S256 alone, "plain" is refused before the consent screen is shown.
        self.auth_grant._code_challenge_methods = {"S256": code_challenge_method_s256}


class ClientMetadataError(errors.FatalClientError):  # type: ignore[misc]  # oauthlib is untyped
    """Refuse a client whose metadata document could not be had or was refused, saying why.

    Fatal: the consent screen shows it and never redirects, as the redirect URI it would go to
    is one the refused document was to vouch for.
    """

    error = "invalid_client"
    status_code = 400


class OrganizationValidator(OAuth2Validator):  # type: ignore[misc]  # django-oauth-toolkit is untyped
    """Carry the consented organization from the code to the tokens; refuse a refresh once membership is gone.

    A client_id that is an https URL is a Client ID Metadata Document: before the toolkit loads
    the client, its row is made current from the document (``signin.services.metadata_client_refresh``).
    """

    def _load_application(self, client_id: str, request: Any) -> Any:
        loaded = getattr(request, "client", None)
        if client_id and is_metadata_url(client_id) and getattr(loaded, "client_id", None) != client_id:
            # Only the authorization request (behind the sign-in page) may add a client; the token
            # and revocation endpoints, open to anyone, only refresh one a user has already seen on
            # the consent screen, and keep it as it was if its host fails.
            at_consent = bool(request.response_type) and not request.grant_type
            try:
                metadata_client_refresh(
                    client_id=client_id, may_add=at_consent, keep_on_failure=not at_consent
                )
            except ClientMetadataRefused as refused:
                raise ClientMetadataError(description=refused.description, request=request) from None
        return super()._load_application(client_id, request)

    def _create_authorization_code(self, request: Any, code: Any, expires: Any = None) -> Any:
        organization_id = getattr(request, ORGANIZATION_ATTRIBUTE, None)
        if organization_id is None:
            # Only an Allow on the consent screen names the organization; a client an admin marked
            # "skip authorization" in the toolkit's admin gets an error instead of a code.
            raise errors.AccessDeniedError(
                description="Uptimy grants access for one organization, chosen on its consent screen.",
                request=request,
            )
        with transaction.atomic():
            grant = super()._create_authorization_code(request, code, expires)
            grant_organization_bind(grant=grant, organization_id=organization_id)
        return grant

    def revoke_token(self, token: str, token_type_hint: Any, request: Any, *args: Any, **kwargs: Any) -> None:
        """Revoke as the toolkit does (RFC 7009), and log it in the organization the token was for."""
        client_token_revoke(
            token=token,
            application=getattr(request, "client", None),
            revoke=lambda: super(OrganizationValidator, self).revoke_token(
                token, token_type_hint, request, *args, **kwargs
            ),
        )

    def validate_code(
        self, client_id: str, code: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        if not super().validate_code(client_id, code, client, request, *args, **kwargs):
            # Gone: never issued, expired, or exchanged already (the toolkit deletes it then). A
            # replay revokes what the first exchange issued (RFC 6749 §4.1.2); all are invalid_grant.
            code_redemption_replayed(code=code, application=client, now=timezone.now())
            return False
        binding = GrantOrganization.objects.filter(grant__code=code, grant__application=client).first()
        if binding is None:
            return False
        setattr(request, ORGANIZATION_ATTRIBUTE, binding.organization_id)
        return True

    def confirm_redirect_uri(
        self,
        client_id: str,
        code: str,
        redirect_uri: str,
        client: Any,
        request: Any,
        *args: Any,
        **kwargs: Any,
    ) -> bool:
        """Confirm the redirect URI as the toolkit does, then claim the code: the token request's last check.

        Claimed only once the code, its PKCE verifier and its redirect URI are good, so a
        request that fails one of them (a client's typo, a thief without the verifier) does
        not use the code up. Of two exchanges of one code that both got this far, the one
        that cannot claim it is the replay.
        """
        if not super().confirm_redirect_uri(client_id, code, redirect_uri, client, request, *args, **kwargs):
            return False
        redemption_id = code_redemption_claim(code=code, application=client)
        if redemption_id is None:
            code_redemption_replayed(code=code, application=client, now=timezone.now())
            raise errors.InvalidGrantError(request=request)
        setattr(request, REDEMPTION_ATTRIBUTE, redemption_id)
        return True

    def save_bearer_token(self, token: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        """Save the tokens as the toolkit does, then tie those a code issued to the code; revoke them if it was replayed meanwhile.

        After the toolkit's transaction has committed, so that a replay racing this exchange
        either finds the link (and revokes the tokens) or has marked the code first (and this
        revokes them and answers invalid_grant): never two working tokens from one code.
        """
        saved = super().save_bearer_token(token, request, *args, **kwargs)
        redemption_id = getattr(request, REDEMPTION_ATTRIBUTE, None)
        if redemption_id is not None and request.grant_type == "authorization_code":
            access_token_id = getattr(request, ISSUED_ACCESS_ATTRIBUTE, None)
            token_family = getattr(request, ISSUED_FAMILY_ATTRIBUTE, None)
            linked = code_redemption_link(
                redemption_id=redemption_id, access_token_id=access_token_id, token_family=token_family
            )
            if not linked:
                # Raced by a replay that marked the code first: neither exchange keeps a token.
                issued_tokens_revoke(
                    access_token_id=access_token_id, token_family=token_family, application=request.client
                )
                raise errors.InvalidGrantError(request=request)
        return saved

    def validate_refresh_token(
        self, refresh_token: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        if not super().validate_refresh_token(refresh_token, client, request, *args, **kwargs):
            return False
        binding = RefreshTokenOrganization.objects.filter(
            refresh_token=request.refresh_token_instance
        ).first()
        if binding is None:
            return False
        still_member = Membership.objects.filter(
            user_id=request.refresh_token_instance.user_id, organization_id=binding.organization_id
        ).exists()
        if not still_member:
            return False
        setattr(request, ORGANIZATION_ATTRIBUTE, binding.organization_id)
        return True

    def _create_access_token(
        self, expires: Any, request: Any, token: Any, source_refresh_token: Any = None
    ) -> Any:
        access_token = super()._create_access_token(expires, request, token, source_refresh_token)
        setattr(request, ISSUED_ACCESS_ATTRIBUTE, access_token.pk)
        organization_id = getattr(request, ORGANIZATION_ATTRIBUTE, None)
        if organization_id is not None:
            AccessTokenOrganization.objects.create(access_token=access_token, organization_id=organization_id)
        return access_token

    def _create_refresh_token(
        self, request: Any, refresh_token_code: str, access_token: Any, previous_refresh_token: Any
    ) -> Any:
        refresh_token = super()._create_refresh_token(
            request, refresh_token_code, access_token, previous_refresh_token
        )
        setattr(request, ISSUED_FAMILY_ATTRIBUTE, refresh_token.token_family)
        organization_id = getattr(request, ORGANIZATION_ATTRIBUTE, None)
        if organization_id is not None:
            RefreshTokenOrganization.objects.create(
                refresh_token=refresh_token, organization_id=organization_id
            )
        return refresh_token
