"""The alert policies API: the organization's default and a healthcheck's own, and who then hears of what."""

from __future__ import annotations

import uuid

import pytest

from alerts.models import Delivery
from alerts.services import outbox_consume
from monitors.models import ApiKey
from tests.alerts.conftest import status_change

pytestmark = pytest.mark.django_db

URL = "/api/v1/alert-policies/"


@pytest.fixture
def client(make_client, org):
    return make_client(org)


def policy(*channels, **switches) -> dict:
    return {"channels": [str(channel.public_id) for channel in channels], **switches}


def test_the_default_policy_is_set_read_and_listed(client, make_channel):
    pager = make_channel()

    put = client.put(f"{URL}default/", policy(pager, notify_on_degraded=False), format="json")

    assert put.status_code == 200, put.content
    shown = client.get(f"{URL}default/").json()
    assert shown == {
        "healthcheck": None,
        "channels": [str(pager.public_id)],
        "notify_on_degraded": False,
        "notify_on_recovery": True,
        "notify_on_tool_changes": True,
        "reminder_minutes": None,
        "escalation_minutes": None,
        "escalation_channels": [],
    }
    assert client.get(URL).json() == [shown]


def test_without_a_default_the_answer_says_every_channel_hears(client):
    response = client.get(f"{URL}default/")

    assert response.status_code == 404
    assert "every enabled channel" in response.json()["detail"]


def test_a_healthcheck_s_own_policy_decides_who_hears_of_its_incidents(client, make_channel, check, now):
    everyone, only_this = make_channel(), make_channel()
    client.put(f"{URL}default/", policy(everyone), format="json")
    assert client.put(f"{URL}{check.public_id}/", policy(only_this), format="json").status_code == 200

    status_change(check, "down", at=now)
    outbox_consume(now=now)

    assert list(Delivery.objects.values_list("channel_id", flat=True)) == [only_this.pk]


def test_a_healthcheck_whose_policy_is_removed_follows_the_default(client, make_channel, check):
    client.put(f"{URL}{check.public_id}/", policy(make_channel()), format="json")

    assert client.delete(f"{URL}{check.public_id}/").status_code == 204
    response = client.get(f"{URL}{check.public_id}/")
    assert response.status_code == 404
    assert "follows the default" in response.json()["detail"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"channels": [str(uuid.uuid4())]}, "channels"),
        ({"channels": [], "reminder_minutes": 0}, "reminder_minutes"),
        ({"channels": [], "reminder_minutes": 24 * 60 + 1}, "reminder_minutes"),
        ({"channels": [], "escalation_minutes": 30}, "escalation_channels"),
        ({"channels": ["not-an-id"]}, "channels"),
    ],
)
def test_bad_policies_are_refused_naming_the_field(client, body, field):
    response = client.put(f"{URL}default/", body, format="json")

    assert response.status_code == 400
    assert field in response.json(), response.json()


def test_another_organization_s_channel_is_not_found_in_a_policy(client, make_channel, other_org):
    theirs = make_channel(organization=other_org)

    response = client.put(f"{URL}default/", policy(theirs), format="json")

    assert response.json() == {"channels": [f"Channel {theirs.public_id} not found."]}


def test_another_organization_s_healthcheck_has_no_policy_here(client, make_check, other_org, make_channel):
    theirs = make_check(organization=other_org)

    assert client.put(f"{URL}{theirs.public_id}/", policy(make_channel()), format="json").status_code == 404
    assert client.get(f"{URL}{theirs.public_id}/").status_code == 404


def test_a_read_only_key_reads_policies_but_never_sets_them(make_client, org, make_channel):
    reader = make_client(org, scope=ApiKey.Scope.READ)

    assert reader.get(URL).status_code == 200
    assert reader.put(f"{URL}default/", policy(make_channel()), format="json").status_code == 403
    assert reader.delete(f"{URL}default/").status_code == 403
