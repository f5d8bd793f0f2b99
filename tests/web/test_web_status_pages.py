"""Status pages in the web app: pages, components and published incidents through the owners' API rules."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from statuspages.models import (
    Component,
    ComponentGroup,
    IncidentUpdate,
    Notice,
    PublishedIncident,
    StatusPage,
    Subscriber,
)
from statuspages.services import (
    component_create,
    email_subscribe,
    group_create,
    incident_create,
    incident_update_add,
    status_page_create,
)
from web.api_errors import messages_of

pytestmark = pytest.mark.django_db

LIST = "/app/status-pages/"


@pytest.fixture
def page(org) -> StatusPage:
    return status_page_create(organization=org, changes={"slug": "docs-status", "title": "Docs status"})


def url(page: StatusPage, suffix: str = "") -> str:
    return f"{LIST}{page.public_id}/{suffix}"


def test_creating_a_page_leads_to_its_settings(owner, org):
    answer = owner.post(
        LIST, {"slug": "acme", "title": "Acme status", "access": "public", "time_zone": "UTC"}
    )
    page = StatusPage.objects.get(organization=org)
    assert answer.status_code == 302
    assert answer["Location"] == url(page)
    assert Client().get("/s/acme/").status_code == 200


@pytest.mark.parametrize(
    ("form", "field"),
    [
        ({"slug": "has spaces", "title": "T"}, "slug"),
        ({"slug": "ok", "title": ""}, "title"),
        ({"slug": "ok", "title": "T", "time_zone": "Mars/Olympus"}, "time_zone"),
        ({"slug": "ok", "title": "T", "access": "password"}, "password"),
        ({"slug": "ok", "title": "T", "access": "password", "password": "short"}, "password"),
    ],
)
def test_a_refused_page_field_shows_the_api_s_own_message_next_to_it(owner, client, form, field):
    answer = owner.post(LIST, form)
    assert answer.status_code == 400
    errors = answer.context["errors"]
    assert list(errors) == [field]
    api = client.post(
        "/api/v1/status-pages/", {k: v for k, v in form.items() if v or k == "title"}, format="json"
    )
    assert api.status_code == 400
    assert errors[field][0] in messages_of(api.json())
    assert not StatusPage.objects.exists()


def test_a_taken_slug_is_named(owner, page):
    answer = owner.post(LIST, {"slug": "docs-status", "title": "Again"})
    assert answer.context["errors"] == {"slug": ["This slug is taken; choose another."]}


def test_saving_settings_keeps_the_password_when_left_empty(owner, page):
    owner.post(
        url(page), {"slug": "docs-status", "title": "Docs", "access": "password", "password": "a-long-secret"}
    )
    page.refresh_from_db()
    stored = page.password_hash
    answer = owner.post(url(page), {"slug": "docs-status", "title": "Docs, renamed", "access": "password"})
    assert answer.status_code == 302
    page.refresh_from_db()
    assert (page.title, page.password_hash) == ("Docs, renamed", stored)
    assert "a-long-secret" not in owner.get(url(page)).content.decode()


def test_a_refused_setting_is_shown_next_to_its_field_and_nothing_changes(owner, page):
    answer = owner.post(url(page), {"slug": "docs-status", "title": "Docs", "time_zone": "Nowhere/Land"})
    assert answer.status_code == 400
    assert "time_zone" in answer.context["errors"]
    page.refresh_from_db()
    assert page.time_zone == "UTC"


def test_a_component_is_added_and_removed(owner, org, page, make_check):
    check = make_check(org, name="Docs MCP")
    form = {"healthcheck": str(check.public_id), "display_name": "Docs search"}
    assert owner.post(url(page, "components/"), form).status_code == 302
    component = Component.objects.get(page=page)
    assert (component.healthcheck_id, component.display_name) == (check.pk, "Docs search")
    assert "Docs search" in Client().get("/s/docs-status/").content.decode()
    assert owner.post(url(page, f"components/{component.public_id}/remove/")).status_code == 302
    assert not Component.objects.exists()


def test_another_organization_s_healthcheck_cannot_be_a_component(owner, other_org, page, make_check):
    theirs = make_check(other_org, name="Theirs")
    answer = owner.post(url(page, "components/"), {"healthcheck": str(theirs.public_id)})
    assert answer.status_code == 400
    assert "healthcheck" in answer.context["errors"]
    assert not Component.objects.exists()


def test_an_incident_is_published_with_its_first_update_then_updated(owner, org, page, make_check):
    component = component_create(page=page, changes={"healthcheck": make_check(org).public_id})
    form = {
        "title": "Search is slow",
        "impact": "minor",
        "status": "investigating",
        "body": "Looking into it.",
        "components": [str(component.public_id)],
    }
    assert owner.post(url(page, "incidents/"), form).status_code == 302
    incident = PublishedIncident.objects.get()
    assert [c.pk for c in incident.components.all()] == [component.pk]
    assert "Search is slow" in Client().get("/s/docs-status/").content.decode()
    update = {"status": "resolved", "body": "Fixed."}
    assert owner.post(url(page, f"incidents/{incident.public_id}/updates/"), update).status_code == 302
    incident.refresh_from_db()
    assert incident.status == "resolved"


def test_a_draft_stays_private_until_published(owner, page):
    form = {
        "title": "Maybe down",
        "impact": "major",
        "status": "investigating",
        "body": "Checking.",
        "draft": "on",
    }
    owner.post(url(page, "incidents/"), form)
    incident = PublishedIncident.with_drafts.get()
    assert "Maybe down" not in Client().get("/s/docs-status/").content.decode()
    assert owner.post(url(page, f"incidents/{incident.public_id}/publish/")).status_code == 302
    assert "Maybe down" in Client().get("/s/docs-status/").content.decode()


@pytest.mark.parametrize(
    ("form", "field"),
    [
        ({"title": "", "body": "x"}, "title"),
        ({"title": "T", "body": ""}, "body"),
        ({"title": "T", "body": "x", "impact": "apocalyptic"}, "impact"),
        ({"title": "T", "body": "x", "components": ["not-a-uuid"]}, "components"),
    ],
)
def test_a_refused_incident_field_is_named(owner, page, form, field):
    answer = owner.post(url(page, "incidents/"), form)
    assert answer.status_code == 400
    assert field in answer.context["errors"]
    assert not PublishedIncident.with_drafts.exists()


def test_an_empty_update_is_named(owner, page):
    incident = incident_create(page=page, changes={"title": "T"}, body="x", now=page.created_at)
    answer = owner.post(
        url(page, f"incidents/{incident.public_id}/updates/"), {"status": "monitoring", "body": ""}
    )
    assert answer.status_code == 400
    assert "body" in answer.context["errors"]


def test_delete_asks_then_deletes(owner, page):
    assert "Delete Docs status?" in owner.get(url(page, "delete/")).content.decode()
    assert owner.post(url(page, "delete/")).status_code == 302
    assert not StatusPage.objects.exists()


@pytest.mark.parametrize("suffix", ["", "delete/", "components/", "incidents/", "groups/", "subscribers/"])
def test_another_organization_s_page_is_404(owner, other_org, suffix):
    theirs = status_page_create(organization=other_org, changes={"slug": "theirs", "title": "Theirs"})
    assert owner.get(url(theirs)).status_code == 404
    assert owner.post(url(theirs, suffix), {"slug": "x", "title": "Mine now"}).status_code == 404
    theirs.refresh_from_db()
    assert theirs.title == "Theirs"


@pytest.mark.parametrize("suffix", ["", "delete/", "components/", "incidents/", "groups/", "subscribers/"])
def test_a_viewer_s_post_is_403(viewer, page, suffix):
    form = {
        "slug": "x",
        "title": "Viewer's",
        "body": "x",
        "name": "G",
        "kind": "email",
        "email": "v@example.com",
    }
    assert viewer.post(url(page, suffix), form).status_code == 403
    page.refresh_from_db()
    assert page.title == "Docs status"
    assert not PublishedIncident.with_drafts.exists()
    assert not ComponentGroup.objects.exists()
    assert not Subscriber.objects.exists()


def test_a_viewer_sees_the_page_s_settings_without_forms(viewer, page):
    body = viewer.get(url(page)).content.decode()
    assert "Docs status" in body
    assert "Save settings" not in body
    assert "Publish an incident" not in body


# --- editing and deleting incidents ----------------------------------------------------------------


@pytest.fixture
def incident(page) -> PublishedIncident:
    return incident_create(
        page=page,
        changes={"title": "Search is slow", "impact": "minor"},
        body="Looking into it.",
        now=page.created_at,
    )


def test_an_incident_s_title_impact_and_components_are_saved(owner, org, page, incident, make_check):
    first = component_create(page=page, changes={"healthcheck": make_check(org, name="One").public_id})
    second = component_create(page=page, changes={"healthcheck": make_check(org, name="Two").public_id})
    incident.components.set([first])
    form = {"title": "Search is down", "impact": "major", "components": [str(second.public_id)]}
    answer = owner.post(url(page, f"incidents/{incident.public_id}/"), form)
    assert answer.status_code == 302
    incident.refresh_from_db()
    assert (incident.title, incident.impact, incident.status) == ("Search is down", "major", "investigating")
    assert list(incident.components.all()) == [second]
    assert "Search is down" in Client().get("/s/docs-status/").content.decode()


def test_unticking_every_component_leaves_the_incident_affecting_none(owner, org, page, incident, make_check):
    incident.components.set([component_create(page=page, changes={"healthcheck": make_check(org).public_id})])
    form = {"title": "Search is slow", "impact": "minor"}
    assert owner.post(url(page, f"incidents/{incident.public_id}/"), form).status_code == 302
    assert not incident.components.exists()


def test_a_draft_is_edited_and_stays_a_draft(owner, page):
    draft = incident_create(
        page=page, changes={"title": "Maybe down", "draft": True}, body="x", now=page.created_at
    )
    form = {"title": "Down for some", "impact": "minor"}
    assert owner.post(url(page, f"incidents/{draft.public_id}/"), form).status_code == 302
    draft.refresh_from_db()
    assert (draft.title, draft.draft) == ("Down for some", True)
    assert "Down for some" not in Client().get("/s/docs-status/").content.decode()


def test_the_edit_form_shows_the_incident_as_stored_with_labels(owner, org, page, incident, make_check):
    component = component_create(
        page=page, changes={"healthcheck": make_check(org, name="Docs MCP").public_id}
    )
    incident.components.set([component])
    body = owner.get(url(page)).content.decode()
    assert '<label for="e-title-1">Title of Search is slow</label>' in body
    assert 'id="e-title-1" name="title" maxlength="200" value="Search is slow"' in body
    assert '<label for="e-impact-1">Impact of Search is slow</label>' in body
    assert '<option value="minor" selected>' in body
    assert f'id="e-c-1-1" name="components" value="{component.public_id}" checked>' in body


@pytest.mark.parametrize(
    ("form", "field"),
    [
        ({"title": "", "impact": "minor"}, "title"),
        ({"title": "T" * 201, "impact": "minor"}, "title"),
        ({"title": "T", "impact": "apocalyptic"}, "impact"),
        ({"title": "T", "impact": "minor", "components": ["not-a-uuid"]}, "components"),
        (
            {"title": "T", "impact": "minor", "components": ["00000000-0000-0000-0000-000000000000"]},
            "components",
        ),
    ],
)
def test_a_refused_incident_edit_shows_the_api_s_own_message_next_to_its_field(
    owner, client, page, incident, form, field
):
    answer = owner.post(url(page, f"incidents/{incident.public_id}/"), form)
    assert answer.status_code == 400
    errors = answer.context["errors"]
    assert list(errors) == [field]
    assert f'id="e-{field}-errors"' in answer.content.decode()
    api = client.patch(
        f"/api/v1/status-pages/{page.public_id}/incidents/{incident.public_id}/", form, format="json"
    )
    assert api.status_code == 400
    assert errors[field][0] in messages_of(api.json())
    incident.refresh_from_db()
    assert (incident.title, incident.impact) == ("Search is slow", "minor")


def test_an_edit_with_a_blank_title_is_named_as_the_api_names_it(owner, page, incident):
    answer = owner.post(url(page, f"incidents/{incident.public_id}/"), {"title": "", "impact": "minor"})
    assert answer.context["errors"] == {"title": ["This field may not be blank."]}
    assert "<details open>" in answer.content.decode()


def test_delete_asks_then_deletes_the_incident(owner, page, incident):
    path = url(page, f"incidents/{incident.public_id}/delete/")
    assert "Delete Search is slow?" in owner.get(path).content.decode()
    answer = owner.post(path)
    assert (answer.status_code, answer["Location"]) == (302, url(page))
    assert not PublishedIncident.with_drafts.exists()
    assert not IncidentUpdate.objects.exists()
    assert "Search is slow" not in Client().get("/s/docs-status/").content.decode()


@pytest.mark.parametrize(
    ("draft", "consequence"),
    [
        (False, "It leaves /s/docs-status/ and its history, with every update it had."),
        (True, "The draft goes with its updates; no reader ever saw it."),
    ],
)
def test_the_delete_confirmation_says_what_leaves_the_page(owner, page, draft, consequence):
    incident = incident_create(
        page=page, changes={"title": "T", "draft": draft}, body="x", now=page.created_at
    )
    assert consequence in owner.get(url(page, f"incidents/{incident.public_id}/delete/")).content.decode()


def test_delete_asks_then_deletes_one_update_and_the_incident_keeps_its_status(owner, page, incident):
    later = incident_update_add(
        incident=incident, status="monitoring", body="A fix is out.", now=timezone.now()
    )
    path = url(page, f"incidents/{incident.public_id}/updates/{later.public_id}/delete/")
    asked = owner.get(path).content.decode()
    assert "Delete the update of" in asked
    assert "“A fix is out.” leaves the incident&#x27;s timeline; the incident stays monitoring." in asked
    assert owner.post(path).status_code == 302
    assert list(IncidentUpdate.objects.values_list("body", flat=True)) == ["Looking into it."]
    incident.refresh_from_db()
    assert incident.status == "monitoring"


def test_an_update_of_another_incident_is_404(owner, page, incident):
    other = incident_create(page=page, changes={"title": "Other"}, body="Theirs.", now=page.created_at)
    theirs = other.updates.get()
    path = url(page, f"incidents/{incident.public_id}/updates/{theirs.public_id}/delete/")
    assert owner.get(path).status_code == 404
    assert owner.post(path).status_code == 404
    assert IncidentUpdate.objects.filter(pk=theirs.pk).exists()


INCIDENT_SUFFIXES = ["", "delete/", "updates/{update}/delete/"]


@pytest.mark.parametrize("suffix", INCIDENT_SUFFIXES)
def test_an_incident_of_another_of_the_organization_s_pages_is_404_under_this_one(owner, org, page, suffix):
    other = status_page_create(organization=org, changes={"slug": "other", "title": "Other"})
    theirs = incident_create(page=other, changes={"title": "Theirs"}, body="x", now=other.created_at)
    path = url(page, f"incidents/{theirs.public_id}/{suffix.format(update=theirs.updates.get().public_id)}")
    assert owner.post(path, {"title": "Mine now", "impact": "minor"}).status_code == 404
    theirs.refresh_from_db()
    assert theirs.title == "Theirs"
    assert theirs.updates.exists()


@pytest.mark.parametrize("suffix", INCIDENT_SUFFIXES)
def test_another_organization_s_incident_is_404(owner, other_org, suffix):
    page = status_page_create(organization=other_org, changes={"slug": "theirs", "title": "Theirs"})
    theirs = incident_create(page=page, changes={"title": "Theirs"}, body="x", now=page.created_at)
    path = url(page, f"incidents/{theirs.public_id}/{suffix.format(update=theirs.updates.get().public_id)}")
    assert owner.post(path, {"title": "Mine now", "impact": "minor"}).status_code == 404
    theirs.refresh_from_db()
    assert theirs.title == "Theirs"
    assert theirs.updates.exists()


@pytest.mark.parametrize(
    "suffix", ["incidents/not-a-uuid/", "incidents/not-a-uuid/delete/", "groups/not-a-uuid/"]
)
def test_a_bad_id_is_404(owner, page, suffix):
    assert owner.post(url(page, suffix), {"title": "T", "impact": "minor", "name": "G"}).status_code == 404


@pytest.mark.parametrize(
    "suffix",
    [
        "incidents/{incident}/",
        "incidents/{incident}/delete/",
        "incidents/{incident}/updates/{update}/delete/",
    ],
)
def test_a_viewer_can_t_edit_or_delete_an_incident(viewer, page, incident, suffix):
    path = url(page, suffix.format(incident=incident.public_id, update=incident.updates.get().public_id))
    assert viewer.post(path, {"title": "Viewer's", "impact": "critical"}).status_code == 403
    incident.refresh_from_db()
    assert (incident.title, incident.impact) == ("Search is slow", "minor")
    assert incident.updates.exists()


def test_a_viewer_sees_no_edit_or_delete_of_incidents_and_groups(viewer, page, incident):
    group_create(page=page, name="Search")
    body = viewer.get(url(page)).content.decode()
    assert "Search is slow" in body
    assert "Edit or delete" not in body
    assert "Delete…" not in body
    assert 'name="position"' not in body


def _queries_for_page(member: Client, page: StatusPage) -> int:
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    # The request clears the query log as it starts (request_started → reset_queries): start it empty.
    reset_queries()
    with CaptureQueriesContext(connection) as captured:
        assert member.get(url(page)).status_code == 200
    return len(captured)


def test_the_page_s_queries_do_not_grow_with_its_incidents_updates_and_groups(owner, org, page, make_check):
    def add(index: int) -> None:
        component = component_create(
            page=page, changes={"healthcheck": make_check(org, name=f"C{index}").public_id}
        )
        group_create(page=page, name=f"G{index}")
        incident = incident_create(
            page=page,
            changes={"title": f"I{index}", "components": [component.public_id]},
            body="x",
            now=page.created_at,
        )
        incident_update_add(incident=incident, status="monitoring", body="y", now=timezone.now())

    add(0)
    one = _queries_for_page(owner, page)
    for index in range(1, 5):
        add(index)
    assert _queries_for_page(owner, page) == one


@pytest.mark.parametrize(
    "suffix",
    [
        "incidents/{incident}/",
        "incidents/{incident}/delete/",
        "incidents/{incident}/updates/{update}/delete/",
        "groups/{group}/",
    ],
)
def test_each_edit_and_delete_needs_the_csrf_token(make_member, org, page, incident, suffix):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(make_member(org).user)
    group = group_create(page=page, name="Search")
    path = url(
        page,
        suffix.format(
            incident=incident.public_id, update=incident.updates.get().public_id, group=group.public_id
        ),
    )
    assert strict.post(path, {"title": "X", "impact": "critical", "name": "X"}).status_code == 403
    incident.refresh_from_db()
    group.refresh_from_db()
    assert (incident.title, incident.updates.count(), group.name) == ("Search is slow", 1, "Search")


# --- component groups -----------------------------------------------------------------------------


def test_a_group_is_added_and_a_component_shown_under_it(owner, org, page, make_check):
    component = component_create(
        page=page, changes={"healthcheck": make_check(org, name="Docs MCP").public_id}
    )
    assert owner.post(url(page, "groups/"), {"name": "Search", "position": ""}).status_code == 302
    group = ComponentGroup.objects.get(page=page)
    assert (group.name, group.position) == ("Search", 0)
    answer = owner.post(
        url(page, f"components/{component.public_id}/group/"), {"group": str(group.public_id)}
    )
    assert answer.status_code == 302
    component.refresh_from_db()
    assert component.group == group
    assert "Search" in Client().get("/s/docs-status/").content.decode()


def test_a_component_is_added_straight_into_a_group(owner, org, page, make_check):
    group = group_create(page=page, name="Search")
    check = make_check(org)
    form = {"healthcheck": str(check.public_id), "group": str(group.public_id)}
    assert owner.post(url(page, "components/"), form).status_code == 302
    assert Component.objects.get(page=page).group == group


def test_a_component_leaves_its_group(owner, org, page, make_check):
    group = group_create(page=page, name="Search")
    component = component_create(
        page=page, changes={"healthcheck": make_check(org).public_id, "group": group.public_id}
    )
    assert owner.post(url(page, f"components/{component.public_id}/group/"), {"group": ""}).status_code == 302
    component.refresh_from_db()
    assert component.group is None


def test_another_page_s_group_is_refused_by_name(owner, org, page, make_check):
    other = status_page_create(organization=org, changes={"slug": "other", "title": "Other"})
    theirs = group_create(page=other, name="Elsewhere")
    component = component_create(page=page, changes={"healthcheck": make_check(org).public_id})
    answer = owner.post(
        url(page, f"components/{component.public_id}/group/"), {"group": str(theirs.public_id)}
    )
    assert answer.status_code == 400
    assert answer.context["errors"] == {"group": ["No group with this id on this page."]}
    component.refresh_from_db()
    assert component.group is None


@pytest.mark.parametrize(
    ("form", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": "G" * 201}, "name"),
        ({"name": "G", "position": "-1"}, "position"),
        ({"name": "G", "position": "first"}, "position"),
    ],
)
def test_a_refused_group_field_shows_the_api_s_own_message_next_to_it(owner, client, page, form, field):
    answer = owner.post(url(page, "groups/"), form)
    assert answer.status_code == 400
    errors = answer.context["errors"]
    assert list(errors) == [field]
    api = client.post(f"/api/v1/status-pages/{page.public_id}/groups/", form, format="json")
    assert api.status_code == 400
    assert errors[field][0] in messages_of(api.json())
    assert not ComponentGroup.objects.exists()


def test_a_group_is_renamed_and_moved(owner, page):
    group = group_create(page=page, name="Search", position=0)
    answer = owner.post(url(page, f"groups/{group.public_id}/"), {"name": "Search and docs", "position": "3"})
    assert answer.status_code == 302
    group.refresh_from_db()
    assert (group.name, group.position) == ("Search and docs", 3)


def test_an_empty_position_keeps_the_group_s_own(owner, page):
    group = group_create(page=page, name="Search", position=4)
    assert (
        owner.post(url(page, f"groups/{group.public_id}/"), {"name": "Docs", "position": ""}).status_code
        == 302
    )
    group.refresh_from_db()
    assert (group.name, group.position) == ("Docs", 4)


def test_the_groups_are_listed_as_forms_with_labels(owner, page):
    group_create(page=page, name="Search", position=2)
    body = owner.get(url(page)).content.decode()
    assert '<label class="inline" for="g-name-1">Name of the group Search</label>' in body
    assert '<label class="inline" for="g-position-1">Position of the group Search</label>' in body
    assert 'name="position" min="0" form="g-edit-1" value="2"' in body


@pytest.mark.parametrize(
    ("form", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": "G" * 201}, "name"),
        ({"name": "G", "position": "-1"}, "position"),
        ({"name": "G", "position": "first"}, "position"),
    ],
)
def test_a_refused_group_edit_shows_the_api_s_own_message_next_to_its_field(owner, client, page, form, field):
    group = group_create(page=page, name="Search", position=1)
    answer = owner.post(url(page, f"groups/{group.public_id}/"), form)
    assert answer.status_code == 400
    errors = answer.context["errors"]
    assert list(errors) == [field]
    assert f'aria-describedby="ge-{field}-errors"' in answer.content.decode()
    api = client.patch(
        f"/api/v1/status-pages/{page.public_id}/groups/{group.public_id}/", form, format="json"
    )
    assert api.status_code == 400
    assert errors[field][0] in messages_of(api.json())
    group.refresh_from_db()
    assert (group.name, group.position) == ("Search", 1)


def test_another_page_s_group_can_t_be_edited_under_this_one(owner, org, page):
    other = status_page_create(organization=org, changes={"slug": "other", "title": "Other"})
    theirs = group_create(page=other, name="Elsewhere")
    assert owner.post(url(page, f"groups/{theirs.public_id}/"), {"name": "Mine"}).status_code == 404
    theirs.refresh_from_db()
    assert theirs.name == "Elsewhere"


def test_a_viewer_can_t_rename_a_group(viewer, page):
    group = group_create(page=page, name="Search")
    assert viewer.post(url(page, f"groups/{group.public_id}/"), {"name": "Viewer's"}).status_code == 403
    group.refresh_from_db()
    assert group.name == "Search"


def test_removing_a_group_keeps_its_components_on_the_page(owner, org, page, make_check):
    group = group_create(page=page, name="Search")
    component_create(page=page, changes={"healthcheck": make_check(org).public_id, "group": group.public_id})
    assert owner.post(url(page, f"groups/{group.public_id}/remove/")).status_code == 302
    assert not ComponentGroup.objects.exists()
    assert Component.objects.get(page=page).group is None


@pytest.mark.parametrize("suffix", ["", "remove/"])
def test_another_organization_s_group_is_404(owner, other_org, suffix):
    theirs = status_page_create(organization=other_org, changes={"slug": "theirs", "title": "Theirs"})
    group = group_create(page=theirs, name="Theirs")
    assert owner.post(url(theirs, f"groups/{group.public_id}/{suffix}"), {"name": "Mine"}).status_code == 404
    assert ComponentGroup.objects.get(pk=group.pk).name == "Theirs"


# --- subscribers ------------------------------------------------------------------------------------


def test_an_email_subscriber_is_sent_a_confirmation_and_listed_as_waiting(owner, page):
    answer = owner.post(
        url(page, "subscribers/"), {"kind": "email", "email": "Reader@Example.com"}, follow=True
    )
    assert "reader@example.com is sent a link to confirm" in answer.content.decode()
    subscriber = Subscriber.objects.get(page=page)
    assert (subscriber.email, subscriber.confirmed_at, subscriber.all_components) == (
        "reader@example.com",
        None,
        True,
    )
    assert Notice.objects.filter(subscriber=subscriber, kind=Notice.Kind.SUBSCRIPTION_CONFIRM).exists()
    assert "Waiting for confirmation" in owner.get(url(page)).content.decode()


def test_an_email_subscriber_may_hear_of_chosen_components_only(owner, org, page, make_check):
    component = component_create(page=page, changes={"healthcheck": make_check(org).public_id})
    form = {"kind": "email", "email": "r@example.com", "components": [str(component.public_id)]}
    assert owner.post(url(page, "subscribers/"), form).status_code == 302
    subscriber = Subscriber.objects.get(page=page)
    assert not subscriber.all_components
    assert list(subscriber.components.all()) == [component]


def test_a_webhook_subscriber_s_secret_is_shown_once_and_its_url_masked(owner, page, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    answer = owner.post(
        url(page, "subscribers/"), {"kind": "webhook", "url": "http://127.0.0.1:9/hook/token-9"}
    )
    assert answer.status_code == 200
    assert answer["Cache-Control"] == "no-store"
    secret = Subscriber.objects.get(page=page).config["secret"]
    assert secret in answer.content.decode()
    later = owner.get(url(page)).content.decode()
    assert secret not in later
    assert "token-9" not in later
    assert "http://127.0.0.1:9/********" in later


@pytest.mark.parametrize(
    ("form", "field", "message"),
    [
        ({"kind": "email", "email": "not-an-address"}, "email", "Give a valid email address."),
        ({"kind": "email"}, "email", "Give a valid email address."),
        ({"kind": "webhook", "url": "ftp://example.com/"}, "url", "The URL "),
        ({"kind": "webhook", "url": "https://127.0.0.1/hook"}, "url", ""),
        ({"kind": "pigeon", "email": "r@example.com"}, "kind", "is not a valid choice."),
        (
            {"kind": "email", "email": "r@example.com", "components": ["not-a-uuid"]},
            "components",
            "valid UUID",
        ),
        (
            {
                "kind": "email",
                "email": "r@example.com",
                "components": ["00000000-0000-0000-0000-000000000000"],
            },
            "components",
            "Every chosen component must be a component of this page.",
        ),
    ],
)
def test_a_refused_subscriber_is_named_next_to_its_field(owner, page, form, field, message):
    answer = owner.post(url(page, "subscribers/"), form)
    assert answer.status_code == 400
    errors = answer.context["errors"]
    assert list(errors) == [field]
    assert message in errors[field][0]
    assert not Subscriber.objects.exists()


def test_a_subscriber_is_removed(owner, page):
    subscriber = email_subscribe(page=page, email="r@example.com", components=None, now=timezone.now())
    assert owner.post(url(page, f"subscribers/{subscriber.public_id}/remove/")).status_code == 302
    assert not Subscriber.objects.exists()


def test_another_organization_s_subscriber_is_404(owner, other_org):
    theirs = status_page_create(organization=other_org, changes={"slug": "theirs", "title": "Theirs"})
    subscriber = email_subscribe(page=theirs, email="r@example.com", components=None, now=timezone.now())
    assert owner.post(url(theirs, f"subscribers/{subscriber.public_id}/remove/")).status_code == 404
    assert Subscriber.objects.filter(pk=subscriber.pk).exists()


def test_a_viewer_sees_subscribers_and_groups_without_forms(viewer, page):
    email_subscribe(page=page, email="r@example.com", components=None, now=timezone.now())
    group_create(page=page, name="Search")
    body = viewer.get(url(page)).content.decode()
    assert "r@example.com" in body
    assert "Search" in body
    assert "Add subscriber" not in body
    assert "Add group" not in body


@pytest.mark.parametrize(
    ("suffix", "form"),
    [
        ("groups/", {"name": "Sea\x00rch"}),
        ("subscribers/", {"kind": "email", "email": "r\x00@example.com"}),
        ("subscribers/", {"kind": "webhook", "url": "https://example.com/\x00"}),
    ],
)
def test_a_nul_in_a_group_or_subscriber_is_a_field_error(owner, page, suffix, form):
    answer = owner.post(url(page, suffix), form)
    assert answer.status_code == 400
    assert answer.context["errors"]
    assert not ComponentGroup.objects.exists()
    assert not Subscriber.objects.exists()


# --- component statuses: declared in an update's form, or set by hand ---------------------------


def test_an_update_s_form_declares_a_component_s_status(owner, org, page, make_check):
    component = component_create(page=page, changes={"healthcheck": make_check(org).public_id})
    incident = incident_create(page=page, changes={"title": "Slow"}, body="x", now=page.created_at)
    form = {"status": "identified", "body": "Found it.", f"component-{component.public_id}": "partial_outage"}
    assert owner.post(url(page, f"incidents/{incident.public_id}/updates/"), form).status_code == 302
    (change,) = IncidentUpdate.objects.get(body="Found it.").affected.all()
    assert (change.component, change.new_status) == (component, "partial_outage")
    # "Unchanged" (empty) declares nothing.
    owner.post(
        url(page, f"incidents/{incident.public_id}/updates/"), {"status": "monitoring", "body": "Better."}
    )
    assert not IncidentUpdate.objects.get(body="Better.").affected.exists()


def test_a_refused_component_status_in_an_update_s_form_is_named(owner, org, page, make_check):
    component = component_create(page=page, changes={"healthcheck": make_check(org).public_id})
    incident = incident_create(page=page, changes={"title": "Slow"}, body="x", now=page.created_at)
    form = {"status": "identified", "body": "Found it.", f"component-{component.public_id}": "on_fire"}
    answer = owner.post(url(page, f"incidents/{incident.public_id}/updates/"), form)
    assert answer.status_code == 400
    assert "components" in answer.context["errors"]
    assert IncidentUpdate.objects.filter(incident=incident).count() == 1


def test_a_component_s_status_is_set_by_hand_and_kept_by_later_edits(owner, org, page, make_check):
    check = make_check(org)
    component = component_create(page=page, changes={"healthcheck": check.public_id})
    path = url(page, f"components/{component.public_id}/")
    form = {"healthcheck": str(check.public_id), "description": "", "declared_status": "major_outage"}
    assert owner.post(path, form).status_code == 302
    component.refresh_from_db()
    assert component.declared_status == "major_outage"
    assert 'class="component status-major_outage"' in Client().get("/s/docs-status/").content.decode()
    assert owner.post(path, {**form, "declared_status": ""}).status_code == 302
    component.refresh_from_db()
    assert component.declared_status == ""
