"""The issue's bad-input list: each gets a 4xx whose page or message names the problem, never a 500.

An unknown slug (on every public route), a wrong password, a Host header that is no page's, a
report of 10 years or ending before it starts, a badge for a deleted component. Run on the
embedded default and, with DATABASE_URL, on PostgreSQL (.ci/run runs both).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from monitors.services import healthcheck_delete
from statuspages import services
from statuspages.models import Component, StatusPage

pytestmark = pytest.mark.django_db

HOST = "status.acme.example"
NO_PAGE = "No status page with this address."


@dataclass
class Site:
    page: StatusPage
    component: Component
    private: StatusPage


@pytest.fixture
def site(org, make_page, make_check, add_component, settings) -> Site:
    settings.DEBUG = False
    settings.ALLOWED_HOSTS = ["testserver", "other.example"]
    page = make_page(org, slug="acme", custom_domain=HOST)
    component = add_component(page, make_check(org, name="API"))
    private = make_page(org, slug="private", access="password", password="correct horse")
    return Site(page, component, private)


UNKNOWN_SLUG_ROUTES = [
    ("/s/no-such-page/", "text/html", NO_PAGE),
    ("/s/no-such-page/history/", "text/html", NO_PAGE),
    ("/s/no-such-page/history.rss", "text/html", NO_PAGE),
    ("/s/no-such-page/history.atom", "text/html", NO_PAGE),
    ("/s/no-such-page/login/", "text/html", NO_PAGE),
    ("/s/no-such-page/subscribe/", "text/html", NO_PAGE),
    ("/s/no-such-page/unsubscribe/not-a-token/", "text/html", NO_PAGE),
    ("/s/no-such-page/api/v2/summary.json", "application/json", "No status page here."),
    (
        "/s/no-such-page/api/v2/scheduled-maintenances/upcoming.json",
        "application/json",
        "No status page here.",
    ),
    ("/s/no-such-page/badges/any-key/status.svg", "image/svg+xml", "not found"),
    ("/s/no-such-page/badges/any-key/uptime-30d.json", "application/json", "not found"),
]


@pytest.mark.parametrize(("path", "kind", "says"), UNKNOWN_SLUG_ROUTES)
def test_an_unknown_slug_is_a_404_that_says_so_on_every_route(site, path, kind, says):
    answer = Client().get(path)

    assert answer.status_code == 404
    assert answer["Content-Type"].startswith(kind)
    assert says in answer.content.decode()


def test_a_deleted_page_s_slug_is_an_unknown_slug(site):
    services.status_page_delete(page=site.page)
    answer = Client().get("/s/acme/")

    assert (answer.status_code, NO_PAGE in answer.content.decode()) == (404, True)


def test_a_wrong_password_is_a_403_that_says_so(site):
    answer = Client().post("/s/private/login/", {"password": "wrong password"})

    assert answer.status_code == 403
    assert "That password is not right." in answer.content.decode()


@pytest.mark.parametrize(
    ("host", "status", "says"),
    [
        ("unknown.example", 400, "Unknown host"),  # no page's, and not Uptimy's own
        (HOST, 400, "Unknown host"),  # a page's domain, not verified yet
        ("bad host!", 400, "Unknown host"),
        ("other.example", 404, "No status page answers at this host."),  # allowed, but no page's
    ],
)
def test_a_host_header_that_is_no_page_s_is_a_clear_4xx(site, host, status, says):
    answer = Client(HTTP_HOST=host).get("/")

    assert answer.status_code == status
    assert says in answer.content.decode()


REPORTS = "/api/v1/reports/"


@pytest.mark.parametrize(
    ("params", "field", "says"),
    [
        ({"from": "2016-01-01", "to": "2025-12-31"}, "to", "3653 days; at most 400"),
        ({"from": "2026-10-10", "to": "2026-10-01"}, "to", "before"),
    ],
)
@pytest.mark.parametrize("kind", ["json", "csv", "html", "pdf"])
def test_a_report_of_ten_years_or_ending_before_it_starts_is_a_400_naming_to(
    client, params, field, says, kind
):
    answer = client.get(REPORTS, {**params, "format": kind})

    assert answer.status_code == 400
    assert answer["Content-Type"] == "application/json"
    assert says in " ".join(answer.json()[field])


DELETIONS: list[tuple[str, Callable[[Site], Any]]] = [
    ("the component", lambda site: services.component_delete(component=site.component)),
    ("its healthcheck", lambda site: healthcheck_delete(healthcheck=site.component.healthcheck)),
    ("its page", lambda site: services.status_page_delete(page=site.page)),
]


@pytest.mark.parametrize(("deleted", "delete"), DELETIONS, ids=[name for name, _ in DELETIONS])
@pytest.mark.parametrize("fmt", ["svg", "json"])
def test_a_badge_for_a_deleted_component_is_a_404_badge(site, deleted, delete, fmt):
    url = f"/s/acme/badges/{site.component.public_id}/status.{fmt}"
    assert Client().get(url).status_code == 200
    delete(site)

    answer = Client().get(url)

    assert answer.status_code == 404
    assert answer["Cache-Control"] == "no-store"
    assert "not found" in answer.content.decode()
