"""Take heartbeat pings fast, and judge heartbeats on the beat: the status change goes to the same outbox.

A ping is one indexed read (the ping id), a rate-limit step, one INSERT and one UPDATE of the
narrow Heartbeat row: never a lock on the healthcheck row. The beat's judge
(:func:`heartbeats_judge`) takes the heartbeats pinged since it last looked or whose due-by has
passed, locks their healthchecks and applies :func:`probes.heartbeats.verdict`, writing a
StatusChange (or a CauseChange) like the recorder's: alerts, status pages and reports read them
as any other check's. ``effective_at`` is where the downtime really began or ended (the due-by
of a late heartbeat, the failing or recovering ping), since there are no results to bound it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Subquery

from monitors.errors import ServiceError
from monitors.models import CauseChange, Healthcheck, Heartbeat, Ping, Plan, StatusChange
from probes.checks import check_kind
from probes.checks.heartbeat import HeartbeatConfig
from probes.heartbeats import Ping as PingValue
from probes.heartbeats import PingKind, Verdict, verdict
from probes.text import storable
from probes.types import Status

MAX_BODY_BYTES = 100 * 1024
PINGS_PER_MINUTE = 60
# A sweep's batch (one IN list, one CASE update) and its most per call: the rest waits a tick.
JUDGE_BATCH = 1000
JUDGE_LIMIT = 20_000
# Pings kept per heartbeat past which the oldest go, whatever the plan's retention.
PINGS_KEPT = 1000


@dataclass(frozen=True, slots=True)
class PingAnswer:
    """What the ping endpoint answers: found (else 404) and whether the rate limit refused it."""

    found: bool
    limited: bool = False


def ping_record(
    *,
    ping_id: uuid.UUID,
    kind: PingKind,
    exit_status: int | None,
    body: bytes,
    source: str | None,
    user_agent: str,
    now: datetime,
) -> PingAnswer:
    """Store one ping of the heartbeat ``ping_id`` and mark it for the judge; no healthcheck lock.

    One indexed read, then one short write transaction: an UPDATE of the heartbeat's row that
    counts the ping and takes its rate-limit slot (refused when its minute is full: nothing is
    written), and the Ping's INSERT. Plain SQL for the two writes: the ORM spent more building
    them than the database spent running them.
    """
    row = Heartbeat.objects.filter(ping_id=ping_id).values_list("healthcheck_id", "last_start_at")[:1]
    found = list(row)
    if not found:
        return PingAnswer(found=False)
    hc_id, last_start_at = found[0]
    text = storable(body[:MAX_BODY_BYTES].decode("utf-8", errors="replace"))
    duration = None
    if kind is not PingKind.START and last_start_at is not None and last_start_at <= now:
        duration = (now - last_start_at).total_seconds()
    at = _db_datetime(now)
    window_open = _db_datetime(now - timedelta(seconds=PING_WINDOW_SECONDS))
    with transaction.atomic(), connection.cursor() as cursor:
        # The commit waits for the WAL's flush (no synchronous_commit off, though it took pings
        # from 242/s to 639/s): an OK answered is a ping kept. A nightly job's lost ping is not
        # counted again until tomorrow, so a crash would alarm the customer falsely.
        cursor.execute(
            _PING_UPDATE,
            [
                at if kind is PingKind.START else None,
                window_open,
                window_open,
                at,
                hc_id,
                window_open,
                PINGS_PER_MINUTE,
            ],
        )
        if cursor.rowcount == 0:
            return PingAnswer(found=True, limited=True)
        cursor.execute(_PING_INSERT, [hc_id, at, kind.value, exit_status, source, user_agent, text, duration])
    return PingAnswer(found=True)


PING_WINDOW_SECONDS = 60
_HB = Heartbeat._meta.db_table
# A window that opened more than a minute ago (or never) restarts at this ping; a full one refuses it.
_PING_UPDATE = f"""
UPDATE {_HB} SET
    ping_count = ping_count + 1,
    last_start_at = %s,
    window_count = CASE WHEN window_start > %s THEN window_count + 1 ELSE 1 END,
    window_start = CASE WHEN window_start > %s THEN window_start ELSE %s END
