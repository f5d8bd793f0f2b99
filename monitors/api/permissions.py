"""Let a key read with any scope and write only with the read-write scope."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework import permissions

from monitors.models import ApiKey

if TYPE_CHECKING:
    # For annotations only: DRF imports this class while rest_framework.views is still loading.
    from rest_framework.request import Request
    from rest_framework.views import APIView


class HasApiKeyScope(permissions.BasePermission):
    message = "This API key is read-only."

    def has_permission(self, request: Request, view: APIView) -> bool:
        api_key = request.auth
        if not isinstance(api_key, ApiKey):
            return False
        return request.method in permissions.SAFE_METHODS or api_key.can_write


class AnyApiKey(permissions.BasePermission):
    """Let any key through, read-only ones too: for calls that change nothing, whatever their method."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        return isinstance(request.auth, ApiKey)
