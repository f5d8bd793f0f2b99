"""Write what sign-in owns: a registered client, a client known by its metadata document, an exchanged code."""

from __future__ import annotations

import functools
import hashlib
import logging
import ssl
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone
from oauth2_provider.generators import generate_client_secret
from oauth2_provider.models import get_access_token_model, get_application_model, get_refresh_token_model
from oauth2_provider.settings import oauth2_settings

from monitors.audit import SYSTEM, current_actor
from monitors.services import audit_record
from probes.runner import default_ssl_context
from signin.client_fetch import fetch_document
from signin.client_metadata import (
    ClientMetadataRefused,
    client_document,
    client_id_url_problem,
    freshness_seconds,
)
from signin.models import (
    AccessTokenOrganization,
    CodeRedemption,
    GrantOrganization,
    RefreshTokenOrganization,
)
from signin.registration import ClientRequest

log = logging.getLogger(__name__)

FETCH_TIMEOUT_SECONDS = 5.0
# A document that failed is not fetched again for this long: the same answer is given, so a
# client retrying in a loop (or someone pointing sign-in at a slow host) costs one fetch a minute.
FAILURE_BACKOFF_SECONDS = 60
BACKOFF_PREFIX = "signin:client-metadata:failed:"


@dataclass(frozen=True, slots=True)
class RegisteredClient:
    """Say what a registration created; ``client_secret`` is the clear secret, shown once (None for a public client)."""

    application: Any
    client_secret: str | None


def client_register(*, client: ClientRequest) -> RegisteredClient:
    """Create the OAuth client an assistant registered; only a hash of a confidential client's secret is kept."""
    application_model = get_application_model()
    secret = None if client.is_public else generate_client_secret()
    application = application_model(
        name=client.client_name,
        redirect_uris=" ".join(client.redirect_uris),
        client_type=application_model.CLIENT_PUBLIC
        if client.is_public
        else application_model.CLIENT_CONFIDENTIAL,
        authorization_grant_type=application_model.GRANT_AUTHORIZATION_CODE,
        client_secret=secret or "",
        registration_source=application_model.RegistrationSource.DCR,
        # Every assistant asks each user: an assistant is never trusted ahead of its user's consent.
        skip_authorization=False,
    )
    application.save()
    return RegisteredClient(application=application, client_secret=secret)


def metadata_client_refresh(
    *, client_id: str, may_add: bool, keep_on_failure: bool, now: datetime | None = None
) -> None:
    """Make the toolkit's client row for a metadata-document client_id current, fetching the document when stale.

    The row (``registration_source`` cimd, ``cimd_expires_at`` its freshness) is what the rest of
    the toolkit's flow reads. A client seen for the first time is added only when ``may_add``
    (the consent screen, where a signed-in user stands; the token endpoint never fetches a
    client it has not seen). A client an operator created by hand with a URL as its id is left
    alone. Raises ``ClientMetadataRefused`` when the document cannot be had or is refused,
    unless ``keep_on_failure`` and a row from an earlier fetch exists (a refresh token's use
    should not fail on the client's host blinking). Never called inside a transaction: it fetches.
    """
    now = now or timezone.now()
    problem = client_id_url_problem(client_id)
    if problem:
        raise ClientMetadataRefused("bad_url", f"The client_id {problem}.")
    application_model = get_application_model()
    known = application_model.objects.filter(client_id=client_id).first()
    if known is not None:
        if known.registration_source != application_model.RegistrationSource.CIMD:
            return
        if known.cimd_expires_at is not None and known.cimd_expires_at > now:
            return
    elif not may_add:
        return
    try:
        document, fresh_for = _fetched(client_id)
    except ClientMetadataRefused as refused:
        if keep_on_failure and known is not None:
            log.warning("Kept the earlier metadata of client %s: %s", client_id, refused.description)
            return
        raise
    application_model.objects.update_or_create(
        client_id=client_id,
        defaults={
            "name": document.client_name,
            "redirect_uris": " ".join(document.redirect_uris),
            "client_type": application_model.CLIENT_PUBLIC,
            "authorization_grant_type": application_model.GRANT_AUTHORIZATION_CODE,
            "client_secret": "",
            "registration_source": application_model.RegistrationSource.CIMD,
            "cimd_expires_at": now + timedelta(seconds=fresh_for),
            "skip_authorization": False,
        },
    )


