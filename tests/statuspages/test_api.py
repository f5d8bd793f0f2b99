"""The owners' API under /api/v1/status-pages/: CRUD, validation naming the field, keys, tenants, domains."""

from __future__ import annotations

import uuid

import pytest
from rest_framework.test import APIClient

from monitors.models import Healthcheck
from statuspages.api import views as api_views
from statuspages.models import StatusPage

URL = "/api/v1/status-pages/"
PAGE = {"slug": "acme", "title": "Acme status", "time_zone": "Europe/Paris"}


@pytest.fixture
def created(client) -> dict:
    answer = client.post(URL, PAGE, format="json")
    assert answer.status_code == 201, answer.content
    return answer.json()


@pytest.fixture
def check(org, make_check) -> Healthcheck:
    return make_check(org, name="MCP server")


def test_a_page_is_created_and_read_back(client, created):
    assert created["slug"] == "acme"
    assert created["time_zone"] == "Europe/Paris"
    assert created["access"] == "public"
    assert "password" not in created
    listed = client.get(URL).json()
    assert [page["id"] for page in listed["results"]] == [created["id"]]
    assert client.get(f"{URL}{created['id']}/").json() == created


def test_a_page_is_changed_and_deleted(client, created):
    url = f"{URL}{created['id']}/"
    changed = client.patch(url, {"title": "Acme, Inc."}, format="json")
    assert (changed.status_code, changed.json()["title"]) == (200, "Acme, Inc.")
    assert client.delete(url).status_code == 204
    assert client.get(url).status_code == 404


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"time_zone": "Mars/Olympus"}, "time_zone"),
        ({"time_zone": "europe/paris"}, "time_zone"),
        ({"logo_url": "javascript:alert(1)"}, "logo_url"),
        ({"logo_url": "ftp://example.com/logo.png"}, "logo_url"),
        ({"logo_url": "https://[::1/logo.png"}, "logo_url"),
        ({"logo_url": "https:logo.png"}, "logo_url"),
        ({"slug": "not a slug"}, "slug"),
        ({"access": "password"}, "password"),
        ({"access": "password", "password": "short"}, "password"),
        ({"access": "secret"}, "access"),
        ({"custom_domain": "https://status.example.com/"}, "custom_domain"),
        ({"custom_domain": "localhost"}, "custom_domain"),
        ({"title": ""}, "title"),
    ],
)
def test_bad_page_fields_are_a_400_naming_the_field(client, db, changes, field):
    answer = client.post(URL, {**PAGE, **changes}, format="json")
    assert answer.status_code == 400
    assert list(answer.json()) == [field]


def test_a_taken_slug_is_a_400_naming_the_slug(client, other_client, created):
    answer = other_client.post(URL, PAGE, format="json")
    assert answer.status_code == 400
    assert list(answer.json()) == ["slug"]


def test_a_password_page_takes_a_password_and_never_answers_it(client, db):
    answer = client.post(URL, {**PAGE, "access": "password", "password": "correct horse"}, format="json")
    assert answer.status_code == 201
    assert "password" not in answer.json()
    assert "correct horse" not in answer.content.decode()
    page = StatusPage.objects.get()
    assert page.password_hash
    assert "correct horse" not in page.password_hash


def test_a_read_only_key_reads_but_cannot_write(read_client, client, created):
    assert read_client.get(URL).status_code == 200
    assert read_client.post(URL, {**PAGE, "slug": "other"}, format="json").status_code == 403
    assert read_client.patch(f"{URL}{created['id']}/", {"title": "x"}, format="json").status_code == 403
    assert read_client.delete(f"{URL}{created['id']}/").status_code == 403
    assert (
        read_client.post(f"{URL}{created['id']}/groups/", {"name": "Core"}, format="json").status_code == 403
    )


def test_no_key_is_a_401(db):
    assert APIClient().get(URL).status_code == 401


