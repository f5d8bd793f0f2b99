"""A status page's logo, custom domain (with its DNS verification) and drafted incidents in the web app."""

from __future__ import annotations

import pytest

from statuspages.models import StatusPage
from statuspages.services import status_page_create, status_page_update
from web import status_page_views

pytestmark = pytest.mark.django_db

LIST = "/app/status-pages/"


@pytest.fixture
def page(org) -> StatusPage:
    return status_page_create(organization=org, changes={"slug": "docs-status", "title": "Docs status"})


def url(page: StatusPage, suffix: str = "") -> str:
    return f"{LIST}{page.public_id}/{suffix}"


def settings_form(**changes: str) -> dict[str, str]:
    return {"slug": "docs-status", "title": "Docs status", "access": "public", "time_zone": "UTC", **changes}


@pytest.fixture
def txt(monkeypatch) -> dict[str, list[str]]:
    """Answer the domain check's TXT lookups from a dict (name -> records) instead of DNS."""
    records: dict[str, list[str]] = {}
    monkeypatch.setattr(status_page_views, "resolver", lambda name: records.get(name, []))
    return records


def test_the_settings_show_the_logo_domain_and_draft_switch_with_labels(owner, page):
    body = owner.get(url(page)).content.decode()
    for control, label in [
        ("p-logo", "Logo URL"),
        ("p-domain", "Custom domain"),
        ("p-drafts", "New incidents"),
    ]:
        assert f'<label for="{control}">{label}</label>' in body


def test_logo_domain_and_drafts_are_saved_through_the_api_s_rules(owner, page):
    form = settings_form(
        logo_url="https://example.com/logo.png", custom_domain="Status.Example.com", draft_incidents="true"
    )
    assert owner.post(url(page), form).status_code == 302
    page.refresh_from_db()
    assert (page.logo_url, page.custom_domain, page.draft_incidents) == (
        "https://example.com/logo.png",
        "status.example.com",
        True,
    )
    assert page.domain_verified_at is None


def test_emptying_the_logo_and_domain_clears_them_and_drafts_can_be_switched_off(owner, page):
    status_page_update(
        page=page,
        changes={
            "logo_url": "https://example.com/l.png",
            "custom_domain": "status.example.com",
            "draft_incidents": True,
        },
    )
    assert (
        owner.post(
            url(page), settings_form(logo_url="", custom_domain="", draft_incidents="false")
        ).status_code
        == 302
    )
    page.refresh_from_db()
    assert (page.logo_url, page.custom_domain, page.draft_incidents) == ("", None, False)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"logo_url": "javascript:alert(1)"}, "logo_url"),
        ({"logo_url": "ftp://example.com/logo.png"}, "logo_url"),
        ({"custom_domain": "https://status.example.com/path"}, "custom_domain"),
        ({"custom_domain": "x" * 254}, "custom_domain"),
        ({"draft_incidents": "perhaps"}, "draft_incidents"),
    ],
)
def test_a_refused_setting_shows_the_api_s_own_message_next_to_its_field(owner, client, page, changes, field):
    answer = owner.post(url(page), settings_form(**changes))
    assert answer.status_code == 400
    errors = answer.context["errors"]
    assert list(errors) == [field]
    api = client.patch(f"/api/v1/status-pages/{page.public_id}/", changes, format="json")
    assert api.status_code == 400
    assert errors[field][0] in str(api.json())
    assert f'id="{field}-errors"' in answer.content.decode()
    page.refresh_from_db()
    assert (page.logo_url, page.custom_domain, page.draft_incidents) == ("", None, False)


def test_a_domain_another_page_uses_is_named(owner, org, page):
    status_page_create(
        organization=org, changes={"slug": "other", "title": "Other", "custom_domain": "s.example.com"}
    )
    answer = owner.post(url(page), settings_form(custom_domain="s.example.com"))
    assert answer.context["errors"] == {"custom_domain": ["This domain is already used by a status page."]}


