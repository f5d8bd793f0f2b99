"""A published incident's own page and the component statuses its updates declare, read over real HTTP.

The live server answers an HTTP client (httpx) as it answers any reader: the owner writes through
the REST API with an API key, a reader follows the JSON's ``shortlink`` and reads the page and
its ``/api/v2`` JSON.
"""

from __future__ import annotations

import uuid

import httpx
import pytest
from django.utils import timezone

from monitors.services import api_key_create
from statuspages import services
from statuspages.models import Component, PublishedIncident
from tests.statuspages.live_support import OUTAGE_TITLE, LivePage, live_page

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture
def made(org) -> LivePage:
    return live_page(org, now=timezone.now())


@pytest.fixture
def http(live_server):
    with httpx.Client(base_url=live_server.url, timeout=30) as client:
        yield client


@pytest.fixture
def owner(live_server, org):
    """Return an HTTP client of the REST API holding the organization's read-write key."""
    _, raw_key = api_key_create(organization=org)
    with httpx.Client(
        base_url=live_server.url, timeout=30, headers={"Authorization": f"Bearer {raw_key}"}
    ) as client:
        yield client


def _open_incident(http: httpx.Client, made: LivePage) -> dict:
    answer = http.get(f"/s/{made.page.slug}/api/v2/incidents/unresolved.json")
    assert answer.status_code == 200
    (incident,) = answer.json()["incidents"]
    return incident


def _statuses(http: httpx.Client, made: LivePage) -> dict[str, str]:
    summary = http.get(f"/s/{made.page.slug}/api/v2/summary.json").json()
    return {component["name"]: component["status"] for component in summary["components"]}


def test_the_shortlink_is_the_incident_s_own_page_by_its_absolute_address(http, live_server, made):
    incident = _open_incident(http, made)
    assert incident["shortlink"] == f"{live_server.url}/s/{made.page.slug}/incidents/{incident['id']}/"


def test_following_the_shortlink_opens_a_page_naming_the_incident(http, made):
    incident = _open_incident(http, made)
    answer = httpx.get(incident["shortlink"], timeout=30)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/html")
    assert f'<h1 class="incident-title">{OUTAGE_TITLE}</h1>' in answer.text
    assert "A bad deploy; rolling back." in answer.text
    assert f"<title>{OUTAGE_TITLE} · Acme status</title>" in answer.text


def test_the_main_page_links_each_incident_to_its_own_page(http, made):
    incident = _open_incident(http, made)
    page = http.get(f"/s/{made.page.slug}/").text
    assert f'href="/s/{made.page.slug}/incidents/{incident["id"]}/"' in page


def test_a_head_of_the_incident_page_has_the_get_s_headers_and_no_body(http, made):
    incident = _open_incident(http, made)
    got = httpx.get(incident["shortlink"], timeout=30, headers={"Accept-Encoding": "identity"})
    head = httpx.head(incident["shortlink"], timeout=30, headers={"Accept-Encoding": "identity"})
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == str(len(got.content))
    for header in ("content-type", "cache-control"):
        assert head.headers[header] == got.headers[header]


def test_a_draft_s_page_is_a_404(http, made):
    draft = services.incident_create(
        page=made.page, changes={"title": "Not yet", "draft": True}, body="b", now=timezone.now()
    )
    assert http.get(f"/s/{made.page.slug}/incidents/{draft.public_id}/").status_code == 404


def test_an_incident_under_another_page_s_address_is_a_404(http, org, made):
    other = services.status_page_create(organization=org, changes={"slug": "other", "title": "Other"})
    incident = PublishedIncident.objects.get(title=OUTAGE_TITLE)
    assert http.get(f"/s/{other.slug}/incidents/{incident.public_id}/").status_code == 404
    assert http.get(f"/s/{made.page.slug}/incidents/{uuid.uuid4()}/").status_code == 404


def test_a_password_page_s_incident_asks_for_the_password(http, org):
    page = services.status_page_create(
        organization=org,
        changes={"slug": "private", "title": "Private", "access": "password", "password": "correct horse"},
    )
    incident = services.incident_create(page=page, changes={"title": "Errors"}, body="b", now=timezone.now())
    answer = http.get(f"/s/private/incidents/{incident.public_id}/")
    assert (answer.status_code, answer.headers["location"]) == (302, "/s/private/login/")


def test_an_update_s_declared_status_shows_until_the_incident_resolves(http, owner, made):
    incident = _open_incident(http, made)
    docs = Component.objects.get(healthcheck=made.docs)
    updates = f"/api/v1/status-pages/{made.page.public_id}/incidents/{incident['id']}/updates/"
    added = owner.post(
        updates,
        json={
            "status": "identified",
            "body": "Docs too.",
            "components": {str(docs.public_id): "partial_outage"},
        },
    )
    assert added.status_code == 201, added.text

    assert _statuses(http, made)["Docs"] == "partial_outage"
    (update, *_) = _open_incident(http, made)["incident_updates"]
    assert update["affected_components"] == [
        {
            "code": str(docs.public_id),
            "name": "Docs",
            "old_status": "operational",
            "new_status": "partial_outage",
        }
    ]
    page = http.get(f"/s/{made.page.slug}/").text
    assert f'class="component status-partial_outage" id="component-{docs.public_id}"' in page
    own = httpx.get(incident["shortlink"], timeout=30).text
    assert '<span class="component-name">Docs</span>: <span class="status-label">Partial outage</span>' in own

    resolved = owner.post(updates, json={"status": "resolved", "body": "Fixed."})
    assert resolved.status_code == 201, resolved.text
    # Back to what its checks measure (up); the outage measured on API stays.
    assert _statuses(http, made) == {
        "Core": "major_outage",
        "API": "major_outage",
        "Docs": "operational",
        "Search": "under_maintenance",
    }


def test_a_status_set_by_hand_shows_when_worse_than_the_measured_one(http, owner, made):
    docs, api = (Component.objects.get(healthcheck=check) for check in (made.docs, made.api))
    base = f"/api/v1/status-pages/{made.page.public_id}/components"
    for component, status in ((docs, "degraded_performance"), (api, "operational")):
        answer = owner.patch(f"{base}/{component.public_id}/", json={"declared_status": status})
        assert answer.status_code == 200, answer.text

    shown = _statuses(http, made)
    assert shown["Docs"] == "degraded_performance"
    # "Operational" by hand never hides the outage the checks measure.
    assert shown["API"] == "major_outage"

    assert owner.patch(f"{base}/{docs.public_id}/", json={"declared_status": ""}).status_code == 200
    assert _statuses(http, made)["Docs"] == "operational"