def test_another_organizations_page_and_its_parts_are_404s(other_client, created):
    page_url = f"{URL}{created['id']}/"
    assert other_client.get(URL).json()["results"] == []
    assert other_client.get(page_url).status_code == 404
    assert other_client.patch(page_url, {"title": "mine"}, format="json").status_code == 404
    assert other_client.delete(page_url).status_code == 404
    for part in ("components", "groups", "incidents"):
        assert other_client.get(f"{page_url}{part}/").status_code == 404


def test_pages_are_paginated(client, db):
    for index in range(3):
        client.post(URL, {**PAGE, "slug": f"page-{index}"}, format="json")
    first = client.get(URL, {"page_size": 2}).json()
    assert (first["count"], len(first["results"])) == (3, 2)
    assert first["next"]


# --- components and groups ----------------------------------------------------------------------


def test_a_component_shows_a_healthcheck_of_the_organization(client, created, check):
    url = f"{URL}{created['id']}/components/"
    group = client.post(f"{URL}{created['id']}/groups/", {"name": "Core"}, format="json").json()
    answer = client.post(
        url,
        {"healthcheck": str(check.public_id), "group": group["id"], "show_mcp_details": True},
        format="json",
    )
    assert answer.status_code == 201, answer.content
    component = answer.json()
    assert component["display_name"] == "MCP server"
    assert (component["healthcheck"], component["group"]) == (str(check.public_id), group["id"])
    assert client.get(url).json()["results"] == [component]
    moved = client.patch(f"{url}{component['id']}/", {"group": None, "display_name": "MCP"}, format="json")
    assert (moved.json()["group"], moved.json()["display_name"]) == (None, "MCP")


def test_another_organizations_healthcheck_is_refused_like_a_missing_one(
    client, created, other_org, make_check
):
    url = f"{URL}{created['id']}/components/"
    foreign = client.post(url, {"healthcheck": str(make_check(other_org).public_id)}, format="json")
    missing = client.post(url, {"healthcheck": str(uuid.uuid4())}, format="json")
    assert foreign.status_code == missing.status_code == 400
    assert (
        foreign.json()
        == missing.json()
        == {"healthcheck": ["No healthcheck with this id in your organization."]}
    )


def test_a_group_of_another_page_is_refused(client, created, check):
    other = client.post(URL, {**PAGE, "slug": "second"}, format="json").json()
    group = client.post(f"{URL}{other['id']}/groups/", {"name": "Theirs"}, format="json").json()
    answer = client.post(
        f"{URL}{created['id']}/components/",
        {"healthcheck": str(check.public_id), "group": group["id"]},
        format="json",
    )
    assert (answer.status_code, list(answer.json())) == (400, ["group"])


def test_deleting_a_group_keeps_its_components_ungrouped(client, created, check):
    base = f"{URL}{created['id']}"
    group = client.post(f"{base}/groups/", {"name": "Core"}, format="json").json()
    component = client.post(
        f"{base}/components/", {"healthcheck": str(check.public_id), "group": group["id"]}, format="json"
    ).json()
    assert client.delete(f"{base}/groups/{group['id']}/").status_code == 204
    assert client.get(f"{base}/components/{component['id']}/").json()["group"] is None


# --- published incidents ------------------------------------------------------------------------


