"""API keys with an expiry: refused from then on by the API and /mcp's grant; their last use and address recorded."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
import time_machine
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from mcpserver.auth import CredentialExpired, grant_for
from monitors.errors import ServiceError
from monitors.models import ApiKey
from monitors.services import api_key_create

pytestmark = pytest.mark.django_db
RESOURCE = "http://127.0.0.1:8000/mcp"


def api(raw_key: str, address: str = "203.0.113.7") -> APIClient:
    client = APIClient(REMOTE_ADDR=address)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    return client


@pytest.mark.parametrize(
    ("ahead", "message"),
    [
        (timedelta(0), "The expiry must be in the future."),
        (timedelta(days=-1), "The expiry must be in the future."),
        (timedelta(days=731), "A key lives at most 730 days; choose an earlier expiry."),
    ],
)
def test_a_key_s_expiry_must_be_soon_enough_and_in_the_future(org, now, ahead, message):
    with pytest.raises(ServiceError) as refused:
        api_key_create(organization=org, expires_at=now + ahead)

    assert (refused.value.field, refused.value.message) == ("expires_at", message)
    assert not ApiKey.objects.exists()


def test_an_expired_key_is_refused_by_the_api_with_a_401_that_says_so(org, now):
    _, raw = api_key_create(organization=org, expires_at=now + timedelta(hours=1))
    assert api(raw).get("/api/v1/healthchecks/").status_code == 200

    with time_machine.travel(now + timedelta(hours=1), tick=False):
        answer = api(raw).get("/api/v1/healthchecks/")

    assert answer.status_code == 401
    assert "expired" in answer.json()["detail"]
    assert (now + timedelta(hours=1)).strftime("%Y-%m-%d %H:%M") in answer.json()["detail"]


def test_an_expired_key_raises_at_mcp_s_grant_and_a_live_one_grants(org, now):
    _, raw = api_key_create(organization=org, expires_at=now + timedelta(days=1))
    assert grant_for(f"Bearer {raw}", resource=RESOURCE) is not None

    with (
        time_machine.travel(now + timedelta(days=1, seconds=1), tick=False),
        pytest.raises(CredentialExpired) as expired,
    ):
        grant_for(f"Bearer {raw}", resource=RESOURCE)

    assert "expired" in expired.value.message


def test_the_api_records_the_key_s_last_use_and_address_at_most_once_a_minute(org, now):
    key, raw = api_key_create(organization=org)

    api(raw, "203.0.113.7").get("/api/v1/healthchecks/")
    key.refresh_from_db()
    assert (key.last_used_at, key.last_used_address) == (now, "203.0.113.7")

    with time_machine.travel(now + timedelta(seconds=59), tick=False):
        api(raw, "198.51.100.4").get("/api/v1/healthchecks/")
    key.refresh_from_db()
    assert (key.last_used_at, key.last_used_address) == (now, "203.0.113.7")

    with time_machine.travel(now + timedelta(minutes=1), tick=False):
        api(raw, "198.51.100.4").get("/api/v1/healthchecks/")
    key.refresh_from_db()
    assert (key.last_used_at, key.last_used_address) == (now + timedelta(minutes=1), "198.51.100.4")


def test_mcp_s_grant_records_the_key_s_last_use_and_address(org, now):
    key, raw = api_key_create(organization=org)

    grant_for(f"Bearer {raw}", resource=RESOURCE, address="2001:db8::5")

    key.refresh_from_db()
    assert (key.last_used_at, key.last_used_address) == (now, "2001:db8::5")


def run_createapikey(*args: str) -> str:
    out, err = StringIO(), StringIO()
    call_command("createapikey", *args, stdout=out, stderr=err)
    return out.getvalue()


def test_createapikey_expires_at_the_start_of_the_given_day_in_utc(org, now):
    day = (now + timedelta(days=30)).date()

    run_createapikey("acme", "--expires", day.isoformat())

    assert ApiKey.objects.get().expires_at == datetime.combine(day, datetime.min.time(), tzinfo=UTC)


def test_createapikey_takes_an_iso_time_with_its_zone(org, now):
    when = (now + timedelta(days=3)).replace(microsecond=0)

    run_createapikey("acme", "--expires", when.isoformat())

    assert ApiKey.objects.get().expires_at == when


@pytest.mark.parametrize(
    ("ahead", "message"),
    [(timedelta(days=-1), "must be in the future"), (timedelta(days=800), "at most 730 days")],
)
def test_createapikey_refuses_an_expiry_in_the_past_or_too_far(org, now, ahead, message):
    with pytest.raises(CommandError, match=message):
        run_createapikey("acme", "--expires", (now + ahead).date().isoformat())
    assert not ApiKey.objects.exists()
