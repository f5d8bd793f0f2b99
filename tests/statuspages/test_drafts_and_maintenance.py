"""Incidents drafted from monitors' status changes, and maintenance told to subscribers (scheduled, started, completed)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from monitors.models import AuditEvent, StatusChange
from monitors.services.maintenance import maintenance_window_create
from statuspages import services
from statuspages.models import Notice, PublishedIncident, StatusChangeCursor, Subscriber
from statuspages.services import drafting, notices


@pytest.fixture
def page(org, make_page):
    return make_page(org, slug="acme", title="Acme status")


@pytest.fixture
def check(org, make_check):
    return make_check(org, name="api")


def went(check, to_status: str, at, from_status: str = "up", cause: str = "") -> StatusChange:
    return StatusChange.objects.create(
        healthcheck=check, at=at, from_status=from_status, to_status=to_status, cause_reason=cause
    )


def consume() -> None:
    while drafting.drafts_consume(now=timezone.now()):
        pass


@pytest.fixture
def cursor_at_end(check):
    """Start the reader at the table's end, as on a first run (one row first: PostgreSQL's sequence
    is not reset between tests, so an empty table's end is not where its next id will be)."""
    went(check, "up", timezone.now() - timedelta(hours=1), from_status="pending")
    consume()


@pytest.fixture
def drafting_page(page, check, add_component, cursor_at_end):
    services.status_page_update(page=page, changes={"draft_incidents": True})
    add_component(page, check, display_name="Public API")
    return page


def test_a_check_going_down_drafts_an_incident_nobody_else_sees(db, drafting_page, check):
    went(check, "down", timezone.now(), cause="Connection refused")
    consume()
    draft = PublishedIncident.with_drafts.get()
    assert (draft.draft, draft.title) == (True, "Public API is down")
    assert "Connection refused" in draft.updates.get().body
    assert not PublishedIncident.objects.exists()
    for path in (
        "/s/acme/",
        "/s/acme/api/v2/incidents.json",
        "/s/acme/api/v2/summary.json",
        "/s/acme/history/",
    ):
        assert "Public API is down" not in Client().get(path).content.decode()
    assert not Notice.objects.exists()


def test_its_recovery_adds_a_suggested_resolved_update_to_the_draft(db, drafting_page, check):
    down = timezone.now() - timedelta(minutes=12)
    went(check, "down", down)
    went(check, "up", down + timedelta(minutes=12), from_status="down")
    consume()
    draft = PublishedIncident.with_drafts.get()
    assert (draft.draft, draft.status, draft.awaiting_recovery) == (True, "resolved", False)
    assert "operational again" in draft.updates.order_by("created_at").last().body
    assert "12 minutes" in draft.updates.order_by("created_at").last().body


def test_a_second_failure_while_a_draft_waits_drafts_nothing_more(db, drafting_page, check):
    now = timezone.now()
    went(check, "down", now - timedelta(minutes=3))
    went(check, "degraded", now - timedelta(minutes=2), from_status="down")
    went(check, "down", now - timedelta(minutes=1), from_status="degraded")
    consume()
    assert PublishedIncident.with_drafts.count() == 1


def test_a_page_without_the_option_drafts_nothing(db, page, check, add_component, cursor_at_end):
    add_component(page, check)
    went(check, "down", timezone.now())
    consume()
    assert not PublishedIncident.with_drafts.exists()


def test_the_reader_waits_at_a_missing_id_then_passes_it(db, drafting_page, check):
    cursor = StatusChangeCursor.objects.get()
    gap = cursor.position + 1
    StatusChange.objects.create(
        id=gap + 1, healthcheck=check, at=timezone.now(), from_status="up", to_status="down"
    )
    now = timezone.now()
    assert drafting.drafts_consume(now=now) == 0  # id `gap` may still commit
    assert drafting.drafts_consume(now=now + drafting.GAP_GRACE) == 1
    assert PublishedIncident.with_drafts.count() == 1


def test_each_status_change_is_read_once(db, drafting_page, check):
    went(check, "down", timezone.now())
    consume()
    PublishedIncident.with_drafts.update(awaiting_recovery=False)  # as if resolved by hand
    consume()
    assert PublishedIncident.with_drafts.count() == 1


# --- maintenance ---------------------------------------------------------------------------------


@pytest.fixture
def subscribed(page, check, add_component):
    component = add_component(page, check, display_name="Public API")
    now = timezone.now()
    Subscriber.objects.create(
        page=page, kind="email", email="ann@example.com", confirmed_at=now, created_at=now
    )
    return component


def test_maintenance_is_told_scheduled_then_started_then_completed(db, org, subscribed, check):
    now = timezone.now()
    maintenance_window_create(
        organization=org,
        name="Database upgrade",
        starts_at=now + timedelta(hours=1),
        duration=timedelta(hours=1),
        healthchecks=[check.public_id],
    )
    steps = [now, now + timedelta(minutes=61), now + timedelta(minutes=121), now + timedelta(minutes=130)]
    kinds = []
    for moment in steps:
        notices.maintenance_scan(now=moment)
        kinds.append(list(Notice.objects.order_by("id").values_list("kind", flat=True)))
    assert kinds[-1] == ["maintenance.scheduled", "maintenance.started", "maintenance.completed"]
    assert [len(k) for k in kinds] == [1, 2, 3, 3]  # each once, however often the scan runs
    started = Notice.objects.get(kind="maintenance.started")
    assert started.data["maintenance"]["components"] == [
        {"id": str(subscribed.public_id), "name": "Public API"}
    ]


def test_maintenance_of_other_checks_is_not_told(db, org, subscribed, make_check):
    other = make_check(org, name="billing")
    maintenance_window_create(
        organization=org,
        name="Billing upgrade",
        starts_at=timezone.now() - timedelta(minutes=5),
        duration=timedelta(hours=1),
        healthchecks=[other.public_id],
    )
    assert notices.maintenance_scan(now=timezone.now()) == 0


def test_a_completion_whose_start_was_never_told_is_not_told(db, org, subscribed, check):
    now = timezone.now()
    maintenance_window_create(
        organization=org,
        name="Quick fix",
        starts_at=now - timedelta(minutes=30),
        duration=timedelta(minutes=10),
        healthchecks=[check.public_id],
    )
    assert notices.maintenance_scan(now=now) == 0


def test_a_drafted_incident_is_logged_as_uptimys_doing(db, drafting_page, check):
    went(check, "down", timezone.now(), cause="Connection refused")
    consume()

    event = AuditEvent.objects.get(action="incident.drafted")
    assert (event.actor_kind, event.target_name, event.after["draft"]) == (
        "system",
        "Public API is down",
        True,
    )


def test_a_drafts_suggested_resolution_is_logged_as_uptimys_doing(db, drafting_page, check):
    went(check, "down", timezone.now())
    consume()
    went(check, "up", timezone.now(), from_status="down")
    consume()

    event = AuditEvent.objects.get(action="incident.resolved")
    assert (event.actor_kind, event.before["status"], event.after["status"]) == (
        "system",
        "investigating",
        "resolved",
    )