def test_a_set_domain_shows_the_txt_record_to_add_and_that_it_is_not_verified(owner, page):
    status_page_update(page=page, changes={"custom_domain": "status.example.com"})
    body = owner.get(url(page)).content.decode()
    assert "<code>_uptimy.status.example.com</code>" in body
    assert f"<code>{page.domain_token}</code>" in body
    assert "<strong>Not verified yet</strong>" in body
    assert f'action="{url(page, "verify-domain/")}"' in body


def test_a_page_without_a_domain_shows_no_record(owner, page):
    assert "_uptimy." not in owner.get(url(page)).content.decode()


def test_verify_now_marks_the_domain_verified_when_the_record_holds_the_token(owner, page, txt):
    status_page_update(page=page, changes={"custom_domain": "status.example.com"})
    txt["_uptimy.status.example.com"] = ["something else", page.domain_token]
    answer = owner.post(url(page, "verify-domain/"), follow=True)
    page.refresh_from_db()
    assert page.domain_verified
    assert "<strong>Verified</strong>" in answer.content.decode()


def test_verify_now_without_the_record_says_so_next_to_the_domain(owner, page, txt):
    status_page_update(page=page, changes={"custom_domain": "status.example.com"})
    txt["_uptimy.status.example.com"] = ["not the token"]
    answer = owner.post(url(page, "verify-domain/"))
    assert answer.status_code == 400
    assert answer.context["errors"] == {
        "custom_domain": [
            "No TXT record at _uptimy.status.example.com holds this page's verification token yet."
        ]
    }
    page.refresh_from_db()
    assert not page.domain_verified


def test_verify_now_without_a_domain_answers_with_the_service_s_message(owner, page, txt):
    answer = owner.post(url(page, "verify-domain/"))
    assert answer.status_code == 400
    assert answer.context["errors"] == {"custom_domain": ["Set a custom domain first."]}


def test_a_viewer_can_t_change_settings_or_verify_and_sees_no_button(viewer, page, txt):
    status_page_update(page=page, changes={"custom_domain": "status.example.com"})
    txt["_uptimy.status.example.com"] = [page.domain_token]
    assert "Verify now" not in viewer.get(url(page)).content.decode()
    assert viewer.post(url(page, "verify-domain/")).status_code == 403
    assert viewer.post(url(page), settings_form(logo_url="https://example.com/l.png")).status_code == 403
    page.refresh_from_db()
    assert (page.domain_verified, page.logo_url) == (False, "")


def test_another_organization_s_page_can_t_be_verified(owner, other_org, txt):
    theirs = status_page_create(
        organization=other_org, changes={"slug": "theirs", "title": "Theirs", "custom_domain": "s.globex.com"}
    )
    txt["_uptimy.s.globex.com"] = [theirs.domain_token]
    assert owner.post(url(theirs, "verify-domain/")).status_code == 404
    theirs.refresh_from_db()
    assert not theirs.domain_verified


# --- editing a component ------------------------------------------------------------------------------


@pytest.fixture
def component(org, page, make_check):
    from statuspages.services import component_create

    check = make_check(org, name="Docs MCP")
    return component_create(
        page=page, changes={"healthcheck": check.public_id, "display_name": "Docs search"}
    )


def component_url(component, suffix: str = "") -> str:
    return url(component.page, f"components/{component.public_id}/{suffix}")


def component_form(component, **changes: str) -> dict[str, str]:
    return {
        "healthcheck": str(component.healthcheck.public_id),
        "display_name": component.display_name,
        "description": component.description,
        "group": "",
        "position": str(component.position),
        **changes,
    }


def test_the_page_links_each_component_to_its_edit_page(owner, page, component):
    assert f'href="{component_url(component)}"' in owner.get(url(page)).content.decode()


def test_the_edit_page_shows_the_component_s_settings_with_labels(owner, component):
    answer = owner.get(component_url(component))
    body = answer.content.decode()
    assert answer.status_code == 200
    assert 'value="Docs search"' in body
    for control in (
        "c-healthcheck",
        "c-name",
        "c-description",
        "c-group",
        "c-position",
        "c-only-down",
        "c-mcp",
    ):
        assert f'<label for="{control}"' in body or f'for="{control}"' in body


