"""Plain Django views: the health endpoint for load balancers and the compose stack, and the 404 page."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import connection
from django.http import Http404, HttpRequest, HttpResponseNotFound, JsonResponse
from django.utils.html import escape
from django.views.decorators.cache import never_cache

logger = logging.getLogger(__name__)


@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """Answer 200 when the database (and the broker, where one is configured) answers; 503 otherwise."""
    checks = {"database": _database_ok()}
    if settings.REDIS_URL:
        checks["broker"] = _broker_ok(settings.REDIS_URL)
    healthy = all(checks.values())
    body = {
        "status": "ok" if healthy else "unavailable",
        **{k: "ok" if v else "down" for k, v in checks.items()},
    }
    return JsonResponse(body, status=200 if healthy else 503)


def _database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            row: tuple[object, ...] | None = cursor.fetchone()
            return row == (1,)
    except Exception:
        logger.warning("healthz: database check failed", exc_info=True)
        return False


def _broker_ok(url: str) -> bool:
    import redis

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception as exc:
        # The URL may carry a password: log the error type only.
        logger.warning("healthz: broker check failed (%s)", type(exc).__name__)
        return False


NOT_FOUND = "Nothing answers at this address."


def not_found(request: HttpRequest, exception: Exception) -> HttpResponseNotFound:
    """Answer a 404 page naming what is missing: the sentence a view raised Http404 with.

    The ``handler404`` of every URLconf (uptimy.urls, statuspages.domain_urls). A view's own
    sentence ("No status page with this address.") is shown; the router's (Resolver404, whose
    argument lists the patterns tried) never is.
    """
    message = NOT_FOUND
    if type(exception) is Http404 and exception.args and isinstance(exception.args[0], str):
        message = exception.args[0]
    return HttpResponseNotFound(
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Not found</title></head>'
        f"<body><h1>Not found</h1><p>{escape(message)}</p></body></html>\n"
    )