WHERE healthcheck_id = %s AND (window_start IS NULL OR window_start <= %s OR window_count < %s)
"""  # noqa: S608 - the table name is the model's; every value is a parameter
_PING_INSERT = f"""
INSERT INTO {Ping._meta.db_table} (healthcheck_id, at, kind, exit_status, source, user_agent, body, duration_seconds)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
"""  # noqa: S608 - the table name is the model's; every value is a parameter


def _db_datetime(value: datetime) -> Any:
    """Return an aware datetime as the database's column takes it (SQLite's text, PostgreSQL's timestamptz)."""
    return connection.ops.adapt_datetimefield_value(value)


def heartbeat_rotate(*, healthcheck: Healthcheck) -> Healthcheck:
    """Give the heartbeat a new ping id: the old URL answers 404 from now on."""
    if not Heartbeat.objects.filter(pk=healthcheck.pk).update(ping_id=uuid.uuid4()):
        raise ServiceError("type", "Only a heartbeat has a ping URL to rotate.")
    return healthcheck


def heartbeat_resumed(*, healthcheck: Healthcheck, now: datetime) -> None:
    """Expect the job again from ``now``: due one step of its schedule plus the grace after the resume.

    A pause drops the due-by (the judge never awaits a paused check), so without this a resumed
    heartbeat whose job had died would wait for a ping forever, silent. Pings from before the
    pause don't make it late the moment it resumes either: the job gets a whole step and grace.
    """
    config = _config(healthcheck.type, healthcheck.config)
    if config is None:
        return
    due = config.schedule.next_after(now) + timedelta(seconds=config.grace)
    Heartbeat.objects.filter(pk=healthcheck.pk).update(due_at=due)


def heartbeats_judge(*, now: datetime, batch: int = JUDGE_BATCH, limit: int = JUDGE_LIMIT) -> int:
    """Judge the heartbeats past their due-by, then those pinged since last judged; return how many.

    Batches of ``batch`` until none is left or ``limit`` were judged (the next sweep takes the
    rest): the late ones first, since their lateness is what the sweep's cadence bounds.
    """
    judged = 0
    for pick in (_due, _pinged):
        while judged < limit:
            ids = pick(now, min(batch, limit - judged))
            if not ids:
                break
            judged += _judge_batch(ids, now)
            if len(ids) < batch:
                break
    return judged


def _due(now: datetime, count: int) -> list[int]:
    # heartbeat_due: an index range over due_at, never a scan of every heartbeat.
    return list(
        Heartbeat.objects.filter(due_at__lte=now).order_by("due_at").values_list("pk", flat=True)[:count]
    )


def _pinged(now: datetime, count: int) -> list[int]:
    # heartbeat_pinged: the partial index holds exactly the rows this condition selects.
    return list(
        Heartbeat.objects.filter(ping_count__gt=F("judged_count")).values_list("pk", flat=True)[:count]
    )


@dataclass(frozen=True, slots=True)
class _Seen:
    """One heartbeat as the sweep read it: its count, its check's columns, and its last completion ping."""

    hc_id: int
    ping_count: int
    type: int
    config: dict[str, object]
    paused: bool
    status: str
    cause_kind: str
    cause_reason: str
    last: PingValue | None


