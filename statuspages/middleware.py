"""Admit requests for verified custom domains, which ALLOWED_HOSTS cannot list, and refuse every other unknown host.

Django checks the Host header against ``ALLOWED_HOSTS`` (a fixed list in the settings) the first
time anything asks for it, and a host not listed is a 400 from then on. A customer's verified
domain (``status.acme.com``) is data, not a setting, so without this a page's custom domain
works only where the operator sets ``ALLOWED_HOSTS=*``, which turns the check off for every
host. This middleware runs first: a listed host passes untouched; a host that is a page's
verified custom domain (kept in the cache for a few minutes, forgotten at once when a page's
domain or verification changes) is admitted, and answered by the status pages' routes alone
(no API, no admin at a customer's domain); any other host gets a plain 400 that says why, never
Django's DisallowedHost error.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.http.request import split_domain_port

from statuspages import selectors
from statuspages.cache import DOMAIN_SECONDS, UNKNOWN_HOST_SECONDS, domain_key
from statuspages.policy import LOGO_ATTRIBUTE, answer_policy

DOMAIN_URLCONF = "statuspages.domain_urls"
MAX_DOMAIN_LENGTH = 253


def verified_domain(domain: str) -> bool:
    """Return whether ``domain`` is a page's verified custom domain, from the cache when it knows."""
    key = domain_key(domain)
    known = cache.get(key)
    if known is None:
        known = selectors.is_verified_domain(domain=domain)
        cache.set(key, known, DOMAIN_SECONDS if known else UNKNOWN_HOST_SECONDS)
    return bool(known)


def _raw_host(request: HttpRequest) -> str:
    """Return the host as sent, not yet validated: where Django's own get_host() reads it."""
    meta = request.META
    if settings.USE_X_FORWARDED_HOST and "HTTP_X_FORWARDED_HOST" in meta:
        return str(meta["HTTP_X_FORWARDED_HOST"])
    if "HTTP_HOST" in meta:
        return str(meta["HTTP_HOST"])
    return str(meta.get("SERVER_NAME", ""))


class CustomDomainHosts:
    """Let a verified custom domain through Django's host check; answer 400 to any other host not allowed."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            request.get_host()
        except DisallowedHost:
            host = _raw_host(request)
            domain, _ = split_domain_port(host)
            domain = domain.removesuffix(".")
            if not domain or len(domain) > MAX_DOMAIN_LENGTH or not verified_domain(domain):
                return HttpResponseBadRequest(
                    "Unknown host: no site or status page answers at this address.\n",
                    content_type="text/plain; charset=utf-8",
                )
            # Everything after this (CSRF's origin check, absolute URLs, the page lookup) asks
            # request.get_host(); for this request the verified domain is the answer.
            request.get_host = lambda: host  # type: ignore[method-assign]
            request.urlconf = DOMAIN_URLCONF
        return self.get_response(request)


# The URL namespaces of a status page's public routes: under /s/<slug>/ and at a custom domain's root.
PUBLIC_NAMESPACES = frozenset({"statuspage", "statuspage-domain"})


class StatusPagePolicy:
    """Send the status pages' Content-Security-Policy (``statuspages.policy``) with every public answer that has none.

    A badge sets its own (an SVG image with its inline styles, sandboxed); every other answer,
    404s and 304s included, gets the page policy if it is HTML and the document policy if not.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        if match is None or not PUBLIC_NAMESPACES & set(match.namespaces):
            return response
        if "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = answer_policy(
                content_type=response.get("Content-Type", ""),
                logo_url=getattr(request, LOGO_ATTRIBUTE, ""),
            )
        return response
