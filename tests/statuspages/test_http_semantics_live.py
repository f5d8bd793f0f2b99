"""A status page over HTTP as caches, link checkers and feed readers see it, on the live server.

Revalidation goes through CacheControl (an RFC 9111 cache over requests, nobody here wrote it)
and feedparser; the 304s themselves are read against RFC 9110 §15.4.5, and HEAD against GET
(RFC 9110 §9.3.2) with httpx. Every endpoint a cache may keep is in :data:`CACHEABLE`.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import feedparser
import httpx
import pytest
import requests
from cachecontrol import CacheControl
from django.utils import timezone

from statuspages import services
from statuspages.views import ENDPOINTS
from tests.statuspages.live_support import LivePage, live_page

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

# What a 200 of each kind is, by the path under /s/<slug>/ (the badge's key is filled in).
# These carry an ETag, so a cache revalidates them with If-None-Match.
VALIDATED = [
    *((f"api/v2/{endpoint}.json", "application/json") for endpoint in ENDPOINTS),
    ("history.rss", "application/rss+xml; charset=utf-8"),
    ("history.atom", "application/atom+xml; charset=utf-8"),
    *((f"badges/{{key}}/{name}.svg", "image/svg+xml; charset=utf-8") for name in ("status", "response-time")),
    ("badges/{key}/uptime-7d.json", "application/json"),
]
# The HTML pages a cache may keep (max-age) but has no validator for: asked again, drawn again.
CACHEABLE = [*VALIDATED, ("", "text/html; charset=utf-8"), ("history/", "text/html; charset=utf-8")]
# RFC 9110 §15.4.5: the fields a 304 must send when its 200 would; §8.6: Content-Length only as the 200's.
KEPT_ON_304 = ("ETag", "Cache-Control", "Vary", "Expires", "Content-Location")
REPRESENTATION = ("Content-Type", "Content-Encoding", "Content-Language", "Content-Range")


@pytest.fixture
def made(live_server, org) -> LivePage:
    return live_page(org, now=timezone.now())


def base_of(live_server, made: LivePage) -> str:
    return f"{live_server.url}/s/{made.page.slug}/"


def url_of(live_server, made: LivePage, path: str) -> str:
    key = made.page.components.get(healthcheck=made.docs).public_id
    return base_of(live_server, made) + path.format(key=key)


@pytest.mark.parametrize(("path", "content_type"), VALIDATED)
def test_a_304_sends_the_validators_and_caching_fields_and_no_representation_metadata(
    live_server, made, path, content_type
):
    url = url_of(live_server, made, path)
    first = requests.get(url, headers={"Accept-Encoding": "identity"}, timeout=30)
    assert (first.status_code, first.headers["Content-Type"]) == (200, content_type)

    again = requests.get(
        url, headers={"If-None-Match": first.headers["ETag"], "Accept-Encoding": "identity"}, timeout=30
    )

    assert again.status_code == 304
    assert again.content == b""
    for field in REPRESENTATION:
        assert field not in again.headers, field
    assert again.headers.get("Content-Length") in (None, str(len(first.content)))
    for field in KEPT_ON_304:
        assert again.headers.get(field) == first.headers.get(field), field


@pytest.mark.parametrize(("path", "content_type"), CACHEABLE)
def test_a_cache_that_revalidates_still_serves_the_answer_as_it_was(live_server, made, path, content_type):
    url = url_of(live_server, made, path)
    cache = CacheControl(requests.Session())
    first = cache.get(url, timeout=30)
    assert first.status_code == 200

    # no-cache: the cache must ask the server again, with the validator it kept.
    served = cache.get(url, headers={"Cache-Control": "no-cache"}, timeout=30)

    assert served.status_code == 200
    assert served.headers["Content-Type"] == content_type
    assert served.content == first.content
    if "ETag" in first.headers:
        assert served.from_cache  # revalidated by a 304, the kept answer served
        assert served.headers["Content-Length"] == str(len(first.content))


@pytest.mark.parametrize("fmt", ["rss", "atom"])
def test_a_feed_reader_s_revalidation_is_a_bare_304(live_server, made, fmt):
    url = url_of(live_server, made, f"history.{fmt}")
    first = feedparser.parse(url)
    assert first.status == 200
    assert first.entries

    again = feedparser.parse(url, etag=first.etag)

    assert again.status == 304
    assert not again.entries
    assert "content-type" not in again.headers


# --- HEAD: as GET, without the body ---------------------------------------------------------------

COMPARED = ("Content-Type", "Cache-Control", "Vary", "Content-Encoding", "Location", "X-Frame-Options")


def same_length(head: httpx.Response, got: httpx.Response) -> bool:
    # Django's WSGI server leaves out a HEAD's zero length (which RFC 9110 §8.6 allows).
    return head.headers.get("Content-Length") == got.headers.get("Content-Length") or (
        got.headers.get("Content-Length") == "0" and "Content-Length" not in head.headers
    )


def links(made: LivePage) -> dict[str, str]:
    """Return a confirm and an unsubscribe path of a real subscriber of the page."""
    subscriber = services.email_subscribe(
        page=made.page, email="ann@example.com", components=None, now=timezone.now()
    )
    return {
        "confirm": urlsplit(services.subscribers.confirm_url(subscriber=subscriber, page=made.page)).path,
        "unsubscribe": urlsplit(
            services.subscribers.unsubscribe_url(subscriber=subscriber, page=made.page)
        ).path,
    }


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("", 200),
        ("history/", 200),
        ("history/?year=2025", 200),
        ("subscribe/", 200),
        ("{confirm}", 200),
        ("{unsubscribe}", 200),
        ("subscribe/confirm/not-a-signed-token/", 400),
        ("unsubscribe/not-a-signed-token/", 400),
        ("login/", 302),  # a public page has no password form
        ("no-such-page/", 404),
    ],
)
def test_head_answers_as_get_without_the_body(live_server, made, path, status):
    target = path.format(**links(made))
    url = live_server.url + target if target.startswith("/") else base_of(live_server, made) + target
    with httpx.Client(headers={"Accept-Encoding": "identity"}, timeout=30) as client:
        # HEAD first: Django's test server ends a HEAD's response without reading it, racing the test's end.
        head = client.head(url)
        got = client.get(url)

    assert (got.status_code, head.status_code) == (status, status)
    assert head.content == b""
    assert same_length(head, got)
    for field in COMPARED:
        assert head.headers.get(field) == got.headers.get(field), field


def test_head_reaches_a_private_page_s_password_form(live_server, org, make_page):
    make_page(org, slug="secret", access="password", password="correct horse")
    url = f"{live_server.url}/s/secret/login/"
    with httpx.Client(headers={"Accept-Encoding": "identity"}, timeout=30) as client:
        head, got = client.head(url), client.get(url)

    assert (got.status_code, head.status_code) == (200, 200)
    assert head.content == b""
    assert head.headers["Content-Length"] == got.headers["Content-Length"]


# --- subscription links ------------------------------------------------------------------------


# A confirmation is POSTed from its own form, with that form's CSRF cookie: followed (GET) here.
@pytest.mark.parametrize(
    ("view", "method"), [("subscribe/confirm", "GET"), ("unsubscribe", "GET"), ("unsubscribe", "POST")]
)
def test_a_link_that_is_not_valid_says_so_whichever_it_is(live_server, made, view, method):
    url = base_of(live_server, made) + f"{view}/AAAA.not-signed/"
    answer = httpx.request(method, url, timeout=30)

    assert answer.status_code == 400
    assert "This link is not valid" in answer.text
    assert "<button" not in answer.text


# --- incidents keep their components' groups --------------------------------------------------


def test_an_incident_s_components_carry_the_group_components_json_gives_them(live_server, made):
    base = base_of(live_server, made) + "api/v2/"
    groups = {c["id"]: c["group_id"] for c in httpx.get(base + "components.json").json()["components"]}
    core = next(c for c in httpx.get(base + "components.json").json()["components"] if c["name"] == "Core")

    embedded = [
        component
        for endpoint in ("incidents", "incidents/unresolved", "summary")
        for incident in httpx.get(f"{base}{endpoint}.json").json()["incidents"]
        for component in incident["components"]
    ]

    assert embedded
    assert all(component["group_id"] == groups[component["id"]] for component in embedded)
    assert {component["group_id"] for component in embedded} == {core["id"]}


# --- the history's year, at its edges -----------------------------------------------------------


@pytest.mark.parametrize(
    "year", ["0001", "1969", "1999", "2000", "9999", "10000", "-1", "", "２０２５", "1e3"]
)
def test_any_history_year_is_a_page_never_an_error(live_server, made, year):
    answer = httpx.get(base_of(live_server, made) + "history/", params={"year": year}, timeout=30)
    assert answer.status_code == 200
    assert "text/html" in answer.headers["Content-Type"]
