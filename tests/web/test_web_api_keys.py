"""API keys in the settings: created and shown once, listed with their last use, revoked; owners and admins only."""

from __future__ import annotations

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
