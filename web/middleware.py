"""Send the Content-Security-Policy (settings.CONTENT_SECURITY_POLICY) with the web app's pages."""

from __future__ import annotations

from csp.middleware import CSPMiddleware
from django.http import HttpRequest, HttpResponseBase


class WebContentSecurityPolicy(CSPMiddleware):
    """Apply django-csp's policy to the web app's pages (the ``web`` URL namespace) and sign-in's consent screen (``signin``) only.

    The API's docs page (drf-spectacular's Swagger UI) loads its scripts from a CDN and starts
    them inline; the admin and the status pages have policies of their own to make. The web
    app's pages load nothing but their own static files, so the strict policy holds for them.
    """

    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        match = getattr(request, "resolver_match", None)
        if match is None or not {"web", "signin"} & set(match.namespaces):
            return response
        return super().process_response(request, response)
