"""Authenticate API requests by ``Authorization: Bearer <key>``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from monitors.access_rules import api_key_expired, api_key_expired_message
from monitors.audit import Actor, api_via, replace_actor
from monitors.models import ApiKey
from monitors.selectors import api_key_by_hash
from monitors.services import api_key_touch, hash_api_key

if TYPE_CHECKING:
    # For annotations only: DRF imports this class while rest_framework.views is still loading.
    from drf_spectacular.openapi import AutoSchema
    from rest_framework.request import Request


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """Resolve the bearer key to its ApiKey; request.auth is the key, request.user stays None."""

    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[ApiKeyUser, ApiKey] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, raw_key = header.partition(" ")
        if scheme.lower() != self.keyword.lower() or not raw_key.strip():
            raise exceptions.AuthenticationFailed("Send the API key as 'Authorization: Bearer <key>'.")
        api_key = api_key_by_hash(key_hash=hash_api_key(raw_key.strip()))
        if api_key is None or not api_key.is_active:
            # One answer for unknown and revoked keys: the difference would help a guesser.
            raise exceptions.AuthenticationFailed("Unknown or revoked API key.")
        now = timezone.now()
        if api_key.expires_at is not None and api_key_expired(api_key.expires_at, now=now):
            # Only the key's holder can reach this sentence: it tells them what to do, a guesser nothing.
            raise exceptions.AuthenticationFailed(api_key_expired_message(api_key.expires_at))
        api_key_touch(api_key=api_key, now=now, address=request.META.get("REMOTE_ADDR"))
        replace_actor(key_actor(request, api_key))
        return (ApiKeyUser(api_key), api_key)

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="api"'


def key_actor(request: Request, api_key: ApiKey) -> Actor:
    """Return the audit actor of a key-authenticated request: the key, via uptimyctl when it says so, else the API."""
    agent = str(request.META.get("HTTP_USER_AGENT", ""))
    actor = Actor(kind="api_key", via=api_via(agent), api_key_id=api_key.pk)
    return actor.seen_from(address=request.META.get("REMOTE_ADDR"), user_agent=agent)


class ApiKeyUser:
    """Stand in for a user on key-authenticated requests, so DRF's is_authenticated checks work."""

    is_authenticated = True
    is_anonymous = False

    def __init__(self, api_key: ApiKey) -> None:
        self.api_key = api_key
        self.pk = None

    def __str__(self) -> str:
        return f"api key {self.api_key.prefix}…"


# drf-spectacular registers extensions in an unannotated __init_subclass__, which strict mypy
# won't let a typed module call.
class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "monitors.api.authentication.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema: AutoSchema) -> dict[str, Any]:
        return {"type": "http", "scheme": "bearer", "description": "An Uptimy API key (upt_…)."}