def test_an_incident_is_published_updated_and_resolved(client, created, check):
    base = f"{URL}{created['id']}"
    component = client.post(
        f"{base}/components/", {"healthcheck": str(check.public_id)}, format="json"
    ).json()
    answer = client.post(
        f"{base}/incidents/",
        {"title": "Errors", "impact": "major", "components": [component["id"]], "body": "Looking into it."},
        format="json",
    )
    assert answer.status_code == 201, answer.content
    incident = answer.json()
    assert (incident["status"], incident["components"]) == ("investigating", [component["id"]])
    assert [u["body"] for u in incident["updates"]] == ["Looking into it."]
    updates = f"{base}/incidents/{incident['id']}/updates/"
    added = client.post(updates, {"status": "resolved", "body": "Fixed."}, format="json")
    assert added.status_code == 201
    shown = client.get(f"{base}/incidents/{incident['id']}/").json()
    assert shown["status"] == "resolved"
    assert shown["resolved_at"] is not None
    assert [u["body"] for u in client.get(updates).json()["results"]] == ["Fixed.", "Looking into it."]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"body": ""}, "body"),
        ({"impact": "apocalyptic"}, "impact"),
        ({"status": "postmortem"}, "status"),
        ({"components": ["not-a-uuid"]}, "components"),
        ({"components": [str(uuid.uuid4())]}, "components"),
    ],
)
def test_bad_incident_fields_are_a_400_naming_the_field(client, created, changes, field):
    answer = client.post(
        f"{URL}{created['id']}/incidents/", {"title": "Errors", "body": "b", **changes}, format="json"
    )
    assert answer.status_code == 400
    assert list(answer.json()) == [field]


def test_another_organizations_incident_updates_are_404s(client, other_client, created):
    base = f"{URL}{created['id']}"
    incident = client.post(f"{base}/incidents/", {"title": "Errors", "body": "b"}, format="json").json()
    updates = f"{base}/incidents/{incident['id']}/updates/"
    assert other_client.get(updates).status_code == 404
    assert (
        other_client.post(updates, {"status": "resolved", "body": "mine"}, format="json").status_code == 404
    )


# --- component statuses: declared by an incident's updates, or set by hand -----------------------


@pytest.fixture
def incident_on_page(client, created, check) -> tuple[str, dict, dict]:
    """Return a page's API base, one of its components and an open incident there."""
    base = f"{URL}{created['id']}"
    component = client.post(
        f"{base}/components/", {"healthcheck": str(check.public_id)}, format="json"
    ).json()
    incident = client.post(f"{base}/incidents/", {"title": "Errors", "body": "b"}, format="json").json()
    return base, component, incident


def test_an_update_declares_its_components_statuses_and_answers_what_they_were(client, incident_on_page):
    base, component, incident = incident_on_page
    answer = client.post(
        f"{base}/incidents/{incident['id']}/updates/",
        {"status": "identified", "body": "A bad deploy.", "components": {component["id"]: "partial_outage"}},
        format="json",
    )
    assert answer.status_code == 201, answer.content
    assert answer.json()["affected_components"] == [
        {
            "code": component["id"],
            "name": "MCP server",
            "old_status": "operational",
            "new_status": "partial_outage",
        }
    ]
    shown = client.get(f"{base}/incidents/{incident['id']}/").json()
    # The component named becomes one of the incident's, and its update keeps what it declared.
    assert shown["components"] == [component["id"]]
    assert shown["updates"][0]["affected_components"][0]["new_status"] == "partial_outage"
    assert shown["updates"][1]["affected_components"] == []


@pytest.mark.parametrize(
    "components",
    [
        pytest.param(lambda mine, theirs: {mine: "on_fire"}, id="a status not in the set"),
        pytest.param(lambda mine, theirs: {mine: "resolved"}, id="an incident status"),
        pytest.param(lambda mine, theirs: {"not-a-uuid": "major_outage"}, id="not a component id"),
        pytest.param(lambda mine, theirs: {str(uuid.uuid4()): "major_outage"}, id="no such component"),
        pytest.param(lambda mine, theirs: {theirs: "major_outage"}, id="another page's component"),
        pytest.param(lambda mine, theirs: [mine], id="a list, not id to status"),
    ],
)
def test_a_bad_declared_component_status_is_a_400_naming_components(
    client, incident_on_page, check, components
):
    base, component, incident = incident_on_page
    other = client.post(URL, {**PAGE, "slug": "other"}, format="json").json()
    theirs = client.post(
        f"{URL}{other['id']}/components/", {"healthcheck": str(check.public_id)}, format="json"
    ).json()
    updates = f"{base}/incidents/{incident['id']}/updates/"
    answer = client.post(
        updates,
        {"status": "identified", "body": "b", "components": components(component["id"], theirs["id"])},
        format="json",
    )
    assert answer.status_code == 400
    assert list(answer.json()) == ["components"]
    # Nothing was written: the incident keeps its one update.
    assert len(client.get(updates).json()["results"]) == 1


