"""The heartbeat's schedule maths and verdict: pure tables, every instant given."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.checks.heartbeat import heartbeat_config_to_api, parse_heartbeat_config
from probes.config import ConfigError
from probes.heartbeats import Ping, PingKind, Schedule, due_by, first_lines, verdict
from probes.types import FailureKind, Status


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


PARIS = "Europe/Paris"


@pytest.mark.parametrize(
    ("schedule", "last", "expected"),
    [
        # A period counts from the last ping.
        (Schedule(period=3600), utc(2026, 1, 1, 10, 17), utc(2026, 1, 1, 11, 17)),
        # Cron in UTC: the next time strictly after the ping.
        (Schedule(cron="0 3 * * *"), utc(2026, 1, 1, 3, 0), utc(2026, 1, 2, 3, 0)),
        (Schedule(cron="0 3 * * *"), utc(2026, 1, 1, 2, 59), utc(2026, 1, 1, 3, 0)),
        # Month ends: the 31st skips the months without one; L is each month's last day.
        (Schedule(cron="0 0 31 * *"), utc(2026, 1, 31, 0, 0), utc(2026, 3, 31, 0, 0)),
        (Schedule(cron="0 0 L * *"), utc(2026, 1, 31, 0, 0), utc(2026, 2, 28, 0, 0)),
        (Schedule(cron="0 0 L * *"), utc(2028, 1, 31, 0, 0), utc(2028, 2, 29, 0, 0)),
        (Schedule(cron="0 0 1 * *"), utc(2026, 12, 31, 23, 59), utc(2027, 1, 1, 0, 0)),
        (Schedule(cron="0 0 29 2 *"), utc(2026, 1, 31, 0, 0), utc(2028, 2, 29, 0, 0)),
        # Paris is UTC+1 in winter, UTC+2 in summer: 03:00 local moves in UTC, not in Paris.
        (Schedule(cron="0 3 * * *", tz=PARIS), utc(2026, 3, 28, 2, 0), utc(2026, 3, 29, 1, 0)),
        (Schedule(cron="0 3 * * *", tz=PARIS), utc(2026, 10, 24, 1, 0), utc(2026, 10, 25, 2, 0)),
        # Spring forward (2026-03-29 02:00 → 03:00): 02:30 does not exist and fires at 03:00.
        (Schedule(cron="30 2 * * *", tz=PARIS), utc(2026, 3, 28, 12, 0), utc(2026, 3, 29, 1, 0)),
        # Fall back (2026-10-25 03:00 → 02:00): 02:30 happens twice and fires once, the first time.
        (Schedule(cron="30 2 * * *", tz=PARIS), utc(2026, 10, 24, 23, 0), utc(2026, 10, 25, 0, 30)),
        (Schedule(cron="30 2 * * *", tz=PARIS), utc(2026, 10, 25, 0, 30), utc(2026, 10, 26, 1, 30)),
        # Hourly across the fall back: a job every hour runs in the repeated hour too (02:15 CET).
        (Schedule(cron="15 * * * *", tz=PARIS), utc(2026, 10, 25, 0, 15), utc(2026, 10, 25, 1, 15)),
    ],
)
def test_next_expected(schedule: Schedule, last: datetime, expected: datetime) -> None:
    assert schedule.next_after(last) == expected
    assert due_by(schedule, 300, last) == (expected, expected + timedelta(seconds=300))


NIGHTLY = Schedule(cron="0 3 * * *", tz=PARIS)
# A success at 03:00 Paris on 2026-12-05 (UTC+1): next expected 2026-12-06 03:00, due 03:05.
PINGED = utc(2026, 12, 5, 2, 0, 4)
DUE = utc(2026, 12, 6, 2, 5)


def judge(last: Ping | None, now: datetime, max_run: int | None = None) -> tuple[Status, FailureKind | None]:
    found = verdict(schedule=NIGHTLY, grace=300, max_run_seconds=max_run, last=last, now=now)
    return found.status, found.kind


@pytest.mark.parametrize(
    ("now", "status"),
    [
        (DUE - timedelta(seconds=1), Status.UP),
        (DUE, Status.DOWN),
        (DUE + timedelta(hours=5), Status.DOWN),
    ],
)
def test_late_exactly_at_due_by(now: datetime, status: Status) -> None:
    assert judge(Ping(PINGED, PingKind.SUCCESS), now)[0] is status


def test_late_reason_names_times_in_the_schedule_zone() -> None:
    found = verdict(
        schedule=NIGHTLY, grace=300, max_run_seconds=None, last=Ping(PINGED, PingKind.SUCCESS), now=DUE
    )
    assert found.kind is FailureKind.HEARTBEAT_LATE
    assert found.reason == "No ping since 03:00; expected by 03:05 (Europe/Paris); last ping 2026-12-05 03:00"
    assert found.since == DUE


def test_never_pinged_is_pending() -> None:
    assert judge(None, DUE) == (Status.PENDING, None)


@pytest.mark.parametrize(
    ("ping", "kind"),
    [
        (Ping(PINGED, PingKind.FAIL, body="disk full\n\nat /backup\nmore\n"), FailureKind.JOB_FAILED),
        (Ping(PINGED, PingKind.EXIT, exit_status=2), FailureKind.JOB_FAILED),
        (Ping(PINGED, PingKind.EXIT, exit_status=0), None),
    ],
)
def test_failure_pings(ping: Ping, kind: FailureKind | None) -> None:
    assert judge(ping, PINGED + timedelta(minutes=1))[1] is kind


def test_failure_reason_quotes_the_first_lines() -> None:
    found = verdict(
        schedule=NIGHTLY,
        grace=300,
        max_run_seconds=None,
        last=Ping(PINGED, PingKind.FAIL, body="disk full\n\nat /backup\n"),
        now=PINGED,
    )
    assert found.reason == "The job failed: disk full / at /backup"
    exited = verdict(
        schedule=NIGHTLY, grace=300, max_run_seconds=None, last=Ping(PINGED, PingKind.EXIT, 3), now=PINGED
    )
    assert exited.reason == "The job exited with status 3"


def test_a_failed_job_that_stays_silent_becomes_late() -> None:
    assert judge(Ping(PINGED, PingKind.FAIL), DUE) == (Status.DOWN, FailureKind.HEARTBEAT_LATE)


@pytest.mark.parametrize(
    ("duration", "status"), [(600.0, Status.UP), (601.0, Status.DEGRADED), (None, Status.UP)]
)
def test_run_too_long(duration: float | None, status: Status) -> None:
    ping = Ping(PINGED, PingKind.SUCCESS, duration_seconds=duration)
    assert judge(ping, PINGED, max_run=600)[0] is status


def test_first_lines_caps() -> None:
    assert first_lines("a\n" * 50) == "a / a / a / a / a"
    assert len(first_lines("x" * 10_000)) == 500


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"schedule": {"cron": "0 0 30 2 *"}}, "schedule.cron"),
        ({"schedule": {"cron": "61 * * * *"}}, "schedule.cron"),
        ({"schedule": {"cron": "0 3 * * *", "tz": "Mars/Olympus"}}, "schedule.tz"),
        ({"schedule": {"cron": "0 3 * * *", "tz": "../../etc/passwd"}}, "schedule.tz"),
        ({"schedule": {"period": 10}}, "schedule.period"),
        ({"schedule": {"period": 3600}, "grace": 5}, "grace"),
        ({"schedule": {"period": 3600}, "maxRunSeconds": 0}, "maxRunSeconds"),
        ({"schedule": {"period": 3600, "cron": "0 3 * * *"}}, "schedule"),
        ({}, "schedule"),
        ({"schedule": {"period": 3600}, "headers": {"X": "y"}}, "headers"),
        ({"schedule": {"period": 3600}, "headers": {}}, "headers"),
    ],
)
def test_bad_configs_name_the_field(raw: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_heartbeat_config(raw)
    assert field in caught.value.errors


def test_config_round_trips() -> None:
    raw = {"schedule": {"cron": "0  3 * * *", "tz": PARIS}, "grace": 600, "maxRunSeconds": 900}
    api = heartbeat_config_to_api(parse_heartbeat_config(raw))
    assert api == {
        "schedule": {"cron": "0 3 * * *", "tz": PARIS},
        "grace": 600,
        "maxRunSeconds": 900,
    }
    assert heartbeat_config_to_api(parse_heartbeat_config(api)) == api
