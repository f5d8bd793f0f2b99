"""API keys in the settings: created and shown once, listed with their last use, revoked; owners and admins only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from monitors.models import ApiKey, Membership
from monitors.services import api_key_create

pytestmark = pytest.mark.django_db


def test_a_new_key_is_shown_once_and_works_on_the_api(owner, org, make_client):
    answer = owner.post("/app/settings/api-keys/", {"name": "CI"})
    raw = answer.context["created"]["raw"]
    assert raw in answer.content.decode()
    assert answer["Cache-Control"] == "no-store"
    key = ApiKey.objects.get(organization=org, name="CI")
    assert key.scope == ApiKey.Scope.READ_WRITE
    assert raw not in owner.get("/app/settings/api-keys/").content.decode()
    from rest_framework.test import APIClient

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert api.get("/api/v1/healthchecks/").status_code == 200


def test_the_read_only_flag_makes_a_read_key(owner, org):
    owner.post("/app/settings/api-keys/", {"name": "Grafana", "read_only": "on"})
    assert ApiKey.objects.get(organization=org, name="Grafana").scope == ApiKey.Scope.READ


def test_the_list_shows_each_key_s_last_use_and_never_the_key(owner, org):
    key, raw = api_key_create(organization=org, name="Used")
    ApiKey.objects.filter(pk=key.pk).update(last_used_at=timezone.now())
    api_key_create(organization=org, name="Unused")
    page = owner.get("/app/settings/api-keys/").content.decode()
    assert key.prefix in page
    assert raw not in page
    assert "Never" in page


def test_revoking_a_key_stops_it(owner, org):
    key, _ = api_key_create(organization=org, name="Old")
    owner.post(f"/app/settings/api-keys/{key.public_id}/revoke/")
    key.refresh_from_db()
    assert key.revoked_at is not None


def test_another_organization_s_key_is_404(owner, other_org):
    key, _ = api_key_create(organization=other_org)
    assert owner.post(f"/app/settings/api-keys/{key.public_id}/revoke/").status_code == 404
    key.refresh_from_db()
    assert key.revoked_at is None


@pytest.mark.parametrize("role", [Membership.Role.MEMBER, Membership.Role.VIEWER])
def test_only_owners_and_admins_create_or_revoke_keys(make_member, org, role):
    browser = make_member(org, role)
    key, _ = api_key_create(organization=org)
    assert browser.get("/app/settings/api-keys/").status_code == 200
    assert browser.post("/app/settings/api-keys/", {"name": "x"}).status_code == 403
    assert browser.post(f"/app/settings/api-keys/{key.public_id}/revoke/").status_code == 403
    assert ApiKey.objects.filter(organization=org).count() == 1


# --- expiry, last use, the unused flag ---------------------------------------------------------------


def test_a_key_made_with_an_expiry_date_expires_at_that_day_s_start_in_utc(owner, org, now):
    day = (now + timedelta(days=30)).date()

    answer = owner.post("/app/settings/api-keys/", {"name": "Temp", "expires_on": day.isoformat()})

    assert answer.status_code == 200
    key = ApiKey.objects.get(organization=org, name="Temp")
    assert key.expires_at == datetime.combine(day, datetime.min.time(), tzinfo=UTC)
    assert f"It expires at {day.isoformat()} 00:00 UTC." in answer.content.decode()


@pytest.mark.parametrize(
    ("days_ahead", "message"),
    [
        (0, "The expiry must be in the future."),  # today's start has passed
        (-3, "The expiry must be in the future."),
        (800, "A key lives at most 730 days; choose an earlier expiry."),
    ],
)
def test_an_expiry_in_the_past_or_too_far_is_a_form_error(owner, org, now, days_ahead, message):
    day = (now + timedelta(days=days_ahead)).date()

    answer = owner.post("/app/settings/api-keys/", {"name": "Bad", "expires_on": day.isoformat()})

    assert answer.status_code == 400
    assert answer.context["form"].errors == {"expires_on": [message]}
    assert answer.context["created"] is None
    assert not ApiKey.objects.filter(organization=org, name="Bad").exists()


def test_the_list_shows_the_expiry_and_an_expired_key_as_expired(owner, org, now):
    api_key_create(organization=org, name="Soon", expires_at=now + timedelta(hours=2))
    expired, _ = api_key_create(organization=org, name="Past", expires_at=now + timedelta(hours=1))
    ApiKey.objects.filter(pk=expired.pk).update(expires_at=now - timedelta(hours=1))

    page = owner.get("/app/settings/api-keys/").content.decode()

    assert (now + timedelta(hours=2)).strftime("%Y-%m-%d %H:%M") in page
    assert ">Expired" in page


def test_the_list_shows_where_a_key_was_last_used_from(owner, org, now):
    key, _ = api_key_create(organization=org, name="CI")
    ApiKey.objects.filter(pk=key.pk).update(last_used_at=now, last_used_address="203.0.113.7")

    page = owner.get("/app/settings/api-keys/").content.decode()

    assert f"{now:%Y-%m-%d %H:%M} from 203.0.113.7" in page


@pytest.mark.parametrize(
    ("created_ago", "used_ago", "revoked", "flagged"),
    [
        (timedelta(days=91), None, False, True),  # never used since it was made 91 days ago
        (timedelta(days=10), None, False, False),
        (timedelta(days=400), timedelta(days=90), False, True),
        (timedelta(days=400), timedelta(days=2), False, False),
        (timedelta(days=400), None, True, False),  # revoked already: nothing to ask
    ],
)
def test_a_key_unused_for_90_days_is_flagged_in_the_list(
    owner, org, now, created_ago, used_ago, revoked, flagged
):
    key, _ = api_key_create(organization=org, name="Old")
    ApiKey.objects.filter(pk=key.pk).update(
        created_at=now - created_ago,
        last_used_at=now - used_ago if used_ago else None,
        revoked_at=now if revoked else None,
    )

    page = owner.get("/app/settings/api-keys/").content.decode()

    assert ("Unused for 90 days: revoke it?" in page) is flagged
