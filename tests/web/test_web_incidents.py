"""Acknowledging an incident from the web app: alerts' own service, as the API's acknowledge action."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from alerts.links import acknowledge_url as signed_acknowledge_url
from alerts.models import Incident, IncidentEvent
from alerts.rules import EventKind
from monitors.models import Membership
from tests.web.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def open_incident(healthcheck, **fields) -> Incident:
    defaults = {
        "organization": healthcheck.organization,
        "healthcheck": healthcheck,
        "healthcheck_public_id": healthcheck.public_id,
        "healthcheck_name": healthcheck.name,
        "severity": "critical",
        "opened_at": timezone.now() - timedelta(minutes=5),
        "cause_summary": "Down in 2 of 3 regions",
    }
    return Incident.objects.create(**{**defaults, **fields})


def acknowledge_url(incident: Incident) -> str:
    return f"/app/incidents/{incident.public_id}/acknowledge/"


def page_of(healthcheck) -> str:
    return f"/app/healthchecks/{healthcheck.public_id}/"


def test_an_open_incident_has_an_acknowledge_button_on_its_healthcheck_page(owner, org, make_check):
    incident = open_incident(make_check(org))
    page = owner.get(page_of(incident.healthcheck)).content.decode()
    assert f'action="{acknowledge_url(incident)}"' in page


def test_acknowledging_records_who_and_when_and_shows_it(owner, org, make_check):
    incident = open_incident(make_check(org))
    answer = owner.post(acknowledge_url(incident), follow=True)
    incident.refresh_from_db()
    assert incident.acknowledged_at is not None
    assert incident.acknowledged_by == f"{owner.user.email} (web app)"
    assert incident.acknowledged_by_key is None
    page = answer.content.decode()
    assert answer.redirect_chain[-1][0] == page_of(incident.healthcheck)
    assert f"{incident.acknowledged_at:%Y-%m-%d %H:%M} UTC by {owner.user.email} (web app)" in page
    assert f'action="{acknowledge_url(incident)}"' not in page


def test_acknowledging_adds_the_timeline_event_the_api_adds(owner, org, make_check):
    incident = open_incident(make_check(org))
    owner.post(acknowledge_url(incident))
    event = IncidentEvent.objects.get(incident=incident, kind=EventKind.ACKNOWLEDGED)
    assert event.details == {"by": f"{owner.user.email} (web app)"}


def test_an_incident_already_acknowledged_keeps_its_first_acknowledgement_and_says_so(owner, org, make_check):
    earlier = timezone.now() - timedelta(minutes=1)
    incident = open_incident(make_check(org), acknowledged_at=earlier, acknowledged_by="API key ab12…")
    answer = owner.post(acknowledge_url(incident), follow=True)
    incident.refresh_from_db()
    assert (incident.acknowledged_at, incident.acknowledged_by) == (earlier, "API key ab12…")
    assert (
        f"Already acknowledged by API key ab12… at {earlier:%Y-%m-%d %H:%M} UTC." in answer.content.decode()
    )


def test_an_incident_already_over_answers_with_the_service_s_message(owner, org, make_check):
    now = timezone.now()
    incident = open_incident(make_check(org), resolved_at=now, resolution="recovered")
    answer = owner.post(acknowledge_url(incident), follow=True)
    assert answer.status_code == 200
    assert "This incident is resolved; there is nothing to acknowledge." in answer.content.decode()
    incident.refresh_from_db()
    assert incident.acknowledged_at is None


def test_an_ended_incident_has_no_acknowledge_button(owner, org, make_check):
    incident = open_incident(make_check(org), resolved_at=timezone.now(), resolution="recovered")
    assert acknowledge_url(incident) not in owner.get(page_of(incident.healthcheck)).content.decode()


def test_an_incident_of_a_deleted_healthcheck_is_acknowledged_from_the_dashboard(owner, org, make_check):
    healthcheck = make_check(org)
    incident = open_incident(healthcheck)
    healthcheck.delete()
    answer = owner.post(acknowledge_url(incident))
    assert answer.status_code == 302
    assert answer["Location"] == "/app/"


def test_a_viewer_is_refused_and_sees_no_button(make_member, org, make_check):
    viewer = make_member(org, Membership.Role.VIEWER)
    incident = open_incident(make_check(org))
    assert acknowledge_url(incident) not in viewer.get(page_of(incident.healthcheck)).content.decode()
    assert viewer.post(acknowledge_url(incident)).status_code == 403
    incident.refresh_from_db()
    assert incident.acknowledged_at is None


def test_another_organization_s_incident_is_not_found(owner, other_org, make_check):
    incident = open_incident(make_check(other_org))
    assert owner.post(acknowledge_url(incident)).status_code == 404
    incident.refresh_from_db()
    assert incident.acknowledged_at is None


def test_acknowledging_needs_a_post(owner, org, make_check):
    assert owner.get(acknowledge_url(open_incident(make_check(org)))).status_code == 405


def test_acknowledging_needs_the_csrf_token(org, make_member, make_check):
    from django.test import Client

    owner = make_member(org)
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(owner.user)
    incident = open_incident(make_check(org))
    assert strict.post(acknowledge_url(incident)).status_code == 403
    incident.refresh_from_db()
    assert incident.acknowledged_at is None


def signed_in(username: str) -> Client:
    """Return a browser signed in through the web app's own login form: a real session cookie."""
    browser = Client()
    answer = browser.post("/app/login/", {"username": username, "password": PASSWORD})
    assert answer.status_code == 302
    return browser


def link_path(incident: Incident) -> str:
    url = signed_acknowledge_url(incident_public_id=incident.public_id, now=timezone.now())
    return "/" + url.split("/", 3)[3]


def acknowledged_by_in_the_api(client, incident: Incident) -> str:
    answer = client.get(f"/api/v1/incidents/{incident.public_id}/")
    assert answer.status_code == 200
    return answer.json()["acknowledged_by"]


def test_the_acknowledge_link_clicked_by_a_signed_in_member_names_them(make_member, org, make_check, client):
    make_member(org, Membership.Role.MEMBER, username="ann@acme.example")
    incident = open_incident(make_check(org))
    browser = signed_in("ann@acme.example")

    page = browser.get(link_path(incident)).content.decode()
    assert "Signed in as ann@acme.example" in page
    answer = browser.post(link_path(incident))

    assert answer.status_code == 200
    assert acknowledged_by_in_the_api(client, incident) == "ann@acme.example (acknowledge link)"


def test_the_acknowledge_link_clicked_signed_out_stays_by_acknowledge_link(org, make_check, client):
    incident = open_incident(make_check(org))

    assert Client().post(link_path(incident)).status_code == 200

    assert acknowledged_by_in_the_api(client, incident) == "acknowledge link"


def test_the_acknowledge_link_does_not_name_a_signed_in_stranger(
    make_member, org, other_org, make_check, client
):
    make_member(other_org, username="eve@globex.example")
    incident = open_incident(make_check(org))

    signed_in("eve@globex.example").post(link_path(incident))

    assert acknowledged_by_in_the_api(client, incident) == "acknowledge link"
