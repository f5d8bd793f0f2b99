"""Alert channels in the web app: the API's serializer, parsers and messages; send test; delete."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail

from alerts.channels.webhook import generate_secret
from alerts.models import Channel, Delivery
from alerts.services import alert_policy_set, channel_add, outbox_consume
from alerts.services.sending import deliveries_send
from monitors.models import Membership
from tests.alerts.channel_support import Reply
from tests.alerts.conftest import status_change
from tests.clock import frozen_at
from web import selectors as web_selectors

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


# --- editing a channel --------------------------------------------------------------------------------


def add_webhook(organization, settings, url: str = "http://127.0.0.1:9/hook/token-123") -> Channel:
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    return channel_add(
        organization=organization,
        name="Hook",
        kind="webhook",
        config={"url": url, "secret": "whsec_" + "A" * 32},
    ).channel


def edit_form(owner, channel: Channel) -> dict[str, str]:
    """Return the edit page's form as a browser would post it back unchanged."""
    form = owner.get(f"{PAGE}{channel.public_id}/").context["form"]
    return {"name": form.values["name"], **form.values, **({"enabled": "on"} if form.enabled else {})}


def test_the_edit_page_shows_secrets_masked(owner, org, settings):
    channel = add_webhook(org, settings)
    answer = owner.get(f"{PAGE}{channel.public_id}/")
    page = answer.content.decode()
    assert answer.status_code == 200
    assert answer["Cache-Control"] == "no-store"
    assert "whsec_AAAA" not in page
    assert "token-123" not in page
    assert 'value="http://127.0.0.1:9/********"' in page
    assert "Shown masked: leave it as it is to keep the stored value" in page


def test_a_change_that_leaves_the_secrets_as_shown_keeps_them(owner, org, settings):
    channel = add_webhook(org, settings)
    form = edit_form(owner, channel) | {"name": "Renamed hook"}
    assert owner.post(f"{PAGE}{channel.public_id}/", form).status_code == 302
    channel.refresh_from_db()
    assert channel.name == "Renamed hook"
    assert channel.config["url"] == "http://127.0.0.1:9/hook/token-123"
    assert channel.config["secret"] == "whsec_" + "A" * 32


def test_a_secret_typed_anew_replaces_the_stored_one(owner, org, settings):
    channel = add_webhook(org, settings)
    form = edit_form(owner, channel) | {"secret": "whsec_" + "B" * 32}
    assert owner.post(f"{PAGE}{channel.public_id}/", form).status_code == 302
    channel.refresh_from_db()
    assert channel.config["secret"] == "whsec_" + "B" * 32


def test_a_rotation_s_previous_secret_survives_an_edit(owner, org, settings):
    from django.utils import timezone

    from alerts.services import channel_rotate_secret

    channel = add_webhook(org, settings)
    channel_rotate_secret(channel=channel, now=timezone.now())
    assert owner.post(f"{PAGE}{channel.public_id}/", edit_form(owner, channel)).status_code == 302
    channel.refresh_from_db()
    assert channel.config["previous_secret"] == "whsec_" + "A" * 32


def test_an_email_channel_s_recipients_are_edited_one_per_line(owner, org):
    channel = add_email(org)
    assert edit_form(owner, channel)["recipients"] == "ops@example.com"
    form = edit_form(owner, channel) | {"recipients": "ops@example.com\noncall@example.com"}
    assert owner.post(f"{PAGE}{channel.public_id}/", form).status_code == 302
    channel.refresh_from_db()
    assert channel.config == {"recipients": ["ops@example.com", "oncall@example.com"]}


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"name": ""}, "name", "This field may not be blank."),
        ({"recipients": "not-an-address"}, "recipients", "is not a valid email address"),
        ({"recipients": ""}, "recipients", "must be a list of at least one email address"),
        ({"name": "Taken"}, "name", "Another channel of this organization has this name."),
    ],
)
def test_a_refused_change_shows_the_api_s_message_next_to_the_field(owner, org, change, field, message):
    add_email(org, "Taken")
    channel = add_email(org)
    answer = owner.post(f"{PAGE}{channel.public_id}/", edit_form(owner, channel) | change)
    assert answer.status_code == 400
    errors = answer.context["form"].errors
    assert list(errors) == [field]
    assert message in errors[field][0]
    channel.refresh_from_db()
    assert (channel.name, channel.config) == ("Ops mail", {"recipients": ["ops@example.com"]})


