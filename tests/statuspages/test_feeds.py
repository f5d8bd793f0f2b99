"""A page's incident history as RSS and Atom, read back with feedparser as a feed reader would; access like the page's."""

from __future__ import annotations

import html
from datetime import UTC, datetime, timedelta

import feedparser
import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from statuspages import services

pytestmark = pytest.mark.django_db

FORMATS = ["rss", "atom"]
T0 = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


@pytest.fixture
def web() -> Client:
    return Client()


@pytest.fixture
def page(org, make_page, make_check, add_component):
    page = make_page(org, title="Acme", time_zone="Europe/Berlin")
    api = add_component(page, make_check(org, name="API"), display_name="Public API")
    old = services.incident_create(
        page=page, changes={"title": "Slow logins", "impact": "minor"}, body="Looking.", now=T0
    )
    services.incident_update_add(incident=old, status="resolved", body="Fixed.", now=T0 + timedelta(hours=1))
    services.incident_create(
        page=page,
        changes={"title": "API <b>errors</b> & timeouts", "impact": "major", "components": [api.public_id]},
        body="We see errors.\n<script>alert(1)</script>",
        now=T0 + timedelta(days=3),
    )
    return page


def read(web: Client, page, fmt: str, **headers):
    answer = web.get(f"/s/{page.slug}/history.{fmt}", **headers)
    return answer, feedparser.parse(answer.content)


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_feed_is_well_formed_and_of_its_kind(web, page, fmt):
    answer, feed = read(web, page, fmt)
    assert answer.status_code == 200
    assert answer["Content-Type"].startswith(f"application/{fmt}+xml")
    assert not feed.bozo, feed.get("bozo_exception")
    assert feed.version == ("rss20" if fmt == "rss" else "atom10")
    assert feed.feed.title == "Acme: incident history"
    assert feed.feed.link == f"http://testserver/s/{page.slug}/history/"


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_feed_lists_incidents_newest_first_with_stable_ids(web, page, fmt):
    _, feed = read(web, page, fmt)
    # Readers take a title as HTML: the owner's text shows as written, markup and all, never as markup.
    assert [html.unescape(entry.title) for entry in feed.entries] == [
        "API <b>errors</b> & timeouts",
        "Slow logins",
    ]
    assert "<b>" not in feed.entries[0].title
    newest, oldest = feed.entries
    assert newest.id.startswith("urn:uuid:")
    assert newest.link.startswith(f"http://testserver/s/{page.slug}/history/?year=2026#incident-")
    assert datetime(*oldest.published_parsed[:6], tzinfo=UTC) == T0


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_entry_carries_its_updates_impact_and_components_escaped(web, page, fmt):
    _, feed = read(web, page, fmt)
    text = feed.entries[0].summary
    assert "Impact: Major. Status: Investigating." in text
    assert "Affected: Public API" in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<script>" not in text
    # Update times in the page's zone (Berlin is an hour ahead in March).
    assert "05 Mar 2026, 10:30 CET" in text


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_page_links_its_feeds(web, page, fmt):
    html = web.get(f"/s/{page.slug}/").content.decode()
    assert f'type="application/{fmt}+xml"' in html
    assert f'href="/s/{page.slug}/history.{fmt}"' in html


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_feed_has_an_etag_and_answers_304(web, page, fmt):
    answer, _ = read(web, page, fmt)
    assert answer["Cache-Control"] == "public, max-age=30"
    again = web.get(f"/s/{page.slug}/history.{fmt}", HTTP_IF_NONE_MATCH=answer["ETag"])
    assert (again.status_code, again.content) == (304, b"")


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_page_without_incidents_has_an_empty_valid_feed(web, org, make_page, fmt):
    empty = make_page(org)
    answer, feed = read(web, empty, fmt)
    assert answer.status_code == 200
    assert not feed.bozo
    assert feed.entries == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_password_pages_feed_needs_the_pages_sign_in(web, org, make_page, fmt):
    private = make_page(org, access="password", password="correct horse")
    services.incident_create(page=private, changes={"title": "Secret trouble"}, body="b", now=T0)
    refused = web.get(f"/s/{private.slug}/history.{fmt}")
    assert refused.status_code == 403
    assert b"Secret trouble" not in refused.content
    web.post(f"/s/{private.slug}/login/", {"password": "correct horse"})
    answer, feed = read(web, private, fmt)
    assert answer.status_code == 200
    assert answer["Cache-Control"] == "private, no-store"
    assert [entry.title for entry in feed.entries] == ["Secret trouble"]


def test_an_unknown_pages_feed_is_a_404(web, db):
    assert web.get("/s/no-such-page/history.rss").status_code == 404


def test_writing_to_a_feed_is_refused(web, page):
    assert web.post(f"/s/{page.slug}/history.atom").status_code == 405


def test_a_feed_reads_in_the_same_queries_whatever_the_incidents(web, org, page, make_page):
    def queries(of) -> int:
        with CaptureQueriesContext(connection) as captured:
            web.get(f"/s/{of.slug}/history.rss")
        return len(captured.captured_queries)

    small = make_page(org)
    services.incident_create(page=small, changes={"title": "One"}, body="b", now=T0)
    assert queries(small) == queries(page)