def _fetched(client_id: str) -> tuple[Any, int]:
    """Return the checked document at ``client_id`` and how long it stays fresh; a failure is remembered for a while."""
    key = BACKOFF_PREFIX + hashlib.sha256(client_id.encode()).hexdigest()
    remembered = cache.get(key)
    if remembered is not None:
        raise ClientMetadataRefused(*remembered)
    try:
        fetched = fetch_document(
            client_id,
            allow_private=settings.UPTIMY_ALLOW_PRIVATE_TARGETS,
            ssl_context=metadata_ssl_context(settings.UPTIMY_OAUTH_CLIENT_METADATA_CA_FILE),
            timeout=FETCH_TIMEOUT_SECONDS,
            nameservers=tuple(settings.UPTIMY_DNS_SERVERS),
        )
        document = client_document(client_id, fetched.body)
    except ClientMetadataRefused as refused:
        cache.set(key, (refused.reason, refused.description), FAILURE_BACKOFF_SECONDS)
        raise
    except Exception:
        # A bug met by one client's hostile answer refuses that client, never the page with a 500.
        log.exception("Reading the metadata document of client %s failed", client_id)
        unread = ClientMetadataRefused("unreachable", "Uptimy could not read the client's metadata document.")
        cache.set(key, (unread.reason, unread.description), FAILURE_BACKOFF_SECONDS)
        raise unread from None
    return document, freshness_seconds(fetched.cache_control)


@functools.cache
def metadata_ssl_context(ca_file: str) -> ssl.SSLContext:
    """Return the TLS trust for metadata fetches: the default roots, or only the CAs in ``ca_file``."""
    if not ca_file:
        return default_ssl_context()
    context = ssl.create_default_context(cafile=ca_file)
    context.set_alpn_protocols(["http/1.1"])
    return context


def code_checksum(code: str) -> str:
    """Return the SHA-256 an authorization code is remembered by once exchanged."""
    return hashlib.sha256(code.encode()).hexdigest()


def code_redemption_claim(*, code: str, application: Any) -> int | None:
    """Record that ``code`` is being exchanged and return the record's id, or None when it was exchanged before.

    The unique checksum decides between two concurrent exchanges of one code: the INSERT of one
    of them fails (on PostgreSQL it waits for the other's to commit), and that one is the replay.
    """
    try:
        with transaction.atomic():
            return CodeRedemption.objects.create(
                code_checksum=code_checksum(code), application=application
            ).pk
    except IntegrityError:
        return None


def code_redemption_link(*, redemption_id: int, access_token_id: int | None, token_family: Any) -> bool:
    """Tie what an exchange issued to its code; return False when the code was replayed meanwhile.

    One conditional UPDATE: a replay marks the row first (and then this links nothing, and the
    caller revokes what it issued), or this links first (and the replay revokes it).
    """
    return bool(
        CodeRedemption.objects.filter(pk=redemption_id, replayed_at__isnull=True).update(
            access_token_id=access_token_id, token_family=token_family
        )
    )


def code_redemption_replayed(*, code: str, application: Any, now: datetime) -> bool:
    """Mark ``code`` replayed and revoke the tokens issued from it; return whether it had been exchanged at all."""
    with transaction.atomic():
        redeemed = CodeRedemption.objects.filter(code_checksum=code_checksum(code), application=application)
        if not redeemed.update(replayed_at=now):
            return False  # never exchanged here: an unknown or expired code, refused as one
        for access_token_id, token_family in redeemed.values_list("access_token_id", "token_family"):
            issued_tokens_revoke(
                access_token_id=access_token_id, token_family=token_family, application=application
            )
    log.warning("An authorization code was presented again: the tokens issued from it are revoked.")
    return True


REPLAYED_CODE = "authorization_code_replayed"


def issued_tokens_revoke(*, access_token_id: int | None, token_family: Any, application: Any = None) -> None:
    """Revoke an exchange's access token and every refresh token of its family (and their access tokens).

    Uptimy revokes them, not a person: the organization's log says so (actor ``system``, from the
    replaying request's address) with the reason, a replayed authorization code.
    """
    with transaction.atomic():
        organization_id, user_id = _issued_to(access_token_id, token_family)
        if token_family is not None:
            get_refresh_token_model().revoke_family(token_family)
        if access_token_id is not None:
            get_access_token_model().objects.filter(pk=access_token_id).delete()
        if organization_id is not None:
            seen = current_actor()
            _audit_grant(
                organization_id,
                "oauth_grant.revoked",
                application=application,
                user_id=user_id,
                before={"active": True},
                after={"active": False, "reason": REPLAYED_CODE},
                actor=replace(SYSTEM, address=seen.address, user_agent=seen.user_agent),
            )


