"""Reading monitors' outbox into incidents, their timelines and deliveries (SQLite; PostgreSQL in test_outbox_consumer_pg)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction

from alerts.models import Delivery, Incident, IncidentEvent, Notification, OutboxCursor, OutboxReceipt
from alerts.services import alert_policy_set, outbox_consume
from alerts.services import outbox as outbox_module
from alerts.services.outbox import GAP_GRACE
from monitors.models import StatusChange
from monitors.services import healthcheck_delete, healthcheck_pause
from tests.alerts.conftest import cause_change, kinds_delivered, status_change, timeline, tool_change

pytestmark = pytest.mark.django_db


def consume(now, **kwargs) -> int:
    return outbox_consume(now=now + timedelta(minutes=10), **kwargs)


def test_a_change_to_down_opens_a_critical_incident_with_its_cause(check, now):
    status_change(
        check,
        "down",
        at=now,
        reason="Down in 2 of 2 regions: missing_tools",
        regions={"eu-west": "missing_tools", "us-east": "missing_tools"},
        missing=["search_docs"],
    )

    assert consume(now) == 1

    incident = Incident.objects.get()
    assert (incident.severity, incident.opened_at, incident.resolved_at) == ("critical", now, None)
    assert incident.cause_kind == "missing_tools"
    assert incident.cause_reason == "Down in 2 of 2 regions: missing_tools"
    assert incident.cause_regions == {"eu-west": "missing_tools", "us-east": "missing_tools"}
    assert incident.cause_missing_tools == ["search_docs"]
    assert (incident.healthcheck_name, incident.healthcheck_public_id) == ("Docs MCP", check.public_id)
    assert timeline(incident) == ["opened"]


def test_a_degraded_incident_is_escalated_in_place_by_a_later_down(check, now, make_channel):
    channel = make_channel()
    status_change(check, "degraded", at=now, regions={"eu-west": "timeout"})
    status_change(
        check, "down", at=now + timedelta(minutes=1), frm="degraded", regions={"eu-west": "timeout"}
    )

    consume(now)

    incident = Incident.objects.get()
    assert incident.severity == "critical"
    assert incident.opened_at == now
    assert timeline(incident) == ["opened", "escalated"]
    assert kinds_delivered(channel) == ["incident.opened", "incident.escalated"]


def test_a_degraded_check_with_no_failing_region_is_slow(check, now):
    status_change(check, "degraded", at=now, reason="Slow in 2 of 3 regions")

    consume(now)

    assert Incident.objects.get().cause_kind == "slow"


def test_up_resolves_the_incident_and_tells_the_channels_that_heard_of_it(check, now, make_channel):
    channel = make_channel()
    status_change(check, "down", at=now, regions={"eu-west": "connect"})
    consume(now)
    late = make_channel()  # created after the opening: it never heard of this incident
    status_change(check, "up", at=now + timedelta(minutes=5), frm="down")

    consume(now)

    incident = Incident.objects.get()
    assert (incident.resolved_at, incident.resolution) == (now + timedelta(minutes=5), "recovered")
    assert timeline(incident) == ["opened", "resolved"]
    assert incident.events.get(kind="resolved").details["duration_seconds"] == 300
    assert kinds_delivered(channel) == ["incident.opened", "incident.resolved"]
    assert kinds_delivered(late) == []


def test_a_later_down_opens_a_new_incident(check, now):
    status_change(check, "down", at=now)
    status_change(check, "up", at=now + timedelta(minutes=1), frm="down")
    status_change(check, "down", at=now + timedelta(minutes=2))

    consume(now)

    assert [i.resolved_at is None for i in Incident.objects.order_by("opened_at")] == [False, True]


def test_pending_while_down_keeps_the_incident_open(check, now):
    status_change(check, "down", at=now)
    status_change(check, "pending", at=now + timedelta(minutes=1), frm="down")

    consume(now)

    incident = Incident.objects.get()
    assert incident.is_open
    assert timeline(incident) == ["opened", "status_changed"]


def test_a_cause_change_on_an_open_incident_is_an_event_and_a_notification(check, now, make_channel):
    channel = make_channel()
    status_change(check, "down", at=now, regions={"eu-west": "connect"})
    cause_change(
        check, at=now + timedelta(minutes=1), frm="connect", to="missing_tools", reason="Tools missing"
    )

    consume(now)

    incident = Incident.objects.get()
    assert timeline(incident) == ["opened", "cause_changed"]
    assert (incident.cause_kind, incident.cause_reason) == ("missing_tools", "Tools missing")
    assert kinds_delivered(channel) == ["incident.opened", "incident.cause_changed"]


def test_a_cause_change_without_an_open_incident_does_nothing(check, now, make_channel):
    channel = make_channel()
    cause_change(check, at=now, frm="connect", to="timeout", reason="Timed out")

    assert consume(now) == 1

    assert not Incident.objects.exists()
    assert kinds_delivered(channel) == []


def test_a_tool_change_while_up_is_a_notification_naming_the_tools_not_an_incident(check, now, make_channel):
    channel = make_channel()
    tool_change(check, at=now, removed=["search_docs"])

    consume(now)

    assert not Incident.objects.exists()
    notification = Notification.objects.get()
    assert notification.kind == "healthcheck.tools_changed"
    assert notification.details["removed"] == ["search_docs"]
    assert notification.details["healthcheck"]["name"] == "Docs MCP"
    assert kinds_delivered(channel) == ["healthcheck.tools_changed"]


def test_a_tool_change_recorded_with_the_change_to_down_is_part_of_the_incident(check, now, make_channel):
    channel = make_channel()
    tool_change(check, at=now, removed=["search_docs"])  # written first, same moment
    status_change(check, "down", at=now, regions={"eu-west": "missing_tools"}, missing=["search_docs"])

    consume(now)

    assert timeline(Incident.objects.get()) == ["opened", "tools_changed"]
    assert kinds_delivered(channel) == ["incident.opened"]


def test_rows_of_the_three_tables_apply_in_the_order_they_happened(check, now, make_channel):
    channel = make_channel()
    # Written out of order: the cause change (later) gets the lower id of its table, and the
    # status changes are read after it table by table; the time decides.
    cause_change(check, at=now + timedelta(minutes=1), frm="connect", to="timeout", reason="Timed out")
    status_change(check, "down", at=now, regions={"eu-west": "connect"})
    status_change(check, "up", at=now + timedelta(minutes=2), frm="down")

    consume(now)

    assert timeline(Incident.objects.get()) == ["opened", "cause_changed", "resolved"]
    assert kinds_delivered(channel) == ["incident.opened", "incident.cause_changed", "incident.resolved"]


def test_pausing_the_healthcheck_resolves_its_incident_as_paused(check, now):
    status_change(check, "down", at=now)
    consume(now)
    check.status = "down"
    check.save(update_fields=["status"])

    healthcheck_pause(healthcheck=check, now=now + timedelta(minutes=3))
    consume(now)

    incident = Incident.objects.get()
    assert (incident.resolution, incident.resolved_at) == ("paused", now + timedelta(minutes=3))


def test_deleting_the_healthcheck_resolves_its_incident_as_deleted_and_keeps_it(check, now, make_channel):
    channel = make_channel()
    status_change(check, "down", at=now)
    consume(now)
    public_id = check.public_id

    healthcheck_delete(healthcheck=check)
    consume(now)

    incident = Incident.objects.get()
    assert incident.healthcheck is None
    assert (incident.healthcheck_name, incident.healthcheck_public_id) == ("Docs MCP", public_id)
    assert incident.resolution == "deleted"
    assert kinds_delivered(channel) == ["incident.opened", "incident.resolved"]


def test_reading_again_applies_nothing_twice(check, now, make_channel):
    make_channel()
    status_change(check, "down", at=now)
    assert consume(now) == 1

    assert consume(now) == 0

    assert IncidentEvent.objects.count() == 1
    assert Delivery.objects.count() == 1


def test_a_consumer_killed_before_its_commit_loses_and_doubles_nothing(check, now, make_channel, monkeypatch):
    make_channel()
    status_change(check, "down", at=now)
    status_change(check, "up", at=now + timedelta(minutes=1), frm="down")

    def killed(cursor, source, now):
        raise SystemExit("killed")  # as a worker dying mid-transaction: nothing after this runs

    monkeypatch.setattr(outbox_module, "_advance", killed)
    with pytest.raises(SystemExit):
        consume(now)
    assert not Incident.objects.exists()
    assert not Notification.objects.exists()

    monkeypatch.undo()
    assert consume(now) == 2
    assert timeline(Incident.objects.get()) == ["opened", "resolved"]
    assert Delivery.objects.count() == 2


def test_a_batch_stops_where_a_full_table_stops(make_check, now):
    checks = [make_check() for _ in range(3)]
    for index, healthcheck in enumerate(checks):
        status_change(healthcheck, "down", at=now + timedelta(seconds=index))
    cause_change(checks[0], at=now + timedelta(seconds=1, milliseconds=500), frm="", to="timeout", reason="x")

    assert consume(now, limit=2) == 2  # two downs; the cause change (after the second) waits
    assert consume(now, limit=2) == 2  # the cause change, then the third down
    assert timeline(Incident.objects.get(healthcheck=checks[0])) == ["opened", "cause_changed"]


def test_a_row_committed_late_below_rows_already_read_is_still_read(make_check, now):
    first, late, third = make_check(), make_check(), make_check()
    status_change(first, "down", at=now, id=1001)
    status_change(third, "down", at=now, id=1003)
    OutboxCursor.objects.update_or_create(source="status_change", defaults={"position": 1000})
    consume(now)
    assert OutboxCursor.objects.get(source="status_change").position == 1001  # waits at the gap

    status_change(late, "down", at=now, id=1002)  # the transaction that held id 1002 commits
    consume(now)

    assert Incident.objects.filter(healthcheck=late).exists()
    assert Incident.objects.count() == 3
    assert OutboxCursor.objects.get(source="status_change").position == 1003
    assert not OutboxReceipt.objects.exists()


def test_the_cursor_passes_a_gap_missing_for_longer_than_the_grace(make_check, now):
    first, third = make_check(), make_check()
    status_change(first, "down", at=now, id=2001)
    status_change(third, "down", at=now, id=2003)  # 2002 rolled back: it never comes
    OutboxCursor.objects.update_or_create(source="status_change", defaults={"position": 2000})
    outbox_consume(now=now)
    outbox_consume(now=now + GAP_GRACE - timedelta(seconds=1))
    assert OutboxCursor.objects.get(source="status_change").position == 2001

    outbox_consume(now=now + GAP_GRACE)

    assert OutboxCursor.objects.get(source="status_change").position == 2003
    assert not OutboxReceipt.objects.exists()
    assert Incident.objects.count() == 2


def test_the_cursor_never_passes_a_row_that_is_there_but_unread(make_check, now):
    first, waiting, third = make_check(), make_check(), make_check()
    status_change(first, "down", at=now, id=3001)
    status_change(waiting, "down", at=now + timedelta(minutes=30), id=3002)  # later than every cut
    status_change(third, "down", at=now, id=3003)
    OutboxCursor.objects.update_or_create(source="status_change", defaults={"position": 3000})
    for second in range(1, 7):
        cause_change(first, at=now + timedelta(seconds=second), frm="connect", to="timeout", reason="x")

    # Batches of two per table, each cut at the cause changes' last: 3002 waits three batches,
    # over a gap older than the grace, while 3003 above it is read.
    for moment in (now, now + GAP_GRACE, now + GAP_GRACE * 3):
        outbox_consume(now=moment, limit=2)
        assert not Incident.objects.filter(healthcheck=waiting).exists()
    assert OutboxCursor.objects.get(source="status_change").position == 3001

    outbox_consume(now=now + GAP_GRACE * 4, limit=2)

    assert Incident.objects.filter(healthcheck=waiting).exists()
    assert OutboxCursor.objects.get(source="status_change").position == 3003


def test_history_from_before_alerts_is_not_replayed(check, now):
    status_change(check, "down", at=now)
    last = StatusChange.objects.order_by("-id").first()
    assert last is not None
    OutboxCursor.objects.update_or_create(source="status_change", defaults={"position": last.pk})

    assert consume(now) == 0


def test_a_second_open_incident_for_one_healthcheck_is_refused_by_the_database(check, now):
    status_change(check, "down", at=now)
    consume(now)

    with pytest.raises(IntegrityError), transaction.atomic():
        Incident.objects.create(
            organization=check.organization,
            healthcheck=check,
            healthcheck_public_id=check.public_id,
            healthcheck_name=check.name,
            severity="critical",
            opened_at=now,
        )


def test_a_policy_without_degraded_notices_opens_a_warning_incident_quietly(check, now, org, make_channel):
    channel = make_channel()
    alert_policy_set(organization=org, healthcheck=check, channels=[channel], notify_on_degraded=False)
    status_change(check, "degraded", at=now)
    status_change(check, "down", at=now + timedelta(minutes=1), frm="degraded")

    consume(now)

    assert timeline(Incident.objects.get()) == ["opened", "escalated"]
    assert kinds_delivered(channel) == ["incident.escalated"]


def test_the_policy_chooses_the_channels(make_check, now, org, make_channel):
    chosen, other = make_channel(), make_channel()
    routed, default = make_check(), make_check()
    alert_policy_set(organization=org, healthcheck=routed, channels=[chosen])
    alert_policy_set(organization=org, channels=[other])
    status_change(routed, "down", at=now)
    status_change(default, "down", at=now)

    consume(now)

    assert kinds_delivered(chosen) == ["incident.opened"]
    assert list(Delivery.objects.filter(channel=other).values_list("incident__healthcheck", flat=True)) == [
        default.pk
    ]


def test_a_disabled_channel_gets_no_delivery(check, now, make_channel):
    make_channel(enabled=False)
    status_change(check, "down", at=now)

    consume(now)

    assert not Delivery.objects.exists()


def test_another_organizations_channels_hear_nothing(check, now, make_channel, other_org):
    theirs = make_channel(organization=other_org)
    status_change(check, "down", at=now)

    consume(now)

    assert kinds_delivered(theirs) == []


def test_a_storm_sends_each_channel_one_digest_after_the_threshold(make_check, now, make_channel):
    first, second = make_channel(), make_channel()
    checks = [make_check() for _ in range(7)]
    for index, healthcheck in enumerate(checks):
        status_change(healthcheck, "down", at=now + timedelta(seconds=index))

    outbox_consume(now=now, storm_threshold=3)  # live: the digest waits for its window to close

    assert Incident.objects.count() == 7
    for channel in (first, second):
        assert kinds_delivered(channel) == ["incident.opened"] * 3 + ["incidents.digest"]
    digest = Notification.objects.get(kind="incidents.digest")
    assert digest.digest_members.count() == 4
    assert digest.deliveries.filter(next_attempt_at=digest.collect_until).count() == 2


def test_the_storm_threshold_is_a_setting(make_check, now, make_channel, settings):
    channel = make_channel()
    settings.UPTIMY_ALERT_STORM_THRESHOLD = 1
    for healthcheck in (make_check(), make_check(), make_check()):
        status_change(healthcheck, "down", at=now)

    consume(now)

    assert kinds_delivered(channel) == ["incident.opened", "incidents.digest"]


def test_a_digest_carries_to_each_channel_only_what_its_policy_sends_there(
    make_check, now, org, make_channel
):
    from alerts.selectors import digest_entries

    everyone, narrow = make_channel(), make_channel()
    checks = [make_check() for _ in range(4)]
    alert_policy_set(organization=org, channels=[everyone])
    alert_policy_set(organization=org, healthcheck=checks[3], channels=[everyone, narrow])
    for healthcheck in checks:
        status_change(healthcheck, "down", at=now)

    consume(now, storm_threshold=1)

    digest = Notification.objects.get(kind="incidents.digest")
    assert len(digest_entries(digest=digest, channel_id=everyone.pk)) == 3
    [only] = digest_entries(digest=digest, channel_id=narrow.pk)
    assert only.incident is not None
    assert only.incident.healthcheck_id == checks[3].pk
    assert kinds_delivered(narrow) == ["incidents.digest"]


def test_a_storm_of_recoveries_is_one_digest_too(make_check, now, make_channel):
    channel = make_channel()
    checks = [make_check() for _ in range(5)]
    for healthcheck in checks:
        status_change(healthcheck, "down", at=now)
    consume(now, storm_threshold=10)
    for healthcheck in checks:
        status_change(healthcheck, "up", at=now + timedelta(minutes=5), frm="down")

    consume(now, storm_threshold=2)

    assert kinds_delivered(channel) == ["incident.opened"] * 5 + ["incident.resolved"] * 2 + [
        "incidents.digest"
    ]


def test_a_digest_a_sender_took_is_sealed_and_the_storm_starts_another(make_check, now, make_channel):
    make_channel()
    checks = [make_check() for _ in range(4)]
    status_change(checks[0], "down", at=now)
    status_change(checks[1], "down", at=now)
    consume(now, storm_threshold=1)
    Delivery.objects.filter(notification__kind="incidents.digest").update(state="sending", attempts=1)
    status_change(checks[2], "down", at=now + timedelta(seconds=1))

    consume(now, storm_threshold=1)

    digests = Notification.objects.filter(kind="incidents.digest").order_by("id")
    assert [digest.digest_members.count() for digest in digests] == [1, 1]
