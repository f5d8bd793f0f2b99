"""Decide what a page's subscribers are told, and fan each notice out to one delivery per subscriber.

A notice is written in the transaction of the change it tells (a published incident, an
update, a resolution), or by the maintenance scan for a window's occurrence scheduled, started
or completed; ``Notice.key`` is unique per page, so nothing is told twice. The fan-out then
writes the deliveries a chunk of subscribers at a time (FANOUT_CHUNK rows, one short
transaction each, ``ignore_conflicts`` on the unique (notice, subscriber)): a page with 10,000
subscribers costs ten small transactions, never one big one in the owner's request.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef

from monitors.maintenance import Occurrence, active_at, next_occurrence, windows_ended
from monitors.models import HealthcheckTag, MaintenanceWindow
from monitors.selectors import LiveWindow, maintenance_live
from monitors.timestamps import iso_or_none
from statuspages.models import (
    Component,
    IncidentUpdate,
    Notice,
    NoticeDelivery,
    PublishedIncident,
    StatusPage,
    Subscriber,
)

FANOUT_CHUNK = 1000
# A window's next occurrence is announced once it is this close.
SCHEDULED_HORIZON = timedelta(days=7)
# How far back the scan looks for occurrences that ended (it runs every tick; this covers a pause).
COMPLETED_LOOKBACK = timedelta(hours=6)

Kind = Notice.Kind


def _page_data(page: StatusPage) -> dict[str, Any]:
    return {
        "id": str(page.public_id),
        "title": page.title,
        "url": str(settings.UPTIMY_PUBLIC_URL).rstrip("/") + f"/s/{page.slug}/",
        "time_zone": page.time_zone,
    }


def _components_data(components: Iterable[Component]) -> list[dict[str, str]]:
    return [{"id": str(c.public_id), "name": c.display_name} for c in components]


def incident_notice(
    *, incident: PublishedIncident, kind: str, update: IncidentUpdate | None, now: datetime, key: str
) -> Notice | None:
    """Tell the page's subscribers of a published incident's change; nothing for a draft. Call inside the change's transaction."""
    if incident.draft:
        return None
    page = incident.page
    components = list(incident.components.all())
    data = {
        "page": _page_data(page),
        "incident": {
            "id": str(incident.public_id),
            "title": incident.title,
            "status": incident.status,
            "impact": incident.impact,
            "url": _page_data(page)["url"],
            "created_at": iso_or_none(incident.created_at),
            "resolved_at": iso_or_none(incident.resolved_at),
            "components": _components_data(components),
        },
        "update": None
        if update is None
        else {
            "id": str(update.public_id),
            "status": update.status,
            "body": update.body,
            "created_at": iso_or_none(update.created_at),
        },
    }
    notice, _ = Notice.objects.get_or_create(
        page=page,
        key=key,
        defaults={"kind": kind, "at": now, "data": data, "component_ids": [c.pk for c in components]},
    )
    return notice


# --- maintenance ---------------------------------------------------------------------------------


def maintenance_scan(*, now: datetime) -> int:
    """Write the notices of maintenance scheduled, started and completed on pages that have subscribers; return how many are new.

    Scheduled: the window's next occurrence, once it starts within SCHEDULED_HORIZON. Started:
    the occurrence holding ``now``. Completed: an occurrence that ended in the last
    COMPLETED_LOOKBACK whose start was told. Only the windows touching a page's components count,
    and a notice names those components.
    """
    pages = list(
        StatusPage.objects.filter(subscribers__confirmed_at__isnull=False, subscribers__disabled_reason="")
        .distinct()
        .only("id", "public_id", "organization_id", "slug", "title", "time_zone")
    )
    if not pages:
        return 0
    windows = maintenance_live(
        start=now - COMPLETED_LOOKBACK,
        end=now + SCHEDULED_HORIZON,
        organization_ids={page.organization_id for page in pages},
    )
    if not windows:
        return 0
    names = _window_names([window.id for window in windows])
    components: dict[int, list[Component]] = defaultdict(list)
    for component in Component.objects.filter(page__in=pages).order_by("position", "id"):
        components[component.page_id].append(component)
    tags: dict[int, set[str]] = defaultdict(set)
    if any(window.tags for window in windows):
        checks = {c.healthcheck_id for listed in components.values() for c in listed}
        for hc_id, name in HealthcheckTag.objects.filter(healthcheck_id__in=checks).values_list(
            "healthcheck_id", "name"
        ):
            tags[hc_id].add(name)
    wanted: list[Notice] = []
    for page in pages:
        for window in windows:
            if window.organization_id != page.organization_id:
                continue
            touched = [
                c for c in components[page.pk] if window.applies_to(c.healthcheck_id, tags[c.healthcheck_id])
            ]
            if touched:
                wanted += _window_notices(page, window, names[window.id], touched, now)
    return _write_new(wanted)