def _judge_batch(ids: list[int], now: datetime) -> int:
    """Judge ``ids`` with a few set-based queries: read in bulk, decide in pure code, write what changed.

    No healthcheck row is locked while reading. ``judged_count`` becomes the count read *before*
    the pings were, so a ping that lands during the sweep leaves ``ping_count`` above it and the
    next sweep judges that heartbeat again. A status or cause is written by a conditional UPDATE
    (the status, cause and pause the sweep read must still hold), so a pause, a type change or a
    concurrent sweep that got there first wins, and this sweep writes neither the row nor a
    StatusChange for it: the next sweep decides from what is there then.
    """
    seen = _read(ids)
    schedule_of: dict[int, tuple[datetime | None, bool]] = {}
    changes: list[tuple[_Seen, Verdict]] = []
    for row in seen:
        config = _config(row.type, row.config)
        if row.paused or config is None:
            schedule_of[row.hc_id] = (None, False)
            continue
        found = verdict(
            schedule=config.schedule,
            grace=config.grace,
            max_run_seconds=config.max_run_seconds,
            last=row.last,
            now=now,
        )
        schedule_of[row.hc_id] = (found.due_at, True)
        kind = found.kind.value if found.kind else ""
        if found.status != row.status or (
            kind and (kind != row.cause_kind or found.reason != row.cause_reason)
        ):
            changes.append((row, found))
    with transaction.atomic():
        _write_judged([(row.hc_id, row.ping_count, schedule_of[row.hc_id][0]) for row in seen])
        _write_changes(changes, now)
    return len(ids)


def _write_judged(rows: list[tuple[int, int, datetime | None]]) -> None:
    """Set each heartbeat's judged_count and due_at in one UPDATE … FROM (VALUES …), on SQLite and PostgreSQL alike.

    Plain SQL: the ORM's CASE of a When per row took 0.3 ms a heartbeat to build, a hundred times
    what the database took to run it.
    """
    if not rows:
        return
    if connection.vendor == "postgresql":
        # PostgreSQL types a VALUES list from its values; an all-NULL column would be text.
        row_sql = "(CAST(%s AS bigint), CAST(%s AS bigint), CAST(%s AS timestamptz))"
    else:
        row_sql = "(%s, %s, %s)"
    params: list[Any] = []
    for pk, count, due in rows:
        params += [pk, count, None if due is None else _db_datetime(due)]
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_HB} SET judged_count = v.column2, due_at = v.column3 "  # noqa: S608 - the model's table
            f"FROM (VALUES {', '.join([row_sql] * len(rows))}) AS v WHERE healthcheck_id = v.column1",
            params,
        )


def _read(ids: list[int]) -> list[_Seen]:
    # Counts first, pings after: every ping counted in ``ping_count`` is committed, so the last
    # ping read is at least as new as the count says.
    last_ping = (
        Ping.objects.filter(healthcheck_id=OuterRef("pk"))
        .exclude(kind=PingKind.START.value)
        .order_by("-at", "-id")
        .values("id")[:1]
    )
    rows = list(
        Heartbeat.objects.filter(pk__in=ids)
        .annotate(last_id=Subquery(last_ping))
        .values_list(
            "pk",
            "ping_count",
            "healthcheck__type",
            "healthcheck__config",
            "healthcheck__paused",
            "healthcheck__status",
            "healthcheck__cause_kind",
            "healthcheck__cause_reason",
            "last_id",
        )
    )
    pings = {
        ping_pk: PingValue(
            at=at, kind=PingKind(kind), exit_status=exit_status, body=body, duration_seconds=duration
        )
        for ping_pk, at, kind, exit_status, body, duration in Ping.objects.filter(
            pk__in=[row[-1] for row in rows if row[-1] is not None]
        ).values_list("pk", "at", "kind", "exit_status", "body", "duration_seconds")
    }
    return [
        _Seen(pk, count, type_, config, paused, status, cause_kind, cause_reason, pings.get(last_id))
        for pk, count, type_, config, paused, status, cause_kind, cause_reason, last_id in rows
    ]


def _config(type_: int, raw: dict[str, object]) -> HeartbeatConfig | None:
    """Return the heartbeat's parsed config, or None when the check is no longer a heartbeat."""
    try:
        config = check_kind(type_).parse(raw)
    except ValueError:  # an unknown type (UnknownCheckKind) or a config that no longer parses (ConfigError)
        return None
    return config if isinstance(config, HeartbeatConfig) else None


