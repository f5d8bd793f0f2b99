"""The organization's incidents page: every incident, newest first, filtered as the API's list; acknowledge in place."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from alerts.models import Incident
from tests.web.test_web_incidents import acknowledge_url, open_incident
from web.selectors import PAGE_SIZE
from web.templatetags.web_tags import duration

pytestmark = pytest.mark.django_db

PAGE = "/app/incidents/"


def resolved_incident(healthcheck, **fields) -> Incident:
    opened = timezone.now() - timedelta(hours=3)
    return open_incident(
        healthcheck,
        opened_at=opened,
        resolved_at=opened + timedelta(hours=2, minutes=5),
        resolution="recovered",
        **fields,
    )


def shown(answer) -> list[Incident]:
    return [row.incident for row in answer.context["board"].rows]


def test_the_main_navigation_links_to_the_page(owner):
    assert f'href="{PAGE}"' in owner.get("/app/").content.decode()


def test_the_page_lists_the_organization_s_incidents_newest_first(owner, org, make_check):
    older = resolved_incident(make_check(org, name="Older"))
    newer = open_incident(make_check(org, name="Newer"))
    assert shown(owner.get(PAGE)) == [newer, older]


def test_another_organization_s_incidents_are_never_shown(owner, org, other_org, make_check):
    open_incident(make_check(other_org, name="Globex search"), cause_summary="Globex is down")
    answer = owner.get(PAGE)
    page = answer.content.decode()
    assert shown(answer) == []
    assert "Globex search" not in page
    assert "Globex is down" not in page


def test_a_row_shows_the_healthcheck_s_link_its_cause_its_times_and_its_duration(owner, org, make_check):
    healthcheck = make_check(org, name="Docs MCP")
    incident = resolved_incident(
        healthcheck,
        severity="warning",
        cause_kind="timeout",
        cause_summary="Degraded in 2 of 3 regions",
        acknowledged_at=timezone.now() - timedelta(hours=2),
        acknowledged_by="API key ab12…",
    )
    page = owner.get(PAGE).content.decode()
    assert f'<a href="/app/healthchecks/{healthcheck.public_id}/">Docs MCP</a>' in page
    assert "Warning" in page
    assert "Degraded in 2 of 3 regions <code>timeout</code>" in page
    assert f"{incident.opened_at:%Y-%m-%d %H:%M:%S}" in page
    assert f"{incident.acknowledged_at:%Y-%m-%d %H:%M} UTC by API key ab12…" in page
    assert f"{incident.resolved_at:%Y-%m-%d %H:%M:%S}</span> (recovered)" in page
    assert "2 h 5 min" in page


@pytest.mark.parametrize(
    ("fields", "badge"),
    [
        ({}, '<span aria-hidden="true">✕</span> Open'),
        (
            {"acknowledged_at": timezone.now(), "acknowledged_by": "ops@example.com (web app)"},
            '<span aria-hidden="true">!</span> Acknowledged',
        ),
        (
            {"resolved_at": timezone.now(), "resolution": "recovered"},
            '<span aria-hidden="true">✓</span> Resolved',
        ),
    ],
    ids=["open", "acknowledged", "resolved"],
)
def test_the_state_is_told_by_a_mark_and_a_word_not_colour_alone(owner, org, make_check, fields, badge):
    open_incident(make_check(org), **fields)
    assert badge in owner.get(PAGE).content.decode()


def test_an_open_incident_s_duration_runs_until_now(owner, org, make_check):
    open_incident(make_check(org), opened_at=timezone.now() - timedelta(minutes=5, seconds=3))
    assert "5 min 3 s so far" in owner.get(PAGE).content.decode()


def test_a_deleted_healthcheck_s_incident_keeps_its_name_without_a_link(owner, org, make_check):
    healthcheck = make_check(org, name="Gone MCP")
    resolved_incident(healthcheck)
    healthcheck.delete()
    page = owner.get(PAGE).content.decode()
    assert "Gone MCP (deleted)" in page
    assert f"/app/healthchecks/{healthcheck.public_id}/" not in page


@pytest.mark.parametrize(
    ("state", "expected"), [("open", ["open"]), ("resolved", ["resolved"]), ("", ["open", "resolved"])]
)
def test_the_state_filter_is_the_api_s(owner, org, make_check, state, expected):
    incidents = {
        "resolved": resolved_incident(make_check(org, name="Over")),
        "open": open_incident(make_check(org, name="Ongoing")),
    }
    assert shown(owner.get(PAGE, {"state": state})) == [incidents[key] for key in expected]


def test_the_healthcheck_filter_shows_that_healthcheck_s_incidents_only(owner, org, make_check):
    docs, search = make_check(org, name="Docs"), make_check(org, name="Search")
    wanted = open_incident(docs)
    open_incident(search)
    answer = owner.get(PAGE, {"healthcheck": str(docs.public_id)})
    assert shown(answer) == [wanted]
    assert f'<option value="{docs.public_id}" selected>Docs</option>' in answer.content.decode()


def test_the_healthcheck_filter_lists_no_other_organization_s_healthcheck(owner, org, other_org, make_check):
    make_check(other_org, name="Globex search")
    assert "Globex search" not in owner.get(PAGE).content.decode()


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ({"state": "closed"}, "state", "Select a valid choice. closed is not one of the available choices."),
        ({"healthcheck": "not-a-uuid"}, "healthcheck", "Enter a valid UUID."),
    ],
)
def test_a_bad_filter_is_a_field_error_next_to_it(owner, org, make_check, query, field, message):
    open_incident(make_check(org))
    answer = owner.get(PAGE, query)
    assert answer.status_code == 200
    assert answer.context["board"].errors == {field: [message]}
    assert f'<ul class="errorlist" id="f-{field}-errors"><li>{message}</li></ul>' in answer.content.decode()
    assert shown(answer) == []


def test_pages_keep_the_filter_and_hold_a_page_s_worth_each(owner, org, make_check):
    healthcheck = make_check(org)
    start = timezone.now() - timedelta(days=1)
    for index in range(PAGE_SIZE + 1):
        opened = start + timedelta(minutes=index)
        open_incident(healthcheck, opened_at=opened, resolved_at=opened + timedelta(seconds=30))
    first = owner.get(PAGE, {"state": "resolved"})
    assert len(shown(first)) == PAGE_SIZE
    assert 'href="?state=resolved&amp;page=2"' in first.content.decode()
    second = owner.get(PAGE, {"state": "resolved", "page": 2})
    assert [incident.opened_at for incident in shown(second)] == [start]


def test_an_open_unacknowledged_incident_has_a_button_that_comes_back_to_the_page(owner, org, make_check):
    incident = open_incident(make_check(org))
    page = owner.get(PAGE, {"state": "open"}).content.decode()
    assert f'action="{acknowledge_url(incident)}"' in page
    assert '<input type="hidden" name="next" value="/app/incidents/?state=open">' in page


@pytest.mark.parametrize(
    "fields",
    [
        {"acknowledged_at": timezone.now(), "acknowledged_by": "ops@example.com (web app)"},
        {"resolved_at": timezone.now(), "resolution": "recovered"},
    ],
    ids=["acknowledged", "resolved"],
)
def test_an_acknowledged_or_resolved_incident_has_no_button(owner, org, make_check, fields):
    incident = open_incident(make_check(org), **fields)
    assert acknowledge_url(incident) not in owner.get(PAGE).content.decode()


def test_acknowledging_from_the_page_returns_to_it_and_shows_who(owner, org, make_check):
    incident = open_incident(make_check(org))
    answer = owner.post(acknowledge_url(incident), {"next": f"{PAGE}?state=open"}, follow=True)
    incident.refresh_from_db()
    assert answer.redirect_chain == [(f"{PAGE}?state=open", 302)]
    assert f"Acknowledged by {owner.user.email} (web app)" in answer.content.decode()
    assert incident.acknowledged_at is not None


@pytest.mark.parametrize(
    "target",
    ["https://evil.example/app/", "//evil.example/app/", "javascript:alert(1)", "http://testserver.evil/"],
)
def test_acknowledging_never_goes_to_another_site(owner, org, make_check, target):
    incident = open_incident(make_check(org))
    answer = owner.post(acknowledge_url(incident), {"next": target})
    assert answer["Location"] == f"/app/healthchecks/{incident.healthcheck_public_id}/"


def test_a_viewer_sees_the_page_without_a_button(viewer, org, make_check):
    incident = open_incident(make_check(org))
    answer = viewer.get(PAGE)
    assert shown(answer) == [incident]
    assert acknowledge_url(incident) not in answer.content.decode()


def test_a_viewer_s_acknowledgement_from_the_page_is_refused(viewer, org, make_check):
    incident = open_incident(make_check(org))
    assert viewer.post(acknowledge_url(incident), {"next": PAGE}).status_code == 403
    incident.refresh_from_db()
    assert incident.acknowledged_at is None


def test_the_page_needs_a_signed_in_member(db):
    from django.test import Client

    answer = Client().get(PAGE)
    assert answer.status_code == 302
    assert answer["Location"].startswith("/app/login/")


def _queries_for(browser) -> int:
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    # The request clears the query log as it starts (request_started → reset_queries): start it empty.
    reset_queries()
    with CaptureQueriesContext(connection) as captured:
        assert browser.get(PAGE).status_code == 200
    return len(captured)


def test_the_page_s_queries_do_not_grow_with_its_incidents(owner, org, make_check):
    first = make_check(org, name="First")
    open_incident(first)
    one = _queries_for(owner)
    assert one > 3  # counted: the session, the membership, the incidents and the healthchecks
    now = timezone.now()
    for index in range(30):
        healthcheck = make_check(org, name=f"More {index}")
        open_incident(
            healthcheck,
            opened_at=now - timedelta(hours=index + 1),
            resolved_at=now - timedelta(hours=index) if index % 2 else None,
            acknowledged_at=now - timedelta(hours=index) if index % 3 == 0 else None,
            acknowledged_by="ops@example.com (web app)" if index % 3 == 0 else "",
        )
    assert _queries_for(owner) == one


@pytest.mark.parametrize(
    ("length", "words"),
    [
        (timedelta(0), "0 s"),
        (timedelta(seconds=45), "45 s"),
        (timedelta(minutes=1, seconds=5), "1 min 5 s"),
        (timedelta(hours=2), "2 h"),
        (timedelta(hours=2, minutes=5, seconds=59), "2 h 5 min"),
        (timedelta(days=3, hours=4, minutes=1), "3 d 4 h"),
        (timedelta(seconds=-1), "0 s"),
    ],
)
def test_a_duration_is_told_in_its_largest_unit_and_the_next(length, words):
    assert duration(length) == words