def test_an_owner_sets_a_components_status_by_hand_and_clears_it(client, incident_on_page):
    base, component, _ = incident_on_page
    url = f"{base}/components/{component['id']}/"
    set_ = client.patch(url, {"declared_status": "degraded_performance"}, format="json")
    assert (set_.status_code, set_.json()["declared_status"]) == (200, "degraded_performance")
    cleared = client.patch(url, {"declared_status": ""}, format="json")
    assert (cleared.status_code, cleared.json()["declared_status"]) == (200, "")


def test_a_bad_status_set_by_hand_is_a_400_naming_the_field(client, incident_on_page):
    base, component, _ = incident_on_page
    answer = client.patch(f"{base}/components/{component['id']}/", {"declared_status": "down"}, format="json")
    assert answer.status_code == 400
    assert list(answer.json()) == ["declared_status"]


# --- custom domains -----------------------------------------------------------------------------


def test_a_custom_domain_gets_a_token_and_is_verified_by_its_txt_record(client, created, monkeypatch):
    url = f"{URL}{created['id']}/"
    page = client.patch(url, {"custom_domain": "Status.Acme.Example."}, format="json").json()
    assert page["custom_domain"] == "status.acme.example"
    assert page["domain_record"] == "_uptimy.status.acme.example"
    assert page["domain_token"].startswith("uptimy-verify=")
    assert page["domain_verified"] is False
    asked = []

    def resolver(name):
        asked.append(name)
        return [page["domain_token"]]

    monkeypatch.setattr(api_views, "resolver", resolver)
    verified = client.post(f"{url}verify-domain/")
    assert (verified.status_code, verified.json()["domain_verified"]) == (200, True)
    assert asked == ["_uptimy.status.acme.example"]


def test_a_missing_txt_record_is_a_400_naming_the_domain(client, created, monkeypatch):
    url = f"{URL}{created['id']}/"
    client.patch(url, {"custom_domain": "status.acme.example"}, format="json")
    monkeypatch.setattr(api_views, "resolver", lambda name: [])
    answer = client.post(f"{url}verify-domain/")
    assert (answer.status_code, list(answer.json())) == (400, ["custom_domain"])


def test_a_domain_another_page_has_is_refused(client, created):
    client.patch(f"{URL}{created['id']}/", {"custom_domain": "status.acme.example"}, format="json")
    answer = client.post(
        URL, {**PAGE, "slug": "second", "custom_domain": "status.acme.example"}, format="json"
    )
    assert (answer.status_code, list(answer.json())) == (400, ["custom_domain"])


def test_the_schema_documents_the_status_page_api(client):
    paths = APIClient().get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()["paths"]
    assert {
        "/api/v1/status-pages/",
        "/api/v1/status-pages/{id}/",
        "/api/v1/status-pages/{id}/verify-domain/",
        "/api/v1/status-pages/{page_id}/components/",
        "/api/v1/status-pages/{page_id}/groups/",
        "/api/v1/status-pages/{page_id}/incidents/",
        "/api/v1/status-pages/{page_id}/incidents/{incident_id}/updates/",
    } <= set(paths)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"title": "A\\u0000B"}', "title"),
        ('{"title": "A\\ud800B"}', "title"),
        ('{"description": ' + "[" * 100 + "]" * 100 + "}", "detail"),
    ],
    ids=["nul", "lone surrogate", "deep nesting"],
)
def test_a_hostile_body_is_a_400_and_changes_nothing(client, created, body, field):
    answer = client.generic("PATCH", f"{URL}{created['id']}/", body, content_type="application/json")
    assert answer.status_code == 400
    assert field in answer.json()
    assert StatusPage.objects.get().title == PAGE["title"]