def _issued_to(access_token_id: int | None, token_family: Any) -> tuple[int | None, int | None]:
    """Return the organization and user an exchange's tokens were for, read before they are revoked."""
    lookups: list[QuerySet[Any, tuple[int, int]]] = []
    if access_token_id is not None:
        lookups.append(
            AccessTokenOrganization.objects.filter(access_token_id=access_token_id).values_list(
                "organization_id", "access_token__user_id"
            )
        )
    if token_family is not None:
        lookups.append(
            RefreshTokenOrganization.objects.filter(refresh_token__token_family=token_family).values_list(
                "organization_id", "refresh_token__user_id"
            )
        )
    for lookup in lookups:  # lazy: the refresh tokens are read only when the access token's row is missing
        found = lookup.first()
        if found is not None:
            return found
    return None, None


def _email(user_id: int | None) -> str | None:
    if user_id is None:
        return None
    return get_user_model().objects.filter(pk=user_id).values_list("email", flat=True).first()


def _audit_grant(
    organization_id: int, action: str, *, application: Any, user_id: int | None, **rest: Any
) -> None:
    """Record a grant's change, named by its client and the person it acts for (``Assistant for ann@…``)."""
    client_id = str(getattr(application, "client_id", "") or "")
    client = str(getattr(application, "name", "") or client_id)
    person = _email(user_id)
    audit_record(
        organization=organization_id,
        action=action,
        target_type="oauth_grant",
        target_id=client_id,
        target_name=f"{client} for {person}" if person else client,
        **rest,
    )


def grant_organization_bind(*, grant: Any, organization_id: int) -> None:
    """Tie an authorization code to the organization its user chose on the consent screen: an assistant allowed.

    Call it in the transaction that created the code: the event (``oauth_grant.created``, by the
    person who clicked Allow) commits with it.
    """
    GrantOrganization.objects.create(grant=grant, organization_id=organization_id)
    _audit_grant(
        organization_id,
        "oauth_grant.created",
        application=grant.application,
        user_id=grant.user_id,
        after={
            "client_id": grant.application.client_id,
            "client_name": grant.application.name,
            "user": _email(grant.user_id),
            "scopes": sorted(grant.scope.split()),
            "resource": list(getattr(grant, "resource", None) or []),
        },
    )


def _token_bindings(token: str, application: Any) -> list[tuple[int, int | None]]:
    """Return the (organization, user) of the client's stored tokens matching ``token``, access or refresh."""
    checksum = hashlib.sha256(token.encode()).hexdigest()
    found = list(
        AccessTokenOrganization.objects.filter(
            access_token__token_checksum=checksum, access_token__application=application
        ).values_list("organization_id", "access_token__user_id")
    )
    found += RefreshTokenOrganization.objects.filter(
        refresh_token__token_checksum=checksum,
        refresh_token__application=application,
        refresh_token__revoked__isnull=True,
    ).values_list("organization_id", "refresh_token__user_id")
    return list(dict.fromkeys(found))


def client_token_revoke(*, token: str, application: Any, revoke: Any) -> None:
    """Revoke a token at its client's request (RFC 7009) with ``revoke`` (the toolkit's), logging it in its organization.

    The client acts (for the user the token was for); an unknown token revokes and logs nothing.
    """
    with transaction.atomic():
        bindings = _token_bindings(token, application) if application is not None else []
        revoke()
        for organization_id, user_id in bindings:
            actor = replace(
                current_actor(),
                kind="oauth_client",
                user_id=user_id,
                oauth_client_id=str(application.client_id),
                oauth_client_name=str(application.name or ""),
            )
            _audit_grant(
                organization_id,
                "oauth_grant.revoked",
                application=application,
                user_id=user_id,
                before={"active": True},
                after={"active": False, "reason": "revoked_by_client"},
                actor=actor,
            )


def code_redemptions_clear(*, now: datetime) -> int:
    """Forget the codes exchanged longer ago than a refresh token lives: whatever they issued has expired."""
    lifetime = timedelta(seconds=oauth2_settings.REFRESH_TOKEN_EXPIRE_SECONDS or 0)
    deleted, _ = CodeRedemption.objects.filter(redeemed_at__lt=now - lifetime).delete()
    return deleted
