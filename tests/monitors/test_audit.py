"""The audit log: events written in the change's transaction, secrets masked, never edited, pruned by retention."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.test import Client

from monitors.audit import Actor, acting_as
from monitors.models import ApiKey, AuditEvent, AuditEventImmutable
from monitors.services import (
    api_key_create,
    audit_prune,
    audit_record,
    healthcheck_create,
    healthcheck_delete,
)
from probes.checks import check_kind

SECRET = "s3cret-header-value-never-logged"


def _create(org, now, name="api"):
    return healthcheck_create(
        organization=org,
        name=name,
        check_type=check_kind("http"),
        config={"uri": "https://example.com/", "headers": {"X-Key": SECRET}},
        now=now,
    )


def test_a_create_records_an_event_with_the_actor_and_masked_headers(org, now):
    with acting_as(Actor(kind="person", via="web", address="192.0.2.7")):
        healthcheck = _create(org, now)

    event = AuditEvent.objects.get(action="healthcheck.created")
    assert (event.target_id, event.target_name, event.via, event.address) == (
        str(healthcheck.public_id),
        "api",
        "web",
        "192.0.2.7",
    )
    assert SECRET not in str(AuditEvent.objects.values_list("before", "after").get())


def test_an_event_without_an_actor_records_system(org, now):
    _create(org, now)

    assert AuditEvent.objects.get().actor_kind == "system"


def test_a_change_that_rolls_back_leaves_no_event(org, now):
    def create_then_fail():
        with transaction.atomic():
            _create(org, now)
            raise RuntimeError("roll back")

    with pytest.raises(RuntimeError):
        create_then_fail()

    assert not AuditEvent.objects.exists()


def test_an_event_that_cannot_be_written_rolls_the_change_back(org, now, monkeypatch):
    healthcheck = _create(org, now)

    def refuse(**kwargs):
        raise RuntimeError("audit write failed")

    monkeypatch.setattr("monitors.services.healthchecks.audit_record", refuse)
    with pytest.raises(RuntimeError):
        healthcheck_delete(healthcheck=healthcheck)

    assert type(healthcheck).objects.filter(pk=healthcheck.pk).exists()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_audit_record_refuses_to_run_outside_a_transaction(org):
    with pytest.raises(RuntimeError):
        audit_record(organization=org, action="x.y", target_type="x")


@pytest.mark.parametrize(
    "edit",
    [
        lambda event: event.save(),
        lambda event: event.delete(),
        lambda event: AuditEvent.objects.filter(pk=event.pk).update(action="forged"),
        lambda event: AuditEvent.objects.filter(pk=event.pk).delete(),
    ],
    ids=["save", "delete", "queryset update", "queryset delete"],
)
def test_an_event_is_never_edited(org, now, edit):
    _create(org, now)
    event = AuditEvent.objects.get()

    with pytest.raises(AuditEventImmutable):
        edit(event)


def test_retention_prunes_events_past_the_plans_days_only(org, now):
    with transaction.atomic():
        old = audit_record(
            organization=org,
            action="x.old",
            target_type="x",
            now=now - timedelta(days=org.plan.retention_days, seconds=1),
        )
        kept = audit_record(organization=org, action="x.kept", target_type="x", now=now - timedelta(days=1))

    assert audit_prune(now=now, batch_size=1) == 1
    assert list(AuditEvent.objects.values_list("pk", flat=True)) == [kept.pk]
    assert old.pk != kept.pk


def _api(raw_key):
    return Client(headers={"authorization": f"Bearer {raw_key}", "user-agent": "uptimyctl/1.0"})


def test_the_api_lists_the_keys_change_with_the_key_and_via_uptimyctl(org, now):
    key, raw = api_key_create(organization=org)
    response = _api(raw).post(
        "/api/v1/healthchecks/",
        {"name": "via ctl", "type": "http", "config": {"uri": "https://example.com/"}},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content

    answer = _api(raw).get("/api/v1/audit-events/", {"action": "healthcheck.created"}).json()

    [event] = answer["results"]
    assert (event["actor"]["kind"], event["actor"]["api_key"], event["actor"]["via"]) == (
        "api_key",
        str(key.public_id),
        "uptimyctl",
    )


def test_another_organizations_events_are_never_listed(org, other_org, now):
    _create(other_org, now)
    _, raw = api_key_create(organization=org)

    answer = _api(raw).get("/api/v1/audit-events/", {"action": "healthcheck"}).json()

    assert answer["results"] == []


@pytest.mark.parametrize(("name", "value"), [("since", "yesterday"), ("api_key", "nope"), ("action", "A B")])
def test_a_bad_filter_is_a_400_naming_it(org, name, value):
    _, raw = api_key_create(organization=org)

    response = _api(raw).get("/api/v1/audit-events/", {name: value})

    assert response.status_code == 400
    assert name in response.json()


@pytest.mark.parametrize(("scope", "status"), [(ApiKey.Scope.READ_WRITE, 200), (ApiKey.Scope.READ, 403)])
def test_only_a_read_write_key_reads_the_log(org, scope, status):
    _, raw = api_key_create(organization=org, scope=scope)

    response = _api(raw).get("/api/v1/audit-events/")

    assert response.status_code == status


def test_an_update_that_changes_nothing_records_nothing(org):
    with transaction.atomic():
        skipped = audit_record(
            organization=org, action="x.updated", target_type="x", before={"a": 1}, after={"a": 1}
        )

    assert skipped is None
    assert not AuditEvent.objects.exists()


@pytest.mark.parametrize(
    ("address", "user_agent", "kept_address", "kept_agent"),
    [
        ("203.0.113.9", "curl/8.5.0", "203.0.113.9", "curl/8.5.0"),
        (" ::1 ", "a\x00b", "::1", "a b"),
        ("unix:/run/uptimy.sock", "x\u202ey\r\nz", None, "x y z"),
        ("", "u" * 5_000, None, "u" * 300),
        (None, "", None, ""),
    ],
    ids=["plain", "NUL", "not an address, controls", "huge agent", "nothing"],
)
def test_the_actor_keeps_only_a_storable_address_and_user_agent(
    address, user_agent, kept_address, kept_agent
):
    actor = Actor(kind="system", via="system").seen_from(address=address, user_agent=user_agent)

    assert (actor.address, actor.user_agent) == (kept_address, kept_agent)


def test_a_change_from_a_hostile_client_is_saved_with_its_event(org):
    _, raw = api_key_create(organization=org)
    client = Client(headers={"authorization": f"Bearer {raw}", "user-agent": "evil\x00agent/" + "x" * 400})

    response = client.post(
        "/api/v1/healthchecks/",
        {"name": "hostile client", "type": "http", "config": {"uri": "https://example.com/"}},
        content_type="application/json",
        REMOTE_ADDR="unix:/run/uptimy.sock",
    )

    assert response.status_code == 201, response.content
    event = AuditEvent.objects.get(action="healthcheck.created")
    assert event.address is None
    assert "\x00" not in event.user_agent
    assert len(event.user_agent) <= 300
