"""Requests by Host with DEBUG off: a verified custom domain passes Django's host check; every other unknown host is a 400."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from statuspages import services
from statuspages.models import StatusPage

pytestmark = pytest.mark.django_db

DOMAIN = "status.acme.example"
OWN_HOST = "uptimy.example"


@pytest.fixture(autouse=True)
def production(settings):
    """Run as production does: DEBUG off, ALLOWED_HOSTS naming Uptimy's own host only."""
    settings.DEBUG = False
    settings.ALLOWED_HOSTS = [OWN_HOST]


@pytest.fixture
def web() -> Client:
    return Client(HTTP_HOST=DOMAIN)


@pytest.fixture
def page(org, make_page, make_check, add_component):
    page = make_page(org, title="Acme by domain", custom_domain=DOMAIN)
    add_component(page, make_check(org, name="API"))
    return page


def verify(page):
    return services.status_page_verify_domain(
        page=page, resolver=lambda name: [page.domain_token], now=timezone.now()
    )


@pytest.mark.parametrize("path", ["/", "/history/", "/api/v2/summary.json", "/history.atom", "/login/"])
def test_a_verified_domain_is_answered_though_allowed_hosts_does_not_list_it(web, page, path):
    verify(page)
    answer = web.get(path)
    # The login form of a public page sends its reader to the page.
    assert answer.status_code == (302 if path == "/login/" else 200)


def test_a_verified_domain_with_a_port_or_a_trailing_dot_is_the_same_domain(web, page):
    verify(page)
    assert web.get("/", HTTP_HOST=f"{DOMAIN}:8443").status_code == 200
    assert web.get("/", HTTP_HOST=f"{DOMAIN.upper()}.").status_code == 200


def test_the_pages_json_names_its_own_domain(web, page):
    verify(page)
    assert web.get("/api/v2/status.json").json()["page"]["url"] == f"http://{DOMAIN}/"


def test_a_components_badge_answers_at_the_domain(web, page):
    verify(page)
    component = page.components.get()
    assert web.get(f"/badges/{component.public_id}/status.svg").status_code == 200


@pytest.mark.parametrize("path", ["/admin/", "/api/v1/healthchecks/", "/metrics", "/s/whatever/"])
def test_a_custom_domain_serves_nothing_but_its_page(web, page, path):
    verify(page)
    assert web.get(path).status_code == 404


@pytest.mark.parametrize(
    "host",
    [
        "unknown.example",
        DOMAIN,  # set, not verified
        "bad host!",
        "a" * 300 + ".example",
        "",
        "[::1",
    ],
)
def test_any_other_host_is_a_clear_400(web, page, host):
    answer = web.get("/", HTTP_HOST=host)
    assert answer.status_code == 400
    assert b"Unknown host" in answer.content


def test_uptimys_own_host_keeps_every_route(page):
    own = Client(HTTP_HOST=OWN_HOST)
    assert own.get(f"/s/{page.slug}/").status_code == 200
    assert own.get("/api/v1/healthchecks/").status_code == 401


def test_a_changed_domain_stops_answering_at_once(web, page):
    verify(page)
    assert web.get("/").status_code == 200
    services.status_page_update(page=page, changes={"custom_domain": "new.acme.example"})
    assert web.get("/").status_code == 400


def test_a_domain_answers_as_soon_as_it_is_verified(web, page):
    assert web.get("/").status_code == 400
    verify(page)
    assert web.get("/").status_code == 200


def test_a_deleted_pages_domain_stops_answering(web, page):
    verify(page)
    assert web.get("/").status_code == 200
    services.status_page_delete(page=page)
    assert web.get("/").status_code == 400


def test_the_host_check_answers_from_the_cache_once_it_knows_a_domain(web, page):
    verify(page)
    assert web.get("/").status_code == 200
    # Behind the services' back, so nothing forgets the kept answer: the host still passes the
    # check (no 400), and the page lookup, which reads the database, finds no verified page.
    StatusPage.objects.filter(pk=page.pk).update(domain_verified_at=None)
    answer = web.get("/api/v2/status.json")
    assert (answer.status_code, answer.json()) == (404, {"error": "No status page here."})
