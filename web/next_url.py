"""Follow a ``next`` address only when it stays on this site."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme


def safe_next(request: HttpRequest, target: str) -> str | None:
    """Return ``target`` when it is on this host (a page of ours, never another site), else None."""
    safe = url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return target if target and safe else None
