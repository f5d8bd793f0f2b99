"""Answer the site's root: the web app on Uptimy's own address, a custom domain's status page elsewhere."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse

from statuspages import views as statuspage_views

# Loopback names: `make run` and a local try reach Uptimy by these whatever UPTIMY_PUBLIC_URL says.
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})


def is_app_host(host: str) -> bool:
    """Return whether ``host`` (as the Host header has it, port and all) is Uptimy's own address."""
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    name = name.strip().lower().removesuffix(".")
    return name in LOOPBACK_HOSTS or name == (urlsplit(settings.UPTIMY_PUBLIC_URL).hostname or "")


def home(request: HttpRequest) -> HttpResponse:
    """Send Uptimy's own address to the web app; any other host is a custom domain's status page (or a 404)."""
    if is_app_host(request.get_host()):
        return HttpResponseRedirect(reverse("web:dashboard"))
    return statuspage_views.page(request)