def _write_changes(changes: list[tuple[_Seen, Verdict]], now: datetime) -> None:
    """Write each changed status or cause if the row still reads as the sweep saw it, with its outbox row."""
    status_changes: list[StatusChange] = []
    cause_changes: list[CauseChange] = []
    for row, found in changes:
        kind = found.kind.value if found.kind else ""
        still = Healthcheck.objects.filter(
            pk=row.hc_id,
            type=row.type,
            paused=False,
            status=row.status,
            cause_kind=row.cause_kind,
            cause_reason=row.cause_reason,
        )
        if found.status != row.status:
            if not still.update(
                status=found.status,
                status_changed_at=now,
                cause_kind=kind,
                cause_reason=found.reason if kind else "",
                cause_since=found.since if kind else None,
            ):
                continue
            status_changes.append(
                StatusChange(
                    healthcheck_id=row.hc_id,
                    at=now,
                    from_status=row.status,
                    to_status=found.status,
                    reason=found.reason,
                    cause_kind=kind,
                    cause_reason=found.reason,
                    cause_since=found.since if kind else None,
                    effective_at=found.since if Status.DOWN in (found.status, row.status) else None,
                )
            )
            continue
        if not still.update(cause_kind=kind, cause_reason=found.reason, cause_since=found.since):
            continue
        if kind != row.cause_kind:
            cause_changes.append(
                CauseChange(
                    healthcheck_id=row.hc_id,
                    at=now,
                    status=row.status,
                    from_kind=row.cause_kind,
                    to_kind=kind,
                    reason=found.reason,
                    previous_reason=row.cause_reason,
                )
            )
    StatusChange.objects.bulk_create(status_changes)
    CauseChange.objects.bulk_create(cause_changes)


def pings_prune(*, now: datetime, keep: int = PINGS_KEPT, batch_size: int = 10_000) -> int:
    """Delete pings older than their plan's retention, and each heartbeat's beyond its ``keep`` newest.

    The last completion ping of each heartbeat always stays, however old: it is what the judge
    decides from (a yearly job's ping outlives a 30-day retention). Deletes go in batches of
    short transactions, as the results' pruning does. Returns the number of pings deleted.
    """
    newer_completion = (
        Ping.objects.filter(healthcheck_id=OuterRef("healthcheck_id"))
        .exclude(kind=PingKind.START.value)
        .filter(Q(at__gt=OuterRef("at")) | Q(at=OuterRef("at"), pk__gt=OuterRef("pk")))
    )
    prunable = Q(kind=PingKind.START.value) | Q(Exists(newer_completion))
    deleted = 0
    for plan in Plan.objects.all():
        cutoff = now - timedelta(days=plan.retention_days)
        deleted += _delete_in_batches(
            Ping.objects.filter(healthcheck__organization__plan=plan, at__lt=cutoff).filter(prunable),
            batch_size,
        )
    # Only a heartbeat pinged more than ``keep`` times ever can hold more than ``keep`` pings.
    for hc_id in list(Heartbeat.objects.filter(ping_count__gt=keep).values_list("pk", flat=True)):
        oldest_kept = (
            Ping.objects.filter(healthcheck_id=hc_id)
            .order_by("-at", "-id")
            .values_list("at", "id")[keep - 1 : keep]
        ).first()
        if oldest_kept is None:
            continue
        at, ping_pk = oldest_kept
        older = Ping.objects.filter(healthcheck_id=hc_id).filter(Q(at__lt=at) | Q(at=at, pk__lt=ping_pk))
        deleted += _delete_in_batches(older.filter(prunable), batch_size)
    return deleted


def _delete_in_batches(pings: QuerySet[Ping], batch_size: int) -> int:
    deleted = 0
    while ids := list(pings.values_list("pk", flat=True)[:batch_size]):
        deleted += Ping.objects.filter(pk__in=ids).delete()[0]
    return deleted
