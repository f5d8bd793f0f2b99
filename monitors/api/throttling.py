"""Rate-limit API calls per key (not per IP: many customers share NAT gateways and CI runners)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework.throttling import SimpleRateThrottle

from monitors.models import ApiKey

if TYPE_CHECKING:
    # For annotations only: DRF imports this class while rest_framework.views is still loading.
    from rest_framework.request import Request
    from rest_framework.views import APIView


class ApiKeyRateThrottle(SimpleRateThrottle):
    scope = "api_key"

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        if not isinstance(request.auth, ApiKey):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.auth.pk}
