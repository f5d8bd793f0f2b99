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
