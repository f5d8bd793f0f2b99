"""Read monitors' outbox (status, cause and tool changes) into incidents, their timeline and notifications.

One transaction per batch: the cursors are locked (FOR UPDATE SKIP LOCKED on PostgreSQL: a
second consumer finds them taken and reads nothing), the rows are applied in the order they
happened, each gets a receipt, and the cursors move. A consumer killed at any point before the
commit leaves everything as it was; the next one reads the same rows. Nothing is read twice:
rows at or below a cursor's position are done, and rows above it carry a receipt (unique).

Ids are handed out before commit, so a row can commit after rows with higher ids were read:
the cursor's position never passes a missing id until it has been missing for GAP_GRACE, which
is far longer than a recording transaction lasts; rows above the gap are read meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction

from alerts import rules
from alerts.models import Incident, OutboxCursor, OutboxReceipt
from alerts.rules import Action, Decision, EventKind, NotificationKind, Severity
from alerts.services.incidents import close_orphaned, incident_event_add, incident_resolve
from alerts.services.notifications import Notifier, healthcheck_details
from monitors.models import CauseChange, StatusChange, ToolChange
from monitors.selectors import maintenance_active

GAP_GRACE = timedelta(minutes=5)
BATCH_SIZE = 500


OutboxRow = StatusChange | CauseChange | ToolChange


@dataclass(frozen=True, slots=True)
class Source:
    """One outbox table: its cursor's name, its model, and its rank among rows of the same moment."""

    name: str
    model: type[OutboxRow]
    # At the same moment, a status change goes first: a tool change recorded with a check going
    # down is then part of the incident, not a notification of its own.
    rank: int


SOURCES = (
    Source("status_change", StatusChange, 0),
    Source("cause_change", CauseChange, 1),
    Source("tool_change", ToolChange, 2),
)


def outbox_consume(*, now: datetime, limit: int = BATCH_SIZE, storm_threshold: int | None = None) -> int:
    """Apply the next batch of outbox rows (at most ``limit`` per table); return how many were applied.

    Returns 0 when another consumer holds the cursors. Incidents whose healthcheck was deleted
    are closed in the same transaction.
    """
    _ensure_cursors()
    with transaction.atomic():
        cursors = {
            cursor.source: cursor
            for cursor in OutboxCursor.objects.select_for_update(skip_locked=True)
            .filter(source__in=[source.name for source in SOURCES])
            .order_by("source")
        }
        if len(cursors) < len(SOURCES):
            return 0  # another consumer is reading
        notifier = Notifier(now=now, threshold=storm_threshold)
        rows = _next_rows(cursors, limit)
        _Applier(notifier, rows).apply()
        OutboxReceipt.objects.bulk_create(
            [OutboxReceipt(source=source.name, source_id=row.pk) for source, row in rows]
        )
        for source in SOURCES:
            _advance(cursors[source.name], source, now)
        close_orphaned(notifier=notifier, now=now)
    return len(rows)


def _ensure_cursors() -> None:
    # The migration creates them (at the tables' ends); a flushed test database has none.
    OutboxCursor.objects.bulk_create(
        [OutboxCursor(source=source.name) for source in SOURCES], ignore_conflicts=True
    )


def _next_rows(cursors: dict[str, OutboxCursor], limit: int) -> list[tuple[Source, OutboxRow]]:
    """Return the unread rows in the order they happened, up to the moment every table was read to."""
    fetched: list[tuple[Source, OutboxRow]] = []
    cutoff: datetime | None = None
    for source in SOURCES:
        position = cursors[source.name].position
        read = OutboxReceipt.objects.filter(source=source.name, source_id__gt=position).values("source_id")
        rows: list[OutboxRow] = list(
            source.model._default_manager.filter(id__gt=position)
            .exclude(id__in=read)
            .select_related("healthcheck")
            .order_by("id")[:limit]
        )
        fetched.extend((source, row) for row in rows)
        if len(rows) == limit:
            # This table has more: rows of the others after its last are for the next batch.
            last = max(row.at for row in rows)
            cutoff = last if cutoff is None else min(cutoff, last)
    if cutoff is not None:
        fetched = [(source, row) for source, row in fetched if row.at <= cutoff]
    fetched.sort(key=lambda item: (item[1].at, item[0].rank, item[1].pk))
    return fetched