def test_a_kept_secret_may_not_follow_the_channel_to_another_host(owner, org, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    channel = channel_add(
        organization=org,
        name="Pager",
        kind="pagerduty",
        config={"routing_key": "R" * 32, "events_url": "http://127.0.0.1:9/v2/enqueue"},
    ).channel
    form = edit_form(owner, channel) | {"events_url": "http://127.0.0.2:9/v2/enqueue"}
    answer = owner.post(f"{PAGE}{channel.public_id}/", form)
    assert answer.status_code == 400
    assert answer.context["form"].errors["routing_key"] == [
        "The channel now sends to another host: send this secret again (a stored one stays with its host)."
    ]
    channel.refresh_from_db()
    assert channel.config["events_url"] == "http://127.0.0.1:9/v2/enqueue"


def test_enabling_a_disabled_channel_sends_it_a_test(owner, org):
    channel = add_email(org)
    Channel.objects.filter(pk=channel.pk).update(enabled=False, disabled_reason="Refused")
    form = edit_form(owner, channel)
    assert "enabled" not in form
    answer = owner.post(f"{PAGE}{channel.public_id}/", form | {"enabled": "on"}, follow=True)
    assert "Enabled again: the test alert it was sent arrived." in answer.content.decode()
    assert mail.outbox[-1].to == ["ops@example.com"]
    channel.refresh_from_db()
    assert channel.enabled


def test_unchecking_enabled_disables_the_channel(owner, org):
    channel = add_email(org)
    form = edit_form(owner, channel)
    del form["enabled"]
    assert owner.post(f"{PAGE}{channel.public_id}/", form).status_code == 302
    channel.refresh_from_db()
    assert not channel.enabled


@pytest.mark.parametrize("method", ["get", "post"])
def test_another_organization_s_channel_can_t_be_edited(owner, other_org, method):
    channel = add_email(other_org)
    answer = getattr(owner, method)(
        f"{PAGE}{channel.public_id}/", {"name": "Mine"} if method == "post" else {}
    )
    assert answer.status_code == 404
    assert Channel.objects.get(pk=channel.pk).name == "Ops mail"


def test_a_viewer_sees_a_channel_s_form_but_can_t_save_it(viewer, org):
    channel = add_email(org)
    assert "Save channel" not in viewer.get(f"{PAGE}{channel.public_id}/").content.decode()
    answer = viewer.post(f"{PAGE}{channel.public_id}/", {"name": "Mine", "recipients": "x@example.com"})
    assert answer.status_code == 403
    assert Channel.objects.get(pk=channel.pk).name == "Ops mail"


@pytest.mark.parametrize("field", ["name", "recipients"])
def test_a_nul_in_an_edited_channel_is_a_field_error(owner, org, field):
    channel = add_email(org)
    answer = owner.post(
        f"{PAGE}{channel.public_id}/", edit_form(owner, channel) | {field: "ops\x00@example.com"}
    )
    assert answer.status_code == 400
    assert field in answer.context["form"].errors


# --- rotating a webhook's signing secret -------------------------------------------------------------


def rotate_url(channel: Channel) -> str:
    return f"{PAGE}{channel.public_id}/rotate-secret/"


def test_a_webhook_s_edit_page_offers_to_rotate_its_secret(owner, org, settings):
    channel = add_webhook(org, settings)
    assert f'action="{rotate_url(channel)}"' in owner.get(f"{PAGE}{channel.public_id}/").content.decode()


def test_an_email_channel_s_edit_page_offers_no_rotation(owner, org):
    channel = add_email(org)
    assert rotate_url(channel) not in owner.get(f"{PAGE}{channel.public_id}/").content.decode()


def test_rotating_shows_the_new_secret_once_and_never_cached(owner, org, settings):
    channel = add_webhook(org, settings)
    answer = owner.post(rotate_url(channel))
    channel.refresh_from_db()
    new = channel.config["secret"]
    assert answer.status_code == 200
    assert answer["Cache-Control"] == "no-store"
    assert new != "whsec_" + "A" * 32
    assert f'<code class="key" id="new-secret">{new}</code>' in answer.content.decode()
    assert new not in owner.get(f"{PAGE}{channel.public_id}/").content.decode()


def test_rotating_keeps_the_previous_secret_signing_for_the_api_s_window(owner, org, settings):
    from datetime import datetime, timedelta

    from django.utils import timezone

    channel = add_webhook(org, settings)
    before = timezone.now()
    answer = owner.post(rotate_url(channel))
    channel.refresh_from_db()
    until = datetime.fromisoformat(channel.config["previous_secret_until"])
    assert channel.config["previous_secret"] == "whsec_" + "A" * 32
    assert before + timedelta(hours=24) <= until <= timezone.now() + timedelta(hours=24)
    assert f"until {until:%Y-%m-%d %H:%M} UTC" in answer.content.decode()


def test_the_edit_page_says_a_rotation_is_under_way(owner, org, settings):
    channel = add_webhook(org, settings)
    owner.post(rotate_url(channel))
    assert "A rotation is under way" in owner.get(f"{PAGE}{channel.public_id}/").content.decode()


def test_rotating_a_channel_that_is_not_a_webhook_answers_with_the_service_s_message(owner, org):
    channel = add_email(org)
    answer = owner.post(rotate_url(channel), follow=True)
    assert answer.status_code == 200
    assert "Only webhook channels have a signing secret." in answer.content.decode()
    channel.refresh_from_db()
    assert channel.config == {"recipients": ["ops@example.com"]}


def test_a_viewer_can_t_rotate_a_secret_nor_sees_the_button(viewer, org, settings):
    channel = add_webhook(org, settings)
    assert rotate_url(channel) not in viewer.get(f"{PAGE}{channel.public_id}/").content.decode()
    assert viewer.post(rotate_url(channel)).status_code == 403
    channel.refresh_from_db()
    assert channel.config["secret"] == "whsec_" + "A" * 32


def test_another_organization_s_webhook_secret_can_t_be_rotated(owner, other_org, settings):
    channel = add_webhook(other_org, settings)
    assert owner.post(rotate_url(channel)).status_code == 404
    channel.refresh_from_db()
    assert "previous_secret" not in channel.config


def test_rotating_needs_a_post(owner, org, settings):
    assert owner.get(rotate_url(add_webhook(org, settings))).status_code == 405


def test_rotating_needs_the_csrf_token(make_member, org, settings):
    from django.test import Client

    channel = add_webhook(org, settings)
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(make_member(org).user)
    assert strict.post(rotate_url(channel)).status_code == 403
    channel.refresh_from_db()
    assert "previous_secret" not in channel.config


# --- a channel's delivery log ------------------------------------------------------------------

URL_TOKEN = "tok-9c8b7a6f5e4d3c21"


@pytest.fixture
def failing_hook(org, receiver, settings):
    """A webhook to a loopback receiver that answers 500 quoting the URL's token and the secret."""
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    secret = generate_secret()
    receiver.default = Reply(status=500, body=f"no: token={URL_TOKEN} secret={secret}".encode())
    saved = channel_add(
        organization=org,
        name="Failing hook",
        kind="webhook",
        config={"url": receiver.url(f"/hook?token={URL_TOKEN}"), "secret": secret},
    )
    alert_policy_set(organization=org, channels=[saved.channel])
    return saved.channel


def went_down(healthcheck, at) -> None:
    status_change(healthcheck, "down", at=at)
    outbox_consume(now=at)


def log_of(channel: Channel) -> str:
    return f"/app/settings/channels/{channel.public_id}/"


def test_the_channel_page_shows_each_attempt_of_a_failing_delivery(owner, org, failing_hook, make_check, now):
    went_down(make_check(org), now)
    deliveries_send()
    with frozen_at(Delivery.objects.get().next_attempt_at):
        deliveries_send()

    page = owner.get(log_of(failing_hook)).content.decode()

    section = page.split('id="deliveries"', 1)[1]
    assert "<code>incident.opened</code> Docs MCP" in section
    assert section.count("HTTP 500 · ") == 2
    assert section.count("127.0.0.1 answered HTTP 500: no: token=[redacted] secret=[redacted]") == 2
    assert " ms · " in section
    assert "Failed" in section
    retry = Delivery.objects.get().next_attempt_at
    assert f"{retry:%Y-%m-%d %H:%M:%S} UTC" in section
    assert URL_TOKEN not in page
    assert failing_hook.config["secret"] not in page


def test_the_channel_page_lists_deliveries_newest_first_in_pages(
    owner, org, failing_hook, make_check, now, monkeypatch
):
    monkeypatch.setattr(web_selectors, "DELIVERIES_SHOWN", 2)
    for minute, name in enumerate(["First", "Second", "Third"]):
        went_down(make_check(org, name=name), now + timedelta(minutes=minute))

    newest = owner.get(log_of(failing_hook)).content.decode().split('id="deliveries"', 1)[1]
    oldest = owner.get(log_of(failing_hook) + "?page=2").content.decode().split('id="deliveries"', 1)[1]

    assert newest.index("Third") < newest.index("Second")
    assert "First" not in newest
    assert "Page 1 of 2 (3 deliveries)" in newest
    assert "First" in oldest
    assert "Second" not in oldest


def test_the_channel_page_s_queries_do_not_grow_with_its_deliveries(
    owner, org, failing_hook, make_check, now
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert owner.get(log_of(failing_hook)).status_code == 200
        return len(captured)

    went_down(make_check(org, name="One"), now)
    deliveries_send()
    one = queries()
    for index in range(5):
        went_down(make_check(org, name=f"More {index}"), now + timedelta(minutes=index + 1))
    with frozen_at(now + timedelta(minutes=10)):
        deliveries_send()

    assert Delivery.objects.filter(attempt_rows__isnull=False).distinct().count() == 6
    assert queries() == one


def test_a_viewer_sees_the_delivery_log(viewer, org, failing_hook, make_check, now):
    went_down(make_check(org), now)
    deliveries_send()

    page = viewer.get(log_of(failing_hook)).content.decode()

    assert "127.0.0.1 answered HTTP 500" in page


def test_another_organization_s_delivery_log_is_404(make_member, other_org, failing_hook):
    assert make_member(other_org).get(log_of(failing_hook)).status_code == 404
