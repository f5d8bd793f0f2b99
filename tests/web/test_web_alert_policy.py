"""The default alert policy page: the API's serializer and service (alert_policy_put), the same messages."""

from __future__ import annotations

import pytest

from alerts.models import AlertPolicy, Channel
from alerts.services import alert_policy_put, channel_add
from monitors.models import Membership

pytestmark = pytest.mark.django_db

PAGE = "/app/settings/alerts/"


def add_email(organization, name: str = "Ops mail") -> Channel:
    return channel_add(
        organization=organization, name=name, kind="email", config={"recipients": ["ops@example.com"]}
    ).channel


def default_policy(organization) -> AlertPolicy:
    return AlertPolicy.objects.get(organization=organization, healthcheck=None)


def form(*channels: Channel, **fields: str) -> dict:
    return {"channels": [str(channel.public_id) for channel in channels], **fields}


def test_the_navigation_links_to_the_page_beside_channels(owner):
    page = owner.get("/app/").content.decode()
    assert (
        '<a href="/app/settings/channels/">Alert channels</a>\n    <a href="/app/settings/alerts/">' in page
    )


def test_the_page_shows_the_stored_default_policy(owner, org):
    pager, mail = add_email(org, "Pager"), add_email(org, "Mail")
    alert_policy_put(
        organization=org,
        healthcheck=None,
        channel_ids=[pager.public_id],
        notify_on_degraded=False,
        reminder_minutes=30,
    )
    answer = owner.get(PAGE)
    assert answer.context["values"] == {
        "channels": [str(pager.public_id)],
        "escalation_channels": [],
        "notify_on_degraded": False,
        "notify_on_recovery": True,
        "notify_on_tool_changes": True,
        "reminder_minutes": "30",
        "escalation_minutes": "",
    }
    page = answer.content.decode()
    assert f'name="channels" value="{pager.public_id}" checked>' in page
    assert f'name="channels" value="{mail.public_id}">' in page


def test_without_a_default_policy_the_page_says_every_enabled_channel_hears_and_ticks_them(owner, org):
    enabled, disabled = add_email(org, "On"), add_email(org, "Off")
    Channel.objects.filter(pk=disabled.pk).update(enabled=False)
    answer = owner.get(PAGE)
    assert "No policy: every enabled channel hears of every incident." in answer.content.decode()
    assert answer.context["values"]["channels"] == [str(enabled.public_id)]


def test_saving_stores_the_policy_as_the_api_s_put_does(owner, org, client):
    pager, boss = add_email(org, "Pager"), add_email(org, "Boss")
    answer = owner.post(
        PAGE,
        form(
            pager,
            notify_on_recovery="on",
            reminder_minutes="15",
            escalation_minutes="60",
            escalation_channels=str(boss.public_id),
        ),
        follow=True,
    )
    assert answer.redirect_chain == [(PAGE, 302)]
    assert "Saved the default alert policy." in answer.content.decode()
    assert client.get("/api/v1/alert-policies/default/").json() == {
        "healthcheck": None,
        "channels": [str(pager.public_id)],
        "notify_on_degraded": False,
        "notify_on_recovery": True,
        "notify_on_tool_changes": False,
        "reminder_minutes": 15,
        "escalation_minutes": 60,
        "escalation_channels": [str(boss.public_id)],
    }


def test_empty_minutes_turn_reminders_off(owner, org):
    alert_policy_put(organization=org, healthcheck=None, channel_ids=[], reminder_minutes=30)
    assert owner.post(PAGE, form(reminder_minutes="")).status_code == 302
    assert default_policy(org).reminder_minutes is None


def test_saving_leaves_a_healthcheck_s_own_policy_alone(owner, org, make_check):
    own = add_email(org, "Own")
    healthcheck = make_check(org)
    alert_policy_put(organization=org, healthcheck=healthcheck, channel_ids=[own.public_id])
    owner.post(PAGE, form())
    assert list(AlertPolicy.objects.get(healthcheck=healthcheck).channels.all()) == [own]