def test_a_component_s_settings_are_saved_through_the_api_s_rules(owner, page, component):
    from statuspages.services import group_create

    group = group_create(page=page, name="Search")
    form = component_form(
        component,
        display_name="Docs",
        description="The search behind docs.example.com",
        group=str(group.public_id),
        position="3",
        only_show_when_not_operational="on",
        show_mcp_details="on",
    )
    assert owner.post(component_url(component), form).status_code == 302
    component.refresh_from_db()
    assert (
        component.display_name,
        component.description,
        component.group_id,
        component.position,
        component.only_show_when_not_operational,
        component.show_mcp_details,
    ) == ("Docs", "The search behind docs.example.com", group.pk, 3, True, True)


def test_unticked_switches_turn_off_and_empty_name_and_position_are_kept(owner, component):
    from statuspages.services import component_update

    component_update(
        component=component,
        changes={"position": 4, "only_show_when_not_operational": True, "show_mcp_details": True},
    )
    assert (
        owner.post(
            component_url(component), component_form(component, display_name="", position="")
        ).status_code
        == 302
    )
    component.refresh_from_db()
    assert (component.display_name, component.position) == ("Docs search", 4)
    assert (component.only_show_when_not_operational, component.show_mcp_details) == (False, False)


def test_the_component_can_show_another_healthcheck_of_the_organization(owner, org, component, make_check):
    other = make_check(org, name="Billing MCP")
    assert (
        owner.post(
            component_url(component), component_form(component, healthcheck=str(other.public_id))
        ).status_code
        == 302
    )
    component.refresh_from_db()
    assert component.healthcheck_id == other.pk


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"position": "-1"}, "position"),
        ({"position": "first"}, "position"),
        ({"display_name": "x" * 201}, "display_name"),
        ({"healthcheck": ""}, "healthcheck"),
        ({"healthcheck": "not-a-uuid"}, "healthcheck"),
        ({"group": "not-a-uuid"}, "group"),
    ],
)
def test_a_refused_component_field_shows_the_api_s_own_message_next_to_it(
    owner, client, component, changes, field
):
    answer = owner.post(component_url(component), component_form(component, **changes))
    assert answer.status_code == 400
    errors = answer.context["errors"]
    assert list(errors) == [field]
    assert f'id="{field}-errors"' in answer.content.decode()
    body = {k: v for k, v in component_form(component, **changes).items() if v} | {
        k: v for k, v in changes.items()
    }
    body = {k: (None if k in {"healthcheck", "group"} and v == "" else v) for k, v in body.items()}
    api = client.put(
        f"/api/v1/status-pages/{component.page.public_id}/components/{component.public_id}/",
        body,
        format="json",
    )
    assert api.status_code == 400
    assert errors[field][0] in str(api.json())
    component.refresh_from_db()
    assert (component.display_name, component.position) == ("Docs search", 0)


@pytest.mark.parametrize("field", ["healthcheck", "group"])
def test_another_organization_s_healthcheck_or_another_page_s_group_is_refused_by_the_service(
    owner, org, other_org, component, make_check, field
):
    from statuspages.services import group_create

    if field == "healthcheck":
        value = str(make_check(other_org, name="Theirs").public_id)
        message = "No healthcheck with this id in your organization."
    else:
        elsewhere = status_page_create(organization=org, changes={"slug": "else", "title": "Else"})
        value = str(group_create(page=elsewhere, name="Elsewhere").public_id)
        message = "No group with this id on this page."
    answer = owner.post(component_url(component), component_form(component, **{field: value}))
    assert answer.status_code == 400
    assert answer.context["errors"] == {field: [message]}
    component.refresh_from_db()
    assert component.group_id is None
    assert component.healthcheck.organization_id == org.pk


