"""Serve status pages to the public: the HTML page, its history, the password form and the /api/v2 JSON.

Every view is reached two ways: under ``/s/<slug>/``, and at the root of a page's verified
custom domain, found by the request's Host header. The views read through
:mod:`statuspages.selectors` and draw with :mod:`statuspages.render`; the only markup not
escaped by the templates is the SVG the renderers escape themselves.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.core.cache import cache
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseNotModified,
    HttpResponseRedirect,
    JsonResponse,
)
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_http_methods, require_safe

from monitors.errors import ServiceError
from monitors.ratelimit import rate_give_back, rate_take
from statuspages import selectors, services
from statuspages.cache import HTML_SECONDS, badge_slot, html_key, keep_badge, kept_badge
from statuspages.feeds import FEED_ITEMS, FeedSource, IncidentsAtom, IncidentsRss
from statuspages.models import StatusPage
from statuspages.policy import LOGO_ATTRIBUTE
from statuspages.render import badges
from statuspages.render import statuspage_api as api
from statuspages.render.chart import response_time_svg
from statuspages.render.etag import etag_matches, json_body, strong_etag
from statuspages.render.strip import uptime_strip_svg
from statuspages.render.vocabulary import ComponentStatus
from statuspages.services.subscribers import confirm_token_valid, unsubscribe_token_valid

STATUS_LABELS = {
    ComponentStatus.OPERATIONAL: "Operational",
    ComponentStatus.DEGRADED_PERFORMANCE: "Degraded performance",
    ComponentStatus.PARTIAL_OUTAGE: "Partial outage",
    ComponentStatus.MAJOR_OUTAGE: "Major outage",
    ComponentStatus.UNDER_MAINTENANCE: "Under maintenance",
}
ACCESS_SALT = "statuspages.access"
ACCESS_DAYS = 30
JSON_MAX_AGE = 30
PAGE_MAX_AGE = 30
# Badges are fetched by README renderers and image proxies (GitHub's camo) that honour max-age.
BADGE_MAX_AGE = 60
# Password tries per client address and page in LOGIN_WINDOW seconds, then 429 until it passes.
LOGIN_TRIES = 10
LOGIN_WINDOW = 15 * 60


@dataclass(frozen=True)
class Where:
    """Hold the page a request is for and how it was reached: its path prefix and public URL."""

    page: StatusPage
    prefix: str  # "/s/<slug>/" or "/" on a custom domain
    url: str


def _where(request: HttpRequest, slug: str | None) -> Where:
    where = _found(request, slug)
    # For the Content-Security-Policy (statuspages.middleware): the logo's origin may load images.
    setattr(request, LOGO_ATTRIBUTE, where.page.logo_url)
    return where


def _found(request: HttpRequest, slug: str | None) -> Where:
    if slug is not None:
        page = selectors.page_by_slug(slug=slug)
        prefix = f"/s/{slug}/"
        if page is None:
            raise Http404("No status page with this address.")
        return Where(page, prefix, request.build_absolute_uri(prefix))
    page = selectors.page_by_domain(host=request.get_host())
    if page is None:
        raise Http404("No status page answers at this host.")
    return Where(page, "/", f"{request.scheme}://{page.custom_domain}/")


def _cookie_name(page: StatusPage) -> str:
    return f"sp_{page.public_id.hex}"


def _cookie_value(page: StatusPage) -> str:
    # Bound to the password's hash: changing the password closes every open session.
    return hashlib.sha256(page.password_hash.encode()).hexdigest()[:32]


def _may_read(request: HttpRequest, page: StatusPage) -> bool:
    if not page.is_private:
        return True
    value = request.get_signed_cookie(
        _cookie_name(page), default=None, salt=ACCESS_SALT, max_age=ACCESS_DAYS * 86_400
    )
    return value is not None and value == _cookie_value(page)


def _svg(markup: str) -> SafeString:
    # The renderers escape every text they write (monitors/svg.py).
    return mark_safe(markup)  # noqa: S308


def _private_headers(response: HttpResponse, page: StatusPage) -> HttpResponse:
    if page.is_private:
        response["Cache-Control"] = "private, no-store"
        response["Vary"] = "Cookie"
    else:
        response["Cache-Control"] = f"public, max-age={PAGE_MAX_AGE}"
    return response


def _not_modified(length: int) -> HttpResponse:
    """Answer a revalidation that matched: a 304 without the representation's Content-Type.

    A cache copies a 304's fields onto the answer it keeps (RFC 9111 §4.3.4), so a Content-Type
    here (Django's default text/html) would turn kept JSON, SVG or RSS into HTML; the caller adds
    the validators and caching fields (RFC 9110 §15.4.5).
    """
    response = HttpResponseNotModified()
    # The 200's own length, which a 304 may carry (RFC 9110 §8.6): left unset, CommonMiddleware
    # or the WSGI server would write 0, which it must not.
    response["Content-Length"] = str(length)
    return response


# The page's 90 day bars are most of its ~870 kB; compressed it is a tenth. Public text only: no
# secret is reflected in it (the login form, which holds a CSRF token, is not compressed).
@gzip_page
@require_safe
def page(request: HttpRequest, slug: str | None = None) -> HttpResponse:
    """Show the page: its status line, components with 90-day bars and charts, and its incidents."""
    where = _where(request, slug)
    if not _may_read(request, where.page):
        return HttpResponseRedirect(where.prefix + "login/")
    key = html_key(where.page.pk, where.url)
    html = cache.get(key)
    if html is None:
        html = _page_html(request, where)
        cache.set(key, html, HTML_SECONDS)
    return _private_headers(HttpResponse(html), where.page)


def _page_html(request: HttpRequest, where: Where) -> str:
    view = selectors.page_view(page=where.page, now=timezone.now(), url=where.url)
    zone = where.page.time_zone
    sections = [
        {
            "group": section.group,
            "status": section.status,
            "label": STATUS_LABELS[section.status],
            "rows": [
                {
                    "view": component,
                    "label": STATUS_LABELS[component.status],
                    "strip": _svg(uptime_strip_svg(component.name, component.bars)),
                    "chart": _svg(response_time_svg(component.name, component.points, time_zone=zone)),
                }
                for component in section.components
            ],
        }
        for section in view.sections
    ]
    context = {
        "where": where,
        "page": where.page,
        "view": view,
        "sections": sections,
        "active_maintenances": api.active(view.content.maintenances),
        "upcoming_maintenances": api.upcoming(view.content.maintenances),
    }
    return render_to_string("statuspages/page.html", context, request=request)


@gzip_page
@require_safe
def history(request: HttpRequest, slug: str | None = None) -> HttpResponse:
    """List the page's published incidents month by month, one year at a time (``?year=``)."""
    where = _where(request, slug)
    if not _may_read(request, where.page):
        return HttpResponseRedirect(where.prefix + "login/")
    now = timezone.now()
    this_year = now.year
    raw = request.GET.get("year", "")
    year = int(raw) if raw.isascii() and raw.isdigit() and len(raw) == 4 else this_year
    year = min(max(year, 2000), this_year)
    months = selectors.incident_history(page=where.page, year=year, now=now)
    context = {
        "where": where,
        "page": where.page,
        "months": months,
        "year": year,
        "previous_year": year - 1 if year > 2000 else None,
        "next_year": year + 1 if year < this_year else None,
    }
    return _private_headers(render(request, "statuspages/history.html", context), where.page)


@require_safe
def incident(request: HttpRequest, incident_id: UUID, slug: str | None = None) -> HttpResponse:
    """Show one published incident on a page of its own: the address its JSON ``shortlink`` gives.

    A draft, or another page's incident, is a 404. HEAD answers as GET does, as on the page itself.
    """
    where = _where(request, slug)
    if not _may_read(request, where.page):
        return HttpResponseRedirect(where.prefix + "login/")
    found = selectors.published_incident(page=where.page, public_id=incident_id)
    if found is None:
        raise Http404("No published incident with this id on this page.")
    response = render(
        request, "statuspages/incident.html", {"where": where, "page": where.page, "incident": found}
    )
    return _private_headers(response, where.page)


# --- feeds ---------------------------------------------------------------------------------------

FEEDS = {"rss": IncidentsRss, "atom": IncidentsAtom}


def history_feed(request: HttpRequest, fmt: str, slug: str | None = None) -> HttpResponse:
    """Answer the page's incident history as RSS (``history.rss``) or Atom (``history.atom``).

    A password page's feed needs the page's sign-in cookie, as the page does (a reader that
    signed in in the browser, or a feed reader given the cookie); a stranger gets a 403 that
    says so rather than the HTML form a feed reader could not use.
    """
    if request.method not in ("GET", "HEAD"):
        response = HttpResponse("Only GET.\n", status=405, content_type="text/plain; charset=utf-8")
        response["Allow"] = "GET, HEAD"
        return response
    where = _where(request, slug)
    if not _may_read(request, where.page):
        response = HttpResponse(
            "This status page needs its password: sign in on the page first.\n",
            status=403,
            content_type="text/plain; charset=utf-8",
        )
        return _private_headers(response, where.page)
    source = FeedSource(
        page=where.page,
        url=where.url,
        feed_url=where.url + f"history.{fmt}",
        incidents=selectors.feed_incidents(page=where.page, limit=FEED_ITEMS),
    )
    drawn = FEEDS[fmt]()(request, source=source)
    etag = strong_etag(drawn.content)
    if etag_matches(request.headers.get("If-None-Match"), etag):
        response = _not_modified(len(drawn.content))
    else:
        response = drawn
        if request.method == "HEAD":
            response["Content-Length"] = str(len(drawn.content))
            response.content = b""
    response["ETag"] = etag
    return _private_headers(response, where.page)


def _client(request: HttpRequest) -> str:
    return str(request.META.get("REMOTE_ADDR", ""))


@require_http_methods(["GET", "HEAD", "POST"])
def login(request: HttpRequest, slug: str | None = None) -> HttpResponse:
    """Ask for a private page's password; the right one sets a signed cookie and goes to the page."""
    where = _where(request, slug)
    if not where.page.is_private:
        return HttpResponseRedirect(where.prefix)
    wrong = False
    status = 200
    if request.method == "POST":
        # The try is taken before the password is compared, atomically: parallel posts can't
        # pass the limit between one's read of the count and its write (monitors.ratelimit).
        keys = [f"statuspages:login:{where.page.public_id.hex}:{_client(request)}"]
        if rate_take(keys=keys, limit=LOGIN_TRIES, window=LOGIN_WINDOW):
            response = render(
                request, "statuspages/login.html", {"where": where, "page": where.page, "locked": True}
            )
            response.status_code = 429
            return _private_headers(response, where.page)
        password = request.POST.get("password", "")[:1024]
        if services.password_matches(page=where.page, password=password):
            rate_give_back(keys=keys)
            response = HttpResponseRedirect(where.prefix)
            response.set_signed_cookie(
                _cookie_name(where.page),
                _cookie_value(where.page),
                salt=ACCESS_SALT,
                max_age=ACCESS_DAYS * 86_400,
                path=where.prefix,
                httponly=True,
                secure=request.is_secure(),
                samesite="Lax",
            )
            return response
        wrong = True
        status = 403
    response = render(request, "statuspages/login.html", {"where": where, "page": where.page, "wrong": wrong})
    response.status_code = status
    return _private_headers(response, where.page)


# --- /api/v2 -------------------------------------------------------------------------------------

Shape = Callable[[api.PageContent], dict[str, Any]]

# Each endpoint: its shape, which published incidents it needs read, and whether it lists maintenance.
ENDPOINTS: dict[str, tuple[Shape, str, bool]] = {
    "summary": (api.summary_json, "unresolved", True),
    "status": (api.status_json, "unresolved", False),
    "components": (api.components_json, "unresolved", False),
    "incidents": (api.incidents_json, "latest", False),
    "incidents/unresolved": (api.unresolved_incidents_json, "unresolved", False),
    "scheduled-maintenances": (api.scheduled_maintenances_json, "unresolved", True),
    "scheduled-maintenances/upcoming": (api.upcoming_maintenances_json, "unresolved", True),
    "scheduled-maintenances/active": (api.active_maintenances_json, "unresolved", True),
}


def _cors(response: HttpResponse) -> HttpResponse:
    response["Access-Control-Allow-Origin"] = "*"
    return response


def _json_error(message: str, status: int) -> HttpResponse:
    response = JsonResponse({"error": message}, status=status)
    response["Cache-Control"] = "no-store"
    return _cors(response)


def public_json(request: HttpRequest, endpoint: str, slug: str | None = None) -> HttpResponse:
    """Answer one Statuspage-compatible endpoint, with a strong ETag, Cache-Control and CORS ``*``."""
    if request.method not in ("GET", "HEAD"):
        response = _json_error("Only GET.", 405)
        response["Allow"] = "GET, HEAD"
        return response
    try:
        where = _where(request, slug)
    except Http404:
        return _json_error("No status page here.", 404)
    if not _may_read(request, where.page):
        return _json_error("This status page needs its password: sign in on the page first.", 403)
    shape, incidents, maintenances = ENDPOINTS[endpoint]
    view = selectors.page_view(
        page=where.page,
        now=timezone.now(),
        url=where.url,
        history=False,
        incidents=incidents,
        maintenances=maintenances,
    )
    body = json_body(shape(view.content))
    etag = strong_etag(body)
    if etag_matches(request.headers.get("If-None-Match"), etag):
        response = _not_modified(len(body))
    else:
        response = HttpResponse(body, content_type="application/json")
        if request.method == "HEAD":
            # The headers a GET would have (its length too), without the body.
            response.content = b""
            response["Content-Length"] = str(len(body))
    response["ETag"] = etag
    if where.page.is_private:
        response["Cache-Control"] = f"private, max-age={JSON_MAX_AGE}"
        response["Vary"] = "Cookie"
    else:
        response["Cache-Control"] = f"public, max-age={JSON_MAX_AGE}"
    return _cors(response)


# --- subscribers ---------------------------------------------------------------------------------

# Subscribe tries per client address and page in LOGIN_WINDOW seconds: a form can't mail-bomb.
SUBSCRIBE_TRIES = 10
# The heading of a confirm or unsubscribe link that is forged, mangled, expired or another page's.
INVALID_LINK = "This link is not valid"


def _subscription_page(
    request: HttpRequest, where: Where, *, heading: str, message: str, status: int = 200, **form: Any
) -> HttpResponse:
    context = {"where": where, "page": where.page, "heading": heading, "message": message, **form}
    response = render(request, "statuspages/subscription.html", context, status=status)
    response["Cache-Control"] = "private, no-store"
    return response


@require_http_methods(["GET", "HEAD", "POST"])
def subscribe(request: HttpRequest, slug: str | None = None) -> HttpResponse:
    """Show the subscribe form (no JavaScript; CSRF), and subscribe the address posted: the answer never tells whether it was there."""
    where = _where(request, slug)
    if not _may_read(request, where.page):
        return HttpResponseRedirect(where.prefix + "login/")
    components = list(where.page.components.order_by("position", "id"))
    context: dict[str, Any] = {"where": where, "page": where.page, "components": components, "email": ""}
    status = 200
    if request.method == "POST":
        keys = [f"statuspages:subscribe:{where.page.public_id.hex}:{_client(request)}"]
        if rate_take(keys=keys, limit=SUBSCRIBE_TRIES, window=LOGIN_WINDOW):
            context["locked"] = True
            status = 429
        else:
            chosen = request.POST.getlist("components")[:200]
            try:
                services.email_subscribe(
                    page=where.page,
                    email=request.POST.get("email", "")[:400],
                    components=chosen or None,
                    now=timezone.now(),
                )
            except ServiceError as exc:
                context.update(error=exc.message, email=request.POST.get("email", "")[:254])
                status = 400
            else:
                context["done"] = True
    response = render(request, "statuspages/subscribe.html", context, status=status)
    response["Cache-Control"] = "private, no-store"
    return response


@require_http_methods(["GET", "HEAD", "POST"])
def confirm(request: HttpRequest, token: str, slug: str | None = None) -> HttpResponse:
    """Confirm a subscription from its signed link: GET asks (a mail scanner's GET confirms nothing), POST confirms."""
    where = _where(request, slug)
    if request.method != "POST":
        # Checked before asking, as the unsubscribe link is: a page that offers to confirm a
        # link that can't be confirmed only fails one click later.
        if not confirm_token_valid(page=where.page, token=token):
            return _invalid_confirm_link(request, where)
        return _subscription_page(
            request,
            where,
            heading="Confirm your subscription",
            message=f"Press the button to get updates of {where.page.title} by email.",
            action=request.path,
            button="Confirm",
            csrf=True,
        )
    subscriber = services.email_confirm(page=where.page, token=token, now=timezone.now())
    if subscriber is None:
        return _invalid_confirm_link(request, where)
    return _subscription_page(
        request, where, heading="Subscribed", message=f"You will get updates of {where.page.title} by email."
    )


def _invalid_confirm_link(request: HttpRequest, where: Where) -> HttpResponse:
    return _subscription_page(
        request,
        where,
        heading=INVALID_LINK,
        message="It is not a confirmation link of this page, or it is older than a week: subscribe again for a new one.",
        status=400,
    )


@csrf_exempt
@require_http_methods(["GET", "HEAD", "POST"])
def unsubscribe(request: HttpRequest, token: str, slug: str | None = None) -> HttpResponse:
    """Unsubscribe from a signed link: GET asks, POST removes (RFC 8058's one-click POST too: no cookie, no CSRF token)."""
    where = _where(request, slug)
    if not unsubscribe_token_valid(page=where.page, token=token):
        return _subscription_page(
            request,
            where,
            heading=INVALID_LINK,
            message="It is not an unsubscribe link of this page.",
            status=400,
        )
    if request.method != "POST":
        return _subscription_page(
            request,
            where,
            heading="Unsubscribe",
            message=f"Press the button to stop getting updates of {where.page.title}.",
            action=request.path,
            button="Unsubscribe",
        )
    services.unsubscribe(page=where.page, token=token)
    return _subscription_page(
        request, where, heading="Unsubscribed", message=f"You will get no more updates of {where.page.title}."
    )


# --- badges --------------------------------------------------------------------------------------

NOT_FOUND_BADGE = badges.Badge("badge", "not found", badges.Color.LIGHTGREY)


def _badge_body(badge: badges.Badge, fmt: str, status: int) -> tuple[bytes, str]:
    if fmt == "json":
        payload = badges.shields_endpoint(badge)
        if status != 200:
            payload["isError"] = True
        return json_body(payload), "application/json"
    return badges.badge_svg(badge).encode(), "image/svg+xml; charset=utf-8"


def _badge_answer(request: HttpRequest, badge: badges.Badge, fmt: str, status: int) -> HttpResponse:
    return _badge_response(request, *_badge_body(badge, fmt, status), status)


def _badge_response(request: HttpRequest, body: bytes, content_type: str, status: int) -> HttpResponse:
    etag = strong_etag(body)
    if status == 200 and etag_matches(request.headers.get("If-None-Match"), etag):
        response = _not_modified(len(body))
    else:
        response = HttpResponse(
            b"" if request.method == "HEAD" else body, content_type=content_type, status=status
        )
        response["Content-Length"] = str(len(body))
    if status == 200:
        response["ETag"] = etag
        response["Cache-Control"] = f"public, max-age={BADGE_MAX_AGE}"
    else:
        # A component added a moment later shows at once.
        response["Cache-Control"] = "no-store"
    # The badge is an image: never sniffed as anything else, never framed with scripts.
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
    return _cors(response)


def badge(request: HttpRequest, key: str, name: str, fmt: str, slug: str | None = None) -> HttpResponse:
    """Draw one component's badge (``status``, ``uptime-24h|7d|30d``, ``response-time``) as SVG or shields.io JSON.

    ``key`` is the component's badge token, or on a public page its public id too. Anything
    unknown (page, component, badge name) is a 404 that is still a badge, so a README shows
    "not found" rather than a broken image.
    """
    if request.method not in ("GET", "HEAD"):
        response = _json_error("Only GET.", 405)
        response["Allow"] = "GET, HEAD"
        return response
    if name not in selectors.BADGE_NAMES:
        return _badge_answer(request, NOT_FOUND_BADGE, fmt, 404)
    host = request.get_host() if slug is None else None
    slot = badge_slot(f"/s/{slug}/" if slug is not None else f"//{host}/", key, name, fmt)
    kept = kept_badge(slot)
    if kept is not None:
        return _badge_response(request, *kept, 200)
    # The page and the component in one query (not _where's two): a badge is asked for often.
    component = selectors.component_by_badge_key(key=key, slug=slug, host=host)
    if component is None:
        return _badge_answer(request, NOT_FOUND_BADGE, fmt, 404)
    drawn = selectors.component_badge(component=component, name=name, now=timezone.now())
    body, content_type = _badge_body(drawn, fmt, 200)
    keep_badge(slot, component.page_id, body, content_type)
    return _badge_response(request, body, content_type, 200)
