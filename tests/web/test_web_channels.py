"""Alert channels in the web app: the API's serializer, parsers and messages; send test; delete."""

from __future__ import annotations

import pytest
from django.core import mail

from alerts.models import Channel
from alerts.services import channel_add
from monitors.models import Membership

pytestmark = pytest.mark.django_db

PAGE = "/app/settings/channels/"


def add_email(organization, name: str = "Ops mail") -> Channel:
    return channel_add(
        organization=organization, name=name, kind="email", config={"recipients": ["ops@example.com"]}
    ).channel


def test_the_page_lists_the_organization_s_channels_only(owner, org, other_org):
    add_email(org, "Ours")
    add_email(other_org, "Theirs")
    page = owner.get(PAGE).content.decode()
    assert "Ours" in page
    assert "ops@example.com" in page
    assert "Theirs" not in page


def test_adding_an_email_channel_stores_its_recipients_one_per_line(owner, org):
    form = {"kind": "email", "name": "Ops mail", "recipients": "ops@example.com\nOn-Call@example.com\n"}
    assert owner.post(PAGE, form).status_code == 302
    assert Channel.objects.get(organization=org).config == {
        "recipients": ["ops@example.com", "on-call@example.com"]
    }


def test_a_webhook_s_generated_secret_is_shown_once_and_never_cached(owner, org, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    answer = owner.post(
        PAGE, {"kind": "webhook", "name": "Hook", "url": "http://127.0.0.1:9/hook", "secret": ""}
    )
    secret = Channel.objects.get(organization=org).config["secret"]
    assert answer.status_code == 200
    assert answer["Cache-Control"] == "no-store"
    assert secret in answer.content.decode()
    assert secret not in owner.get(PAGE).content.decode()


@pytest.mark.parametrize(
    ("form", "field"),
    [
        ({"kind": "email", "name": "Ops", "recipients": "not-an-address"}, "recipients"),
        ({"kind": "email", "name": "Ops", "recipients": ""}, "recipients"),
        ({"kind": "email", "name": "", "recipients": "ops@example.com"}, "name"),
        ({"kind": "webhook", "name": "Hook", "url": "ftp://example.com/"}, "url"),
        ({"kind": "webhook", "name": "Hook", "url": "https://example.com/", "secret": "nope"}, "secret"),
        ({"kind": "fax", "name": "Hook"}, "kind"),
    ],
)
def test_a_refused_field_shows_the_api_s_own_message_next_to_it(owner, client, org, form, field):
    answer = owner.post(PAGE, form)
    assert answer.status_code == 400
    errors = answer.context["form"].errors
    assert list(errors) == [field]
    if form["kind"] != "fax":
        config = {k: v for k, v in form.items() if k not in {"kind", "name"} and v}
        if "recipients" in config:
            config["recipients"] = [config["recipients"]]
        api = client.post(
            "/api/v1/channels/", {"kind": form["kind"], "name": form["name"], "config": config}, format="json"
        ).json()
        assert errors[field][0] in str(api)
    assert not Channel.objects.exists()


def test_a_second_channel_of_the_same_name_is_named(owner, org):
    add_email(org, "Ops")
    answer = owner.post(PAGE, {"kind": "email", "name": "Ops", "recipients": "a@example.com"})
    assert answer.status_code == 400
    assert answer.context["form"].errors["name"] == ["Another channel of this organization has this name."]


def test_send_test_sends_an_alert_and_says_it_arrived(owner, org):
    channel = add_email(org)
    answer = owner.post(f"{PAGE}{channel.public_id}/test/", follow=True)
    assert "Sent Ops mail a test alert; it arrived." in answer.content.decode()
    assert mail.outbox[-1].to == ["ops@example.com"]


def test_a_failed_test_says_why(owner, org, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    channel = channel_add(
        organization=org, name="Hook", kind="webhook", config={"url": "http://127.0.0.1:9/hook"}
    ).channel
    answer = owner.post(f"{PAGE}{channel.public_id}/test/", follow=True)
    assert "The test alert to Hook did not arrive:" in answer.content.decode()


def test_delete_asks_then_deletes(owner, org):
    channel = add_email(org)
    assert "Delete Ops mail?" in owner.get(f"{PAGE}{channel.public_id}/delete/").content.decode()
    assert owner.post(f"{PAGE}{channel.public_id}/delete/").status_code == 302
    assert not Channel.objects.exists()


@pytest.mark.parametrize("action", ["test/", "delete/"])
def test_another_organization_s_channel_is_404(owner, other_org, action):
    channel = add_email(other_org)
    assert owner.post(f"{PAGE}{channel.public_id}/{action}").status_code == 404
    assert Channel.objects.filter(pk=channel.pk).exists()


@pytest.mark.parametrize(
    ("action", "form"),
    [
        ("", {"kind": "email", "name": "X", "recipients": "x@example.com"}),
        ("{id}/test/", {}),
        ("{id}/delete/", {}),
    ],
)
def test_a_viewer_s_post_is_403(viewer, org, action, form):
    channel = add_email(org)
    answer = viewer.post(PAGE + action.format(id=channel.public_id), form)
    assert answer.status_code == 403
    assert list(Channel.objects.values_list("name", flat=True)) == ["Ops mail"]
    assert not mail.outbox


def test_a_viewer_sees_the_channels_but_no_form(make_member, org):
    add_email(org)
    page = make_member(org, Membership.Role.VIEWER).get(PAGE).content.decode()
    assert "Ops mail" in page
    assert "Add channel" not in page
    assert "Send test" not in page
