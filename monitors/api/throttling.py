"""Rate-limit API calls per key (not per IP: many customers share NAT gateways and CI runners)."""

from rest_framework.throttling import SimpleRateThrottle

from monitors.models import ApiKey


class ApiKeyRateThrottle(SimpleRateThrottle):
    scope = "api_key"

    def get_cache_key(self, request, view):  # type: ignore[no-untyped-def]
        if not isinstance(request.auth, ApiKey):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.auth.pk}
