"""The heartbeat judge's sweep: many heartbeats in a few set-based queries, right under pings and pauses that race it."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from monitors.models import Healthcheck, Heartbeat, StatusChange
from monitors.services import heartbeats
from monitors.services.healthchecks import healthcheck_create, healthcheck_pause, healthcheck_resume
from monitors.services.heartbeats import heartbeats_judge, ping_record
from probes.checks import check_kind
from probes.heartbeats import PingKind

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
HOURLY = {"schedule": {"period": 3600}, "grace": 300}
DUE = T0 + timedelta(hours=1, minutes=5)  # a ping at T0: expected at 13:00, late from 13:05


def make_heartbeat(org, name: str, *, paused: bool = False) -> Healthcheck:
    return healthcheck_create(
        organization=org,
        name=name,
        check_type=check_kind("heartbeat"),
        config=HOURLY,
        paused=paused,
        now=T0,
    )


def ping(check: Healthcheck, at: datetime, kind: PingKind = PingKind.SUCCESS, body: bytes = b"") -> None:
    answer = ping_record(
        ping_id=Heartbeat.objects.get(pk=check.pk).ping_id,
        kind=kind,
        exit_status=None,
        body=body,
        source="192.0.2.1",
        user_agent="cron",
        now=at,
    )
    assert answer == heartbeats.PingAnswer(found=True)


def statuses(checks: list[Healthcheck]) -> list[str]:
    by_id = dict(Healthcheck.objects.filter(pk__in=[c.pk for c in checks]).values_list("pk", "status"))
    return [by_id[c.pk] for c in checks]


def test_a_sweep_decides_a_mix_of_due_not_due_paused_and_pinged(org):
    late, on_time, failed, paused, silent = (
        make_heartbeat(org, name, paused=name == "paused")
        for name in ("late", "on time", "failed", "paused", "silent")
    )
    for check in (late, on_time, paused):
        ping(check, T0)
    ping(failed, T0, PingKind.FAIL, b"disk full\n")
    heartbeats_judge(now=T0)
    assert statuses([late, on_time, failed, paused, silent]) == ["up", "up", "down", "paused", "pending"]
    ping(on_time, DUE - timedelta(minutes=10))

    heartbeats_judge(now=DUE)

    assert statuses([late, on_time, failed, paused, silent]) == ["down", "up", "down", "paused", "pending"]
    assert Healthcheck.objects.get(pk=failed.pk).cause_kind == "heartbeat_late"
    # The paused one is looked at (its pings counted) and never awaited.
    assert Heartbeat.objects.get(pk=paused.pk).due_at is None
    assert Heartbeat.objects.filter(pk=paused.pk).values_list("ping_count", "judged_count").get() == (1, 1)
    assert StatusChange.objects.filter(healthcheck=late, to_status="down").get().effective_at == DUE


def test_a_sweep_larger_than_a_batch_judges_every_heartbeat(org):
    checks = [make_heartbeat(org, f"job {i}") for i in range(7)]
    for check in checks:
        ping(check, T0)

    assert heartbeats_judge(now=T0, batch=3) == 7

    assert statuses(checks) == ["up"] * 7
    assert heartbeats_judge(now=DUE, batch=3) == 7
    assert statuses(checks) == ["down"] * 7
    assert StatusChange.objects.filter(to_status="down").count() == 7


def test_the_queries_of_a_sweep_do_not_grow_with_its_heartbeats(org, django_assert_max_num_queries):
    checks = [make_heartbeat(org, f"job {i}") for i in range(40)]
    for check in checks:
        ping(check, T0)
    heartbeats_judge(now=T0)
    for check in checks:
        ping(check, T0 + timedelta(minutes=1))

    # Ids, the counts and checks with their last ping's id, the pings, one update; and the empty
    # second look at each index. No status changed, so nothing else is written.
    with django_assert_max_num_queries(8):
        assert heartbeats_judge(now=T0 + timedelta(minutes=1)) == 40

    assert Heartbeat.objects.filter(ping_count__gt=0).exclude(judged_count=2).count() == 0


def test_a_ping_during_the_sweep_is_judged_by_the_next(org, monkeypatch):
    check = make_heartbeat(org, "backup")
    ping(check, T0)
    read = heartbeats._read

    def read_then_ping(ids: list[int]) -> list[heartbeats._Seen]:
        seen = read(ids)
        # The job's failure lands after the sweep read the heartbeat, before it writes.
        ping(check, T0 + timedelta(seconds=1), PingKind.FAIL, b"exit 3\n")
        return seen

    monkeypatch.setattr(heartbeats, "_read", read_then_ping)
    heartbeats_judge(now=T0 + timedelta(seconds=1))
    monkeypatch.undo()

    assert statuses([check]) == ["up"]
    assert Heartbeat.objects.filter(pk=check.pk, ping_count=2, judged_count=1).exists()
    heartbeats_judge(now=T0 + timedelta(seconds=2))
    assert statuses([check]) == ["down"]
    assert Healthcheck.objects.get(pk=check.pk).cause_reason == "The job failed: exit 3"


def test_a_pause_during_the_sweep_wins_and_no_change_is_written(org, monkeypatch):
    check = make_heartbeat(org, "backup")
    ping(check, T0)
    heartbeats_judge(now=T0)
    read = heartbeats._read

    def read_then_pause(ids: list[int]) -> list[heartbeats._Seen]:
        seen = read(ids)
        healthcheck_pause(healthcheck=Healthcheck.objects.get(pk=check.pk), now=DUE)
        return seen

    monkeypatch.setattr(heartbeats, "_read", read_then_pause)
    heartbeats_judge(now=DUE)

    assert statuses([check]) == ["paused"]
    assert list(StatusChange.objects.filter(healthcheck=check).values_list("to_status", flat=True)) == [
        "paused",
        "up",
    ]


def test_a_sweep_racing_another_writes_one_change(org, monkeypatch):
    check = make_heartbeat(org, "backup")
    ping(check, T0)
    heartbeats_judge(now=T0)
    read = heartbeats._read

    def read_then_let_another_sweep_run(ids: list[int]) -> list[heartbeats._Seen]:
        seen = read(ids)
        # Two beat workers at once: the other one decides the same heartbeat first.
        monkeypatch.setattr(heartbeats, "_read", read)
        heartbeats_judge(now=DUE)
        return seen

    monkeypatch.setattr(heartbeats, "_read", read_then_let_another_sweep_run)
    heartbeats_judge(now=DUE)

    assert statuses([check]) == ["down"]
    assert StatusChange.objects.filter(healthcheck=check, to_status="down").count() == 1


def test_an_unknown_ping_id_is_not_found(org):
    answer = ping_record(
        ping_id=uuid.uuid4(),
        kind=PingKind.SUCCESS,
        exit_status=None,
        body=b"",
        source=None,
        user_agent="",
        now=T0,
    )

    assert not answer.found


def test_the_61st_ping_of_a_minute_is_refused_and_the_next_minute_takes_pings_again(org):
    check = make_heartbeat(org, "chatty")
    ping_id = Heartbeat.objects.get(pk=check.pk).ping_id

    def send(at: datetime) -> heartbeats.PingAnswer:
        return ping_record(
            ping_id=ping_id,
            kind=PingKind.SUCCESS,
            exit_status=None,
            body=b"",
            source=None,
            user_agent="",
            now=at,
        )

    answers = [send(T0 + timedelta(milliseconds=i)) for i in range(61)]

    assert answers[-2:] == [
        heartbeats.PingAnswer(found=True),
        heartbeats.PingAnswer(found=True, limited=True),
    ]
    assert Heartbeat.objects.get(pk=check.pk).ping_count == 60
    assert send(T0 + timedelta(seconds=60)) == heartbeats.PingAnswer(found=True)


def test_a_resumed_heartbeat_whose_job_stays_silent_goes_down_a_step_and_grace_after_the_resume(org):
    check = make_heartbeat(org, "nightly")
    ping(check, T0)
    heartbeats_judge(now=T0)
    healthcheck_pause(healthcheck=check, now=T0 + timedelta(minutes=1))
    resumed_at = T0 + timedelta(days=3)
    healthcheck_resume(healthcheck=Healthcheck.objects.get(pk=check.pk), now=resumed_at)

    heartbeats_judge(now=resumed_at + timedelta(seconds=1))
    assert statuses([check]) == ["pending"]  # pings from before the pause don't make it late at once

    heartbeats_judge(now=resumed_at + timedelta(hours=1, minutes=5, seconds=1))

    assert statuses([check]) == ["down"]
    assert Healthcheck.objects.get(pk=check.pk).cause_kind == "heartbeat_late"