def _window_names(ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    return {
        window_id: (name, description)
        for window_id, name, description in MaintenanceWindow.objects.filter(id__in=ids).values_list(
            "id", "name", "description"
        )
    }


def _window_notices(
    page: StatusPage, window: LiveWindow, words: tuple[str, str], touched: list[Component], now: datetime
) -> list[Notice]:
    notices: list[Notice] = []

    def notice(kind: str, occurrence: Occurrence) -> None:
        data = {
            "page": _page_data(page),
            "maintenance": {
                "id": str(window.public_id),
                "name": words[0],
                "description": words[1],
                "starts_at": iso_or_none(occurrence.start),
                "ends_at": iso_or_none(occurrence.end),
                "components": _components_data(touched),
            },
        }
        notices.append(
            Notice(
                page=page,
                kind=kind,
                key=_maintenance_key(window, occurrence, kind),
                at=now,
                data=data,
                component_ids=[c.pk for c in touched],
            )
        )

    current = active_at(window.schedule, now)
    if current is not None:
        notice(Kind.MAINTENANCE_STARTED, current)
    upcoming = next_occurrence(window.schedule, now)
    if upcoming is not None and upcoming.start > now and upcoming.start - now <= SCHEDULED_HORIZON:
        notice(Kind.MAINTENANCE_SCHEDULED, upcoming)
    for ended in windows_ended(window.schedule, now - COMPLETED_LOOKBACK, now):
        notice(Kind.MAINTENANCE_COMPLETED, ended)
    return notices


def _maintenance_key(window: LiveWindow, occurrence: Occurrence, kind: str) -> str:
    return f"maintenance:{window.public_id}:{occurrence.start.isoformat()}:{kind}"


def _write_new(wanted: list[Notice]) -> int:
    """Insert the notices not yet written; a completion only where the start was told."""
    if not wanted:
        return 0
    existing = set(
        Notice.objects.filter(
            page_id__in={n.page_id for n in wanted},
            key__in=[n.key for n in wanted] + [_started_key(n) for n in wanted],
        ).values_list("page_id", "key")
    )
    fresh = [
        n
        for n in wanted
        if (n.page_id, n.key) not in existing
        and (n.kind != Kind.MAINTENANCE_COMPLETED or (n.page_id, _started_key(n)) in existing)
    ]
    # Unique (page, key): a scan racing another writes each notice once.
    Notice.objects.bulk_create(fresh, ignore_conflicts=True)
    return len(fresh)


def _started_key(notice: Notice) -> str:
    return notice.key.rsplit(":", 1)[0] + ":" + Kind.MAINTENANCE_STARTED


# --- fan-out -------------------------------------------------------------------------------------


def notices_fan_out(*, now: datetime, chunk: int = FANOUT_CHUNK) -> int:
    """Write the deliveries of one chunk of subscribers of the oldest notice not fanned out; return how many rows were written.

    One short transaction: the notice is locked (SKIP LOCKED: a second worker takes the next
    notice), ``chunk`` subscribers after ``fanned_to`` are read, the deliveries written, and
    ``fanned_to`` moved (``fanned_out_at`` set once the page's subscribers are all passed).
    """
    with transaction.atomic():
        notice = (
            Notice.objects.select_for_update(skip_locked=True)
            .filter(fanned_out_at__isnull=True)
            .order_by("id")
            .first()
        )
        if notice is None:
            return 0
        if notice.subscriber_id is not None:
            recipients = [notice.subscriber_id]
            last, done = notice.subscriber_id, True
        else:
            recipients, last, done = _recipients(notice, chunk)
        NoticeDelivery.objects.bulk_create(
            [
                NoticeDelivery(notice=notice, subscriber_id=sid, next_attempt_at=now, created_at=now)
                for sid in recipients
            ],
            ignore_conflicts=True,
        )
        notice.fanned_to = last
        notice.fanned_out_at = now if done else None
        notice.save(update_fields=["fanned_to", "fanned_out_at"])
    return max(len(recipients), 1)


def _recipients(notice: Notice, chunk: int) -> tuple[list[int], int, bool]:
    """Return the next chunk's subscribers who hear of ``notice``, the last id read, and whether that was all."""
    rows = list(
        Subscriber.objects.filter(
            page_id=notice.page_id,
            id__gt=notice.fanned_to,
            confirmed_at__isnull=False,
            confirmed_at__lte=notice.at,
            disabled_reason="",
        )
        .order_by("id")
        .values_list("id", "all_components")[:chunk]
    )
    if not rows:
        return [], notice.fanned_to, True
    last, done = rows[-1][0], len(rows) < chunk
    touched = set(notice.component_ids)
    everyone = [sid for sid, all_components in rows if all_components or not touched]
    choosy = [sid for sid, all_components in rows if not all_components and touched]
    if choosy:
        through = Subscriber.components.through.objects
        hearing = set(
            through.filter(subscriber_id__in=choosy, component_id__in=touched).values_list(
                "subscriber_id", flat=True
            )
        )
        everyone += [sid for sid in choosy if sid in hearing]
    return sorted(everyone), last, done


# --- housekeeping --------------------------------------------------------------------------------

KEEP_NOTICES = timedelta(days=30)
PRUNE_BATCH = 1000


def notices_prune(*, now: datetime, keep: timedelta = KEEP_NOTICES) -> int:
    """Delete up to PRUNE_BATCH notices fanned out more than ``keep`` ago with no delivery left to send (their deliveries go with them); return how many."""
    unfinished = NoticeDelivery.objects.filter(notice_id=OuterRef("id"), state__in=NoticeDelivery.UNFINISHED)
    ids = list(
        Notice.objects.filter(fanned_out_at__lt=now - keep)
        .exclude(Exists(unfinished))
        .order_by("id")
        .values_list("id", flat=True)[:PRUNE_BATCH]
    )
    if ids:
        Notice.objects.filter(id__in=ids).delete()
    return len(ids)
