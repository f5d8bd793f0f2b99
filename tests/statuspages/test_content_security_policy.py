"""Every public answer of a status page carries a strict Content-Security-Policy: HTML, feeds, JSON, badges, errors."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from statuspages import services
from statuspages.models import Component, PublishedIncident
from statuspages.policy import DOCUMENT_POLICY, answer_policy, logo_origin, page_policy
from statuspages.views import ENDPOINTS
from tests.statuspages.live_support import live_page

PAGE_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
DOMAIN = "status.acme.example"


@pytest.fixture
def made(org):
    return live_page(org, now=timezone.now())


def routes(made) -> list[tuple[str, str]]:
    """Return (path under the page, expected policy kind) for every public route of the page."""
    incident = PublishedIncident.objects.filter(page=made.page).first()
    component = Component.objects.filter(page=made.page).first()
    assert incident is not None
    assert component is not None
    return [
        ("", "page"),
        ("history/", "page"),
        (f"incidents/{incident.public_id}/", "page"),
        ("incidents/00000000-0000-0000-0000-000000000000/", "page"),  # its 404
        ("login/", "page"),
        ("subscribe/", "page"),
        ("subscribe/confirm/not-a-token/", "page"),
        ("unsubscribe/not-a-token/", "page"),
        ("history.rss", "document"),
        ("history.atom", "document"),
        *((f"api/v2/{endpoint}.json", "document") for endpoint in ENDPOINTS),
        (f"badges/{component.badge_token}/status.svg", "badge"),
        (f"badges/{component.badge_token}/uptime-24h.json", "badge"),
        ("badges/unknown/status.svg", "badge"),
    ]


def expected(kind: str) -> str:
    if kind == "page":
        return PAGE_POLICY
    if kind == "document":
        return DOCUMENT_POLICY
    return "default-src 'none'; style-src 'unsafe-inline'; sandbox"


def test_every_route_under_s_slug_sends_its_policy(made, client):
    for path, kind in routes(made):
        answer = client.get(f"/s/{made.page.slug}/{path}")
        assert answer.status_code < 500, path
        assert answer["Content-Security-Policy"] == expected(kind), path


def test_every_route_at_a_verified_custom_domain_sends_its_policy(made, settings):
    settings.ALLOWED_HOSTS = ["testserver"]
    services.status_page_update(page=made.page, changes={"custom_domain": DOMAIN})
    made.page.refresh_from_db()
    services.status_page_verify_domain(
        page=made.page, resolver=lambda name: [made.page.domain_token], now=timezone.now()
    )
    web = Client(HTTP_HOST=DOMAIN)
    for path, kind in routes(made):
        answer = web.get(f"/{path}")
        assert answer.status_code < 500, path
        assert answer["Content-Security-Policy"] == expected(kind), path


def test_a_page_with_an_external_logo_may_load_images_from_its_origin_only(made, client):
    services.status_page_update(page=made.page, changes={"logo_url": "https://cdn.acme.example/logo.png?v=2"})

    policy = client.get(f"/s/{made.page.slug}/")["Content-Security-Policy"]

    assert "img-src 'self' https://cdn.acme.example;" in policy


def test_the_pages_send_no_inline_script_or_style(made, client):
    html = client.get(f"/s/{made.page.slug}/").content.decode()

    assert "<script" not in html
    assert " style=" not in html
    assert "<style" not in html


def test_the_web_apps_policy_is_left_as_it_was(client):
    assert "script-src 'self'" in client.get("/app/login/")["Content-Security-Policy"]


@pytest.mark.parametrize(
    ("logo_url", "origin"),
    [
        ("", None),
        ("https://cdn.example.com/a/logo.svg", "https://cdn.example.com"),
        ("http://cdn.example.com:8080/logo.png", "http://cdn.example.com:8080"),
        ("HTTPS://CDN.example.com/x", "https://cdn.example.com"),
        ("https://[2001:db8::1]/logo.png", "https://[2001:db8::1]"),
        ("javascript:alert(1)", None),
        ("data:image/png;base64,AAAA", None),
        ("https://a.example;script-src */x", None),
    ],
)
def test_a_logos_origin(logo_url, origin):
    assert logo_origin(logo_url) == origin


@pytest.mark.parametrize(
    ("content_type", "policy"),
    [
        ("text/html; charset=utf-8", PAGE_POLICY),
        ("application/json", DOCUMENT_POLICY),
        ("application/rss+xml; charset=utf-8", DOCUMENT_POLICY),
        ("application/atom+xml; charset=utf-8", DOCUMENT_POLICY),
        ("", DOCUMENT_POLICY),
    ],
)
def test_each_kind_of_answer_gets_its_policy(content_type, policy):
    assert answer_policy(content_type=content_type) == policy
    assert page_policy() == PAGE_POLICY
