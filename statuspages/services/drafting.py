"""Draft published incidents from monitors' status changes, for pages that ask (``StatusPage.draft_incidents``).

Statuspages reads monitors' StatusChange outbox with a cursor of its own (monitors never
imports statuspages, and alerts' cursor is alerts'): one transaction per batch locks the cursor
(SKIP LOCKED on PostgreSQL: a second reader reads nothing), reads the rows after it in id
order, applies them and moves it. Ids are handed out before commit, so the reader stops at a
missing id and passes it only once it has been missing for GAP_GRACE (a rolled-back row, or a
deleted healthcheck's); every row is applied exactly once.

A healthcheck going down drafts one incident per page showing it (naming its components and
the cause): a draft is never public. Its recovery adds a suggested "resolved" update to the
draft, while it is still a draft; once published, the words are the owner's.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Max

from monitors.models import StatusChange
from monitors.selectors import maintenance_active
from probes.types import Status
from statuspages.cache import page_changed
from statuspages.models import Component, IncidentUpdate, PublishedIncident, StatusChangeCursor, StatusPage
from statuspages.services.audit import audited, incident_snapshot

CURSOR = "drafts"
BATCH_SIZE = 500
GAP_GRACE = timedelta(seconds=60)
MAX_TITLE = 200


def _cursor() -> None:
    # Starts at the table's end: a page that turns drafting on gets drafts from then on, not from history.
    if not StatusChangeCursor.objects.filter(name=CURSOR).exists():
        end = StatusChange.objects.aggregate(end=Max("id"))["end"] or 0
        StatusChangeCursor.objects.get_or_create(name=CURSOR, defaults={"position": end})


def drafts_consume(*, now: datetime, limit: int = BATCH_SIZE) -> int:
    """Apply the next batch of status changes to drafted incidents; return how many rows were read (0: none, or another reader)."""
    _cursor()
    with transaction.atomic():
        cursor = StatusChangeCursor.objects.select_for_update(skip_locked=True).filter(name=CURSOR).first()
        if cursor is None:
            return 0
        rows = list(
            StatusChange.objects.filter(id__gt=cursor.position)
            .order_by("id")
            .only("id", "healthcheck_id", "at", "from_status", "to_status", "reason", "cause_reason")[:limit]
        )
        readable: list[StatusChange] = []
        position = cursor.position
        for row in rows:
            if row.pk != position + 1:
                if cursor.gap_at == position + 1 and cursor.gap_since and now - cursor.gap_since >= GAP_GRACE:
                    cursor.gap_at = cursor.gap_since = None  # given up on: rolled back, or deleted
                else:
                    if cursor.gap_at != position + 1:
                        cursor.gap_at, cursor.gap_since = position + 1, now
                    break
            readable.append(row)
            position = row.pk
        if len(readable) == len(rows):
            cursor.gap_at = cursor.gap_since = None
        _apply(readable)
        cursor.position = position
        cursor.save(update_fields=["position", "gap_at", "gap_since"])
    return len(readable)


def _apply(rows: list[StatusChange]) -> None:
    if not rows:
        return
    ids = {row.healthcheck_id for row in rows}
    components: dict[int, list[Component]] = defaultdict(list)
    for component in (
        Component.objects.filter(healthcheck_id__in=ids, page__draft_incidents=True)
        .select_related("page")
        .order_by("page_id", "position", "id")
    ):
        components[component.healthcheck_id].append(component)
    if not components:
        return
    for row in rows:
        shown = components.get(row.healthcheck_id)
        if not shown:
            continue
        if row.to_status == Status.DOWN:
            if maintenance_active(healthcheck_ids=[row.healthcheck_id], at=row.at):
                continue  # announced maintenance, not an incident
            _draft(row, shown)
        elif row.to_status == Status.UP:
            _suggest_resolved(row, shown)


def _by_page(components: list[Component]) -> dict[int, list[Component]]:
    pages: dict[int, list[Component]] = defaultdict(list)
    for component in components:
        pages[component.page_id].append(component)
    return pages


def _names(components: list[Component]) -> str:
    return ", ".join(component.display_name for component in components)


def _draft(row: StatusChange, shown: list[Component]) -> None:
    for page_id, components in _by_page(shown).items():
        waiting = PublishedIncident.with_drafts.filter(
            page_id=page_id, drafted_for_id=row.healthcheck_id, awaiting_recovery=True
        ).exists()
        if waiting:
            continue
        names = _names(components)
        cause = row.cause_reason or row.reason or "it failed its checks"
        at = row.at.strftime("%H:%M UTC")
        incident = PublishedIncident.with_drafts.create(
            page_id=page_id,
            title=f"{names} is down"[:MAX_TITLE],
            impact=PublishedIncident.Impact.MAJOR,
            status=PublishedIncident.Status.INVESTIGATING,
            created_at=row.at,
            updated_at=row.at,
            draft=True,
            drafted_for_id=row.healthcheck_id,
            awaiting_recovery=True,
        )
        incident.components.set(components)
        update = IncidentUpdate.objects.create(
            incident=incident,
            status=incident.status,
            body=f"{names} has been failing since {at}: {cause}. We are investigating.",
            created_at=row.at,
        )
        # Uptimy writes the draft (actor system): the page's owners see who drafted what they publish.
        _audit(incident, "incident.drafted", after={**incident_snapshot(incident), "body": update.body})
        page_changed(page_id)


def _audit(incident: PublishedIncident, action: str, **sides: Any) -> None:
    organization_id = StatusPage.objects.values_list("organization_id", flat=True).get(pk=incident.page_id)
    audited(organization_id, action, target=incident, name=incident.title, **sides)


def _suggest_resolved(row: StatusChange, shown: list[Component]) -> None:
    for page_id, components in _by_page(shown).items():
        incident = (
            PublishedIncident.with_drafts.select_for_update()
            .filter(page_id=page_id, drafted_for_id=row.healthcheck_id, awaiting_recovery=True)
            .first()
        )
        if incident is None:
            continue
        incident.awaiting_recovery = False
        if incident.draft:
            before: dict[str, Any] = {"status": incident.status, "resolved_at": None}
            minutes = max(1, round((row.at - incident.created_at).total_seconds() / 60))
            IncidentUpdate.objects.create(
                incident=incident,
                status=PublishedIncident.Status.RESOLVED,
                body=(
                    f"{_names(components)} is operational again since {row.at.strftime('%H:%M UTC')}, "
                    f"after about {minutes} minute{'s' if minutes != 1 else ''}."
                ),
                created_at=row.at,
            )
            incident.status = PublishedIncident.Status.RESOLVED
            incident.resolved_at = row.at
            incident.updated_at = row.at
        incident.save()
        if incident.draft:
            _audit(
                incident,
                "incident.resolved",
                before=before,
                after={"status": incident.status, "resolved_at": row.at.isoformat()},
            )
        page_changed(page_id)
