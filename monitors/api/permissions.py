"""Let a key read with any scope and write only with the read-write scope."""

from rest_framework import permissions

from monitors.models import ApiKey


class HasApiKeyScope(permissions.BasePermission):
    message = "This API key is read-only."

    def has_permission(self, request, view):  # type: ignore[no-untyped-def]
        api_key = request.auth
        if not isinstance(api_key, ApiKey):
            return False
        return request.method in permissions.SAFE_METHODS or api_key.can_write
