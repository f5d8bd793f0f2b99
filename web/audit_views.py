"""The audit log's page: the organization's changes, newest first, for its owners and admins."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from web import selectors as web_selectors
from web.access import Seat, member_view

FILTERS = ("action", "target_type", "person", "api_key", "oauth_client")


@require_safe
@member_view(manage=True, writers_only=True)
def audit_events(request: HttpRequest, seat: Seat) -> HttpResponse:
    """List the organization's audit events, filtered as ``GET /api/v1/audit-events/`` filters them."""
    log = web_selectors.audit_page(organization=seat.organization, query=request.GET)
    kept = request.GET.copy()
    kept.pop("page", None)
    context = {
        "seat": seat,
        "log": log,
        "query": request.GET,
        "filtered": any(request.GET.get(name) for name in FILTERS),
        "filters_query": kept.urlencode(),
    }
    return render(request, "web/settings/audit.html", context, status=400 if log.errors else 200)