@pytest.mark.parametrize(
    ("fields", "field", "api_body"),
    [
        ({"reminder_minutes": "0"}, "reminder_minutes", {"reminder_minutes": 0}),
        ({"reminder_minutes": "1441"}, "reminder_minutes", {"reminder_minutes": 1441}),
        ({"reminder_minutes": "soon"}, "reminder_minutes", {"reminder_minutes": "soon"}),
        ({"escalation_minutes": "10081"}, "escalation_minutes", {"escalation_minutes": 10081}),
        ({"escalation_minutes": "30"}, "escalation_channels", {"escalation_minutes": 30}),
        ({"channels": "not-a-uuid"}, "channels", {"channels": ["not-a-uuid"]}),
    ],
)
def test_bad_input_is_the_api_s_own_message_next_to_its_field(owner, org, client, fields, field, api_body):
    answer = owner.post(PAGE, {**form(), **fields})
    assert answer.status_code == 400
    errors = answer.context["errors"]
    assert list(errors) == [field]
    api = client.put("/api/v1/alert-policies/default/", {"channels": [], **api_body}, format="json")
    assert api.status_code == 400
    assert errors[field][0] in str(api.json())
    assert f'id="{field}-errors"><li>{errors[field][0]}</li>' in answer.content.decode()
    assert not AlertPolicy.objects.exists()


def test_another_organization_s_channel_is_not_found(owner, org, other_org):
    theirs = add_email(other_org, "Globex pager")
    answer = owner.post(PAGE, form(theirs))
    assert answer.status_code == 400
    assert answer.context["errors"] == {"channels": [f"Channel {theirs.public_id} not found."]}
    assert not AlertPolicy.objects.exists()


def test_a_refused_form_keeps_what_was_typed(owner, org):
    pager = add_email(org, "Pager")
    answer = owner.post(PAGE, form(pager, notify_on_degraded="on", reminder_minutes="0"))
    assert answer.context["values"] == {
        "channels": [str(pager.public_id)],
        "escalation_channels": [],
        "notify_on_degraded": True,
        "notify_on_recovery": False,
        "notify_on_tool_changes": False,
        "reminder_minutes": "0",
        "escalation_minutes": "",
    }


def test_another_organization_s_channels_and_policy_are_never_shown(owner, org, other_org):
    theirs = add_email(other_org, "Globex pager")
    alert_policy_put(
        organization=other_org, healthcheck=None, channel_ids=[theirs.public_id], reminder_minutes=45
    )
    answer = owner.get(PAGE)
    page = answer.content.decode()
    assert "Globex pager" not in page
    assert str(theirs.public_id) not in page
    assert answer.context["policy"] is None
    assert answer.context["values"]["reminder_minutes"] == ""


def test_a_viewer_sees_the_policy_read_only(viewer, org):
    pager = add_email(org, "Pager")
    alert_policy_put(organization=org, healthcheck=None, channel_ids=[pager.public_id], reminder_minutes=30)
    page = viewer.get(PAGE).content.decode()
    assert f'value="{pager.public_id}" checked disabled>' in page
    assert 'value="30" aria-describedby="p-reminder-help" readonly>' in page
    assert '<button type="submit">Save</button>' not in page


def test_a_viewer_s_post_is_refused(viewer, org):
    answer = viewer.post(PAGE, form(reminder_minutes="30"))
    assert answer.status_code == 403
    assert not AlertPolicy.objects.exists()


@pytest.mark.parametrize("role", [Membership.Role.MEMBER, Membership.Role.ADMIN])
def test_every_writer_may_save_it(make_member, org, role):
    assert make_member(org, role).post(PAGE, form()).status_code == 302
    assert default_policy(org).channels.count() == 0


def test_the_page_s_queries_do_not_grow_with_its_channels(owner, org):
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    def queries() -> int:
        reset_queries()
        with CaptureQueriesContext(connection) as captured:
            assert owner.get(PAGE).status_code == 200
        return len(captured)

    first = add_email(org, "First")
    alert_policy_put(organization=org, healthcheck=None, channel_ids=[first.public_id])
    one = queries()
    more = [add_email(org, f"More {index}") for index in range(10)]
    alert_policy_put(
        organization=org,
        healthcheck=None,
        channel_ids=[first.public_id, *(c.public_id for c in more)],
        escalation_minutes=5,
        escalation_channel_ids=[c.public_id for c in more],
    )
    assert queries() == one