def _advance(cursor: OutboxCursor, source: Source, now: datetime) -> None:
    """Move the cursor over its contiguous receipts, and over a gap missing for GAP_GRACE; drop the receipts passed.

    A gap is passed only while its ids are still absent from the table: a row that is there but
    unread (a batch's cut left it for the next) is never passed, however long it waits.
    """
    position = cursor.position
    read = OutboxReceipt.objects.filter(source=cursor.source, source_id__gt=position).order_by("source_id")
    gap_at, gap_since = cursor.gap_at, cursor.gap_since
    for source_id in read.values_list("source_id", flat=True).iterator():
        if source_id == position + 1:
            position = source_id
            continue
        if (
            gap_at == position + 1
            and gap_since is not None
            and now - gap_since >= GAP_GRACE
            and not source.model._default_manager.filter(id__gt=position, id__lt=source_id).exists()
        ):
            position = source_id  # given up on: rolled back, or its healthcheck deleted it
            gap_at = gap_since = None
            continue
        if gap_at != position + 1:
            gap_at, gap_since = position + 1, now
        break
    else:
        gap_at = gap_since = None
    if (position, gap_at, gap_since) != (cursor.position, cursor.gap_at, cursor.gap_since):
        cursor.position, cursor.gap_at, cursor.gap_since = position, gap_at, gap_since
        cursor.save(update_fields=["position", "gap_at", "gap_since"])
        OutboxReceipt.objects.filter(source=cursor.source, source_id__lte=position).delete()


