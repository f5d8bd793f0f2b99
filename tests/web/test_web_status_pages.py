"""Status pages in the web app: pages, components and published incidents through the owners' API rules."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from statuspages.models import Component, ComponentGroup, Notice, PublishedIncident, StatusPage, Subscriber
from statuspages.services import (
    component_create,
    email_subscribe,
    group_create,
    incident_create,
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


def test_removing_a_group_keeps_its_components_on_the_page(owner, org, page, make_check):
    group = group_create(page=page, name="Search")
    component_create(page=page, changes={"healthcheck": make_check(org).public_id, "group": group.public_id})
    assert owner.post(url(page, f"groups/{group.public_id}/remove/")).status_code == 302
    assert not ComponentGroup.objects.exists()
    assert Component.objects.get(page=page).group is None


def test_another_organization_s_group_is_404(owner, other_org):
    theirs = status_page_create(organization=other_org, changes={"slug": "theirs", "title": "Theirs"})
    group = group_create(page=theirs, name="Theirs")
    assert owner.post(url(theirs, f"groups/{group.public_id}/remove/")).status_code == 404
    assert ComponentGroup.objects.filter(pk=group.pk).exists()


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
