"""Serve the public directory: the ranked list, a server's page with its 22 checks, and its SVG badge.

No sign-in. Thin: the query is read by :mod:`directory.query`, the data by
:mod:`directory.selectors` (a fixed few queries per page), the badge drawn by
:mod:`monitors.badges`. An unknown or deleted server is a 404 naming it.
"""

from __future__ import annotations

import hashlib

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.cache import get_conditional_response, patch_cache_control
from django.utils.http import quote_etag
from django.views.decorators.http import require_safe

from directory import selectors
from directory.badge import NOT_FOUND, checks_badge
from directory.query import Kind, QueryInvalid, directory_query
from monitors.badges import Badge, badge_svg
from monitors.scorecard import CORE_CHECKS

PAGE_MAX_AGE = 60
# Badges are fetched by README renderers and image proxies (GitHub's camo) that honour max-age,
# as status pages' badges are.
BADGE_MAX_AGE = 300


def _not_listed(name: str) -> Http404:
    return Http404(f"No server named “{name[:200]}” is listed in the directory.")


@require_safe
def directory_page(request: HttpRequest) -> HttpResponse:
    """List the directory's servers ranked by their scorecards, searchable (``?q=``) and paged."""
    try:
        query = directory_query(request.GET)
    except QueryInvalid as problem:
        return render(request, "directory/problem.html", {"message": problem.message}, status=400)
    paginator = Paginator(
        selectors.directory_scorecards(kind=query.kind, query=query.q),
        query.page_size,
        allow_empty_first_page=True,
    )
    if query.page > paginator.num_pages:
        raise Http404(f"There is no page {query.page}: this list has {paginator.num_pages}.")
    page = paginator.page(query.page)
    rows = [(card.listing, card) for card in page.object_list]
    context = {
        "query": query,
        "page": page,
        "rows": rows,
        "first_rank": page.start_index(),
        "kinds": [
            (kind.value, "Remote servers" if kind is Kind.REMOTE else "Local-only packages") for kind in Kind
        ],
        "core_total": len(CORE_CHECKS),
    }
    response = render(request, "directory/index.html", context)
    patch_cache_control(response, public=True, max_age=PAGE_MAX_AGE)
    return response


@require_safe
def server_page(request: HttpRequest, name: str) -> HttpResponse:
    """Show one server: its listing, and each of its checks with the rule, result, date and evidence."""
    listing = selectors.listing_by_name(name)
    if listing is None:
        raise _not_listed(name)
    card = selectors.scorecard_of(listing)
    now = timezone.now()
    context = {
        "listing": listing,
        "remotes": list(listing.remotes.all()),
        "card": card,
        "rows": selectors.check_rows(card, now=now) if card else [],
        "core_total": len(CORE_CHECKS),
        "badge_url": request.build_absolute_uri(request.path + "badge.svg"),
        "page_url": request.build_absolute_uri(request.path),
    }
    response = render(request, "directory/server.html", context)
    patch_cache_control(response, public=True, max_age=PAGE_MAX_AGE)
    return response


@require_safe
def server_badge(request: HttpRequest, name: str) -> HttpResponse:
    """Draw the server's "MCP checks 19/22" badge; an unknown server's is a "not found" badge with a 404."""
    figures = selectors.badge_figures(name)
    if figures is None:
        return _badge_response(request, NOT_FOUND, status=404)
    return _badge_response(request, checks_badge(*figures), status=200)


def _badge_response(request: HttpRequest, badge: Badge, *, status: int) -> HttpResponse:
    body = badge_svg(badge).encode()
    response = HttpResponse(
        b"" if request.method == "HEAD" else body, content_type="image/svg+xml; charset=utf-8", status=status
    )
    response["Content-Length"] = str(len(body))
    # The badge is an image: never sniffed as anything else, never framed with scripts.
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
    response["Access-Control-Allow-Origin"] = "*"
    if status != 200:
        # A server listed a moment later shows at once.
        response["Cache-Control"] = "no-store"
        return response
    etag = quote_etag(hashlib.sha256(body).hexdigest()[:32])
    response["ETag"] = etag
    response["Cache-Control"] = f"public, max-age={BADGE_MAX_AGE}"
    conditional = get_conditional_response(request, etag=etag, response=response)
    return conditional if conditional is not None else response