class _Applier:
    """Apply one batch of rows to the incidents of their healthchecks, in order."""

    def __init__(self, notifier: Notifier, rows: Sequence[tuple[Source, OutboxRow]]) -> None:
        self.notifier = notifier
        self.rows = rows
        ids = {row.healthcheck_id for _, row in rows}
        # Locked (in id order, as every locker of several incidents): acknowledging through the
        # API changes the same rows.
        self.open: dict[int, Incident] = {
            incident.healthcheck_id: incident
            for incident in Incident.objects.select_for_update()
            .filter(healthcheck_id__in=ids, resolved_at__isnull=True)
            .order_by("id")
            if incident.healthcheck_id is not None
        }
        notifier.preload_policies(ids)
        self.ids = ids
        # Checks in a maintenance window as this batch happened (its rows are seconds apart):
        # their failures open no incident and notify nobody; incidents_open_missing opens one
        # for a check still failing once the window is over. Recoveries are still told.
        self.maintained = (
            set(maintenance_active(healthcheck_ids=ids, at=max(row.at for _, row in rows))) if rows else set()
        )

    def apply(self) -> None:
        for _, row in self.rows:
            incident = self.open.get(row.healthcheck_id)
            severity = Severity(incident.severity) if incident is not None else None
            if isinstance(row, StatusChange):
                self._status(row, rules.on_status(open_severity=severity, to_status=row.to_status), incident)
            elif isinstance(row, CauseChange):
                self._cause(row, rules.on_cause(open_severity=severity), incident)
            else:
                decision = rules.on_tools(open_severity=severity, removes_required=_removes_required(row))
                self._tools(row, decision, incident)

    def _status(self, row: StatusChange, decision: Decision, incident: Incident | None) -> None:
        action, details = decision.action, _status_details(row)
        quiet = row.healthcheck_id in self.maintained
        if action is Action.OPEN and quiet:
            return
        if action is Action.OPEN:
            assert decision.severity is not None
            healthcheck = row.healthcheck
            incident = Incident(
                organization_id=healthcheck.organization_id,
                healthcheck=healthcheck,
                healthcheck_public_id=healthcheck.public_id,
                healthcheck_name=healthcheck.name,
                severity=decision.severity.value,
                opened_at=row.at,
            )
            self._set_cause(incident, row)
            incident.save(force_insert=True)
            self.open[healthcheck.pk] = incident
            self._event(incident, EventKind.OPENED, row.at, NotificationKind.OPENED, details)
        elif action is Action.ESCALATE:
            assert incident is not None
            incident.severity = Severity.CRITICAL.value
            self._set_cause(incident, row)
            incident.save()
            self._event(
                incident, EventKind.ESCALATED, row.at, None if quiet else NotificationKind.ESCALATED, details
            )
        elif action is Action.NOTE_STATUS:
            assert incident is not None
            if rules.severity_of(row.to_status) is not None:
                self._set_cause(incident, row)
                incident.save()
            self._event(incident, EventKind.STATUS_CHANGED, row.at, None, details)
        elif action is Action.RESOLVE:
            assert incident is not None
            assert decision.resolution is not None
            incident_resolve(
                incident=incident,
                resolution=decision.resolution,
                at=row.at,
                notifier=self.notifier,
                details=details,
            )
            del self.open[row.healthcheck_id]

    def _cause(self, row: CauseChange, decision: Decision, incident: Incident | None) -> None:
        if decision.action is not Action.CHANGE_CAUSE:
            return
        assert incident is not None
        # A cause change carries the failure's own sentence (monitors.rules.cause_of); the summary
        # stays the last status change's: what the verdict last said over the regions.
        incident.cause_kind = row.to_kind
        incident.cause_reason = row.reason
        incident.cause_regions = dict(row.failed_regions)
        incident.cause_region_reasons = dict(row.failed_reasons)
        incident.cause_missing_tools = list(row.missing_tools)
        # A cause change is a new cause: it begins with the row (the recorder's cause_since too).
        incident.cause_since = row.at
        incident.save()
        details = {"from_kind": row.from_kind, "to_kind": row.to_kind, "previous_reason": row.previous_reason}
        quiet = row.healthcheck_id in self.maintained
        self._event(
            incident,
            EventKind.CAUSE_CHANGED,
            row.at,
            None if quiet else NotificationKind.CAUSE_CHANGED,
            details,
        )

    def _tools(self, row: ToolChange, decision: Decision, incident: Incident | None) -> None:
        if decision.action is Action.NOTE_TOOLS:
            assert incident is not None
            self._event(incident, EventKind.TOOLS_CHANGED, row.at, None, _tool_details(row))
        elif decision.action is Action.NOTIFY_TOOLS and row.healthcheck_id not in self.maintained:
            healthcheck = row.healthcheck
            self.notifier.notify(
                NotificationKind.TOOLS_CHANGED,
                organization_id=healthcheck.organization_id,
                at=row.at,
                details={**healthcheck_details(healthcheck), **_tool_details(row)},
                healthcheck_id=healthcheck.pk,
            )

    def _set_cause(self, incident: Incident, row: StatusChange) -> None:
        # The recorder decided the cause with the status (monitors.rules.cause_of); a row that
        # carries no sentence (written by hand) has the verdict's summary stand in.
        incident.cause_kind = row.cause_kind
        incident.cause_summary = row.reason
        incident.cause_reason = row.cause_reason or row.reason
        incident.cause_regions = dict(row.failed_regions)
        incident.cause_region_reasons = dict(row.failed_reasons)
        incident.cause_missing_tools = list(row.missing_tools)
        # Rows written before the recorder kept it: the change's own moment.
        incident.cause_since = row.cause_since or row.at

    def _event(
        self,
        incident: Incident,
        kind: EventKind,
        at: datetime,
        notification: NotificationKind | None,
        details: dict[str, Any],
    ) -> None:
        incident_event_add(self.notifier, incident, kind, at, notification, details)


def _removes_required(row: ToolChange) -> bool:
    """Return whether the change removed a tool the check requires (its config's ``requiredTools``)."""
    required = (
        row.healthcheck.config.get("requiredTools") if isinstance(row.healthcheck.config, dict) else None
    )
    if not isinstance(required, list) or not required:
        return False
    return bool(set(row.removed) & {name for name in required if isinstance(name, str)})


def _status_details(row: StatusChange) -> dict[str, Any]:
    return {"from": row.from_status, "to": row.to_status, "reason": row.reason}


def _tool_details(row: ToolChange) -> dict[str, Any]:
    return {
        "removed": list(row.removed),
        "removed_count": row.removed_count,
        "added": list(row.added),
        "added_count": row.added_count,
        "new_required_inputs": dict(row.new_required_inputs),
        "new_required_inputs_count": row.new_required_inputs_count,
    }