def test_a_public_page_s_badges_go_by_the_component_s_id_and_offer_no_rotation(owner, component):
    answer = owner.get(component_url(component))
    body = answer.content.decode()
    assert f"http://testserver/s/docs-status/badges/{component.public_id}/status.svg" in body
    assert component.badge_token not in body
    assert component_url(component, "rotate-badge-token/") not in body


def test_a_password_page_s_badges_go_by_the_token_and_can_be_rotated(owner, page, component):
    status_page_update(page=page, changes={"access": "password", "password": "a-long-secret"})
    answer = owner.get(component_url(component))
    body = answer.content.decode()
    assert answer["Cache-Control"] == "no-store"
    assert f"/s/docs-status/badges/{component.badge_token}/status.svg" in body
    assert f'action="{component_url(component, "rotate-badge-token/")}"' in body


def test_rotating_the_badge_token_stops_the_old_badge_urls(owner, page, component):
    from django.test import Client

    status_page_update(page=page, changes={"access": "password", "password": "a-long-secret"})
    old = component.badge_token
    assert Client().get(f"/s/docs-status/badges/{old}/status.svg").status_code == 200
    answer = owner.post(component_url(component, "rotate-badge-token/"), follow=True)
    component.refresh_from_db()
    assert component.badge_token != old
    assert f"/s/docs-status/badges/{component.badge_token}/status.svg" in answer.content.decode()
    assert Client().get(f"/s/docs-status/badges/{old}/status.svg").status_code == 404


def test_a_viewer_sees_a_component_but_can_t_change_it_or_rotate_its_token(viewer, page, component):
    status_page_update(page=page, changes={"access": "password", "password": "a-long-secret"})
    body = viewer.get(component_url(component)).content.decode()
    assert "Save component" not in body
    assert "Rotate badge token" not in body
    token = component.badge_token
    assert (
        viewer.post(component_url(component), component_form(component, display_name="Mine")).status_code
        == 403
    )
    assert viewer.post(component_url(component, "rotate-badge-token/")).status_code == 403
    component.refresh_from_db()
    assert (component.display_name, component.badge_token) == ("Docs search", token)


@pytest.mark.parametrize("suffix", ["", "rotate-badge-token/"])
def test_another_organization_s_component_is_not_found(owner, other_org, make_check, suffix):
    from statuspages.services import component_create

    theirs = status_page_create(organization=other_org, changes={"slug": "theirs", "title": "Theirs"})
    component = component_create(
        page=theirs, changes={"healthcheck": make_check(other_org, name="Theirs").public_id}
    )
    assert owner.get(component_url(component)).status_code == 404
    assert (
        owner.post(
            component_url(component, suffix), component_form(component, display_name="Mine")
        ).status_code
        == 404
    )
    component.refresh_from_db()
    assert component.display_name == "Theirs"


def test_a_component_of_another_of_the_organization_s_pages_is_not_found_under_this_one(
    owner, org, page, make_check
):
    from statuspages.services import component_create

    other = status_page_create(organization=org, changes={"slug": "other", "title": "Other"})
    component = component_create(page=other, changes={"healthcheck": make_check(org).public_id})
    assert owner.get(url(page, f"components/{component.public_id}/")).status_code == 404


@pytest.mark.parametrize(
    "suffix", ["verify-domain/", "components/{component}/", "components/{component}/rotate-badge-token/"]
)
def test_each_new_form_needs_the_csrf_token(make_member, org, page, component, txt, suffix):
    from django.test import Client

    status_page_update(page=page, changes={"custom_domain": "status.example.com"})
    txt["_uptimy.status.example.com"] = [page.domain_token]
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(make_member(org).user)
    token = component.badge_token
    answer = strict.post(
        url(page, suffix.format(component=component.public_id)), component_form(component, display_name="X")
    )
    assert answer.status_code == 403
    page.refresh_from_db()
    component.refresh_from_db()
    assert (page.domain_verified, component.display_name, component.badge_token) == (
        False,
        "Docs search",
        token,
    )
