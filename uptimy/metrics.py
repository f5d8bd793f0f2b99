"""Serve ``/metrics`` to Prometheus: every app's counters and the scrape-time gauges, never to the open internet.

With ``UPTIMY_METRICS_TOKEN`` set, a scrape must send it as a bearer token (Prometheus'
``authorization`` block); without it, only a client on this machine's loopback is answered,
and a request relayed by a proxy never counts as one, since a reverse proxy on the same host
would make every internet client look local.
"""

from __future__ import annotations

import hmac
import ipaddress
import os

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from alerts import metrics as alerts_metrics
from monitors import metrics as monitors_metrics

# Headers a proxy adds when it relays a request: with one, REMOTE_ADDR is the proxy's address.
PROXY_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_X_REAL_IP", "HTTP_FORWARDED")


@never_cache
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """Answer the Prometheus text exposition to an allowed scraper; 401 or 403 to anyone else."""
    refusal = _refusal(request)
    if refusal is not None:
        return refusal
    return HttpResponse(generate_latest(scrape_registry()), content_type=CONTENT_TYPE_LATEST)


def scrape_registry() -> CollectorRegistry:
    """Return what one scrape reads: every process's counters, then the gauges computed now.

    In multiprocess mode the counters of every process (this one included) are the files in
    PROMETHEUS_MULTIPROC_DIR; registering an app's own registry as well would count it twice.
    """
    registry = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        # prometheus_client's multiprocess module has no annotations (the rest of the package has).
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    else:
        registry.register(monitors_metrics.REGISTRY)
        registry.register(alerts_metrics.REGISTRY)
    registry.register(monitors_metrics.ScrapeTimeGauges())
    registry.register(alerts_metrics.ScrapeTimeGauges())
    return registry


def _refusal(request: HttpRequest) -> HttpResponse | None:
    token: str = settings.UPTIMY_METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "")
        scheme, _, credentials = given.partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(credentials.strip().encode(), token.encode()):
            return None
        response = HttpResponse("A bearer token (UPTIMY_METRICS_TOKEN) is required.\n", status=401)
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    if _from_loopback(request):
        return None
    return HttpResponse(
        "Metrics are answered only on loopback; set UPTIMY_METRICS_TOKEN to scrape from elsewhere.\n",
        status=403,
    )


def _from_loopback(request: HttpRequest) -> bool:
    if any(header in request.META for header in PROXY_HEADERS):
        return False
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback
