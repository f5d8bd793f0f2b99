"""Send the Content-Security-Policy (settings.CONTENT_SECURITY_POLICY) with the web app's pages; mark sessions seen."""

from __future__ import annotations

from collections.abc import Callable

from csp.middleware import CSPMiddleware
from django.conf import settings
from django.http import HttpRequest, HttpResponseBase
from django.utils import timezone

from web.signins import mark_seen


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


class SignInSessionSeen:
    """Keep each signed-in session's "last seen" (web.signins.mark_seen), at most one write every few minutes.

    After AuthenticationMiddleware. A request without a session cookie costs nothing: no session
    is loaded for an anonymous caller (the API's key-authenticated calls, the status pages).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if settings.SESSION_COOKIE_NAME in request.COOKIES and request.user.is_authenticated:
            mark_seen(request, now=timezone.now())
        return self.get_response(request)
