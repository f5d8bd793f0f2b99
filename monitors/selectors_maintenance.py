"""Read maintenance windows: which are live, which cover a check, which have ended."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

from django.db import connection
from django.db.models import Prefetch, Q, QuerySet

from monitors.columns import column_of
from monitors.maintenance import Occurrence, Schedule, active_at, next_occurrence, occurrences, windows_ended
from monitors.models import Healthcheck, HealthcheckTag, MaintenanceWindow, MaintenanceWindowTag, Organization


def maintenance_windows_of(*, organization: Organization) -> QuerySet[MaintenanceWindow]:
    """Return the organization's maintenance windows with what the API shows prefetched."""
    return MaintenanceWindow.objects.filter(organization=organization).prefetch_related(
        Prefetch("healthchecks", queryset=Healthcheck.objects.only("id", "public_id")), "tag_rows"
    )


@dataclass(frozen=True, slots=True)
class LiveWindow:
    """A maintenance window as lookups read it: its schedule and what it applies to (ids, tag names)."""

    id: int
    public_id: UUID
    organization_id: int
    schedule: Schedule
    healthcheck_ids: frozenset[int]
    tags: frozenset[str]

    def applies_to(self, healthcheck_id: int, tags: Iterable[str]) -> bool:
        return healthcheck_id in self.healthcheck_ids or not self.tags.isdisjoint(tags)


def maintenance_live(
    *, start: datetime, end: datetime, organization_ids: Iterable[int] | None = None
) -> list[LiveWindow]:
    """Return the windows whose series overlaps [start, end), of the given organizations (None: all).

    One query (the maintenance_org_ends index) when there are none, the common case; two more
    for their healthchecks and tags otherwise. Whether an occurrence falls in the range is the
    caller's to ask (monitors.maintenance), once per window.
    """
    queryset = MaintenanceWindow.objects.filter(starts_at__lt=end).filter(
        Q(ends_at__isnull=True) | Q(ends_at__gt=start)
    )
    if organization_ids is not None:
        queryset = queryset.filter(organization_id__in=set(organization_ids))
    rows = list(
        queryset.values_list(
            "id", "public_id", "organization_id", "starts_at", "duration", "rrule", "timezone"
        )
    )
    if not rows:
        return []
    ids = [row[0] for row in rows]
    checks: dict[int, set[int]] = defaultdict(set)
    for window_id, hc_id in MaintenanceWindow.healthchecks.through.objects.filter(
        maintenancewindow_id__in=ids
    ).values_list("maintenancewindow_id", "healthcheck_id"):
        checks[window_id].add(hc_id)
    tags: dict[int, set[str]] = defaultdict(set)
    for window_id, name in MaintenanceWindowTag.objects.filter(window_id__in=ids).values_list(
        "window_id", "name"
    ):
        tags[window_id].add(name)
    return [
        LiveWindow(
            id=window_id,
            public_id=public_id,
            organization_id=organization_id,
            schedule=Schedule(starts_at=starts_at, duration=duration, rrule=rrule, timezone=timezone),
            healthcheck_ids=frozenset(checks[window_id]),
            tags=frozenset(tags[window_id]),
        )
        for window_id, public_id, organization_id, starts_at, duration, rrule, timezone in rows
    ]


def maintenance_covering(
    *, organizations: Mapping[int, int], start: datetime, end: datetime
) -> dict[int, list[Occurrence]]:
    """Return, per healthcheck, the maintenance occurrences that overlap [start, end).

    ``organizations`` maps each healthcheck id to its organization's id. Healthchecks in no
    window are left out. The recorder calls this once per group of results.
    """
    organization_ids = sorted(set(organizations.values()))
    if not organization_ids or not _any_window_live(organization_ids, start, end):
        return {}
    windows = maintenance_live(start=start, end=end, organization_ids=organization_ids)
    tagged = any(window.tags for window in windows)
    check_tags: dict[int, set[str]] = defaultdict(set)
    if tagged:
        for hc_id, name in HealthcheckTag.objects.filter(healthcheck_id__in=list(organizations)).values_list(
            "healthcheck_id", "name"
        ):
            check_tags[hc_id].add(name)
    covering: dict[int, list[Occurrence]] = defaultdict(list)
    for window in windows:
        found = occurrences(window.schedule, start, end)
        if not found:
            continue
        for hc_id, organization_id in organizations.items():
            if organization_id == window.organization_id and window.applies_to(hc_id, check_tags[hc_id]):
                covering[hc_id] += found
    return dict(covering)


def _any_window_live(organization_ids: list[int], start: datetime, end: datetime) -> bool:
    """Return whether one of the organizations has a window whose series overlaps [start, end).

    The recorder asks this once per group, and nearly always hears no: one indexed probe in
    plain SQL, where building the ORM's query cost the recorder 0.5 ms a group.
    """
    quote = connection.ops.quote_name
    meta = MaintenanceWindow._meta
    table = quote(meta.db_table)
    organization, starts_at, ends_at = (
        quote(column_of(MaintenanceWindow, name)) for name in ("organization", "starts_at", "ends_at")
    )
    placeholders = ", ".join(["%s"] * len(organization_ids))
    adapt = connection.ops.adapt_datetimefield_value
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT 1 FROM {table} WHERE {organization} IN ({placeholders}) "  # noqa: S608 (names from the model)
            f"AND {starts_at} < %s AND ({ends_at} IS NULL OR {ends_at} > %s) LIMIT 1",
            [*organization_ids, adapt(end), adapt(start)],
        )
        return cursor.fetchone() is not None


@dataclass(frozen=True, slots=True)
class ActiveMaintenance:
    """A healthcheck's maintenance at a moment: until when (the latest end) and which windows."""

    until: datetime
    window_ids: tuple[int, ...]


def maintenance_active(*, healthcheck_ids: Iterable[int], at: datetime) -> dict[int, ActiveMaintenance]:
    """Return the healthchecks under maintenance at ``at`` (absent: none), with the windows that hold them."""
    organizations = dict(
        Healthcheck.objects.filter(id__in=list(healthcheck_ids)).values_list("id", "organization_id")
    )
    if not organizations:
        return {}
    windows = maintenance_live(start=at, end=at + _INSTANT, organization_ids=set(organizations.values()))
    if not windows:
        return {}
    check_tags = _tags_of(list(organizations)) if any(window.tags for window in windows) else {}
    active: dict[int, ActiveMaintenance] = {}
    for window in windows:
        occurrence = active_at(window.schedule, at)
        if occurrence is None:
            continue
        for hc_id, organization_id in organizations.items():
            if organization_id != window.organization_id or not window.applies_to(
                hc_id, check_tags.get(hc_id, ())
            ):
                continue
            held = active.get(hc_id)
            active[hc_id] = ActiveMaintenance(
                until=occurrence.end if held is None else max(held.until, occurrence.end),
                window_ids=(window.id,) if held is None else (*held.window_ids, window.id),
            )
    return active


@dataclass(frozen=True, slots=True)
class MaintenanceEnded:
    """A window occurrence that ended, and the healthchecks it held (its own and those tagged, then)."""

    window_id: int
    window_public_id: UUID
    organization_id: int
    ended_at: datetime
    healthcheck_ids: frozenset[int]


def maintenance_ended(
    *, since: datetime, until: datetime, healthcheck_ids: Iterable[int] | None = None
) -> list[MaintenanceEnded]:
    """Return the occurrences that ended in (since, until], oldest first, with the healthchecks they held.

    For alerts: a check still down when its window ends opens its incident then. A check held
    by another window still active is the caller's to skip (maintenance_active). Tags are
    resolved as they are now. ``until - since`` is the caller's to keep short (a tick or a few).
    """
    wanted = None if healthcheck_ids is None else set(healthcheck_ids)
    ended: list[MaintenanceEnded] = []
    windows = maintenance_live(start=since, end=until + _INSTANT)
    tagged_names = {name for window in windows for name in window.tags}
    by_tag: dict[tuple[int, str], set[int]] = defaultdict(set)
    if tagged_names:
        for hc_id, organization_id, name in HealthcheckTag.objects.filter(
            name__in=tagged_names,
            healthcheck__organization_id__in={w.organization_id for w in windows if w.tags},
        ).values_list("healthcheck_id", "healthcheck__organization_id", "name"):
            by_tag[(organization_id, name)].add(hc_id)
    for window in windows:
        for occurrence in windows_ended(window.schedule, since, until):
            held = set(window.healthcheck_ids)
            for name in window.tags:
                held |= by_tag[(window.organization_id, name)]
            if wanted is not None:
                held &= wanted
            if held:
                ended.append(
                    MaintenanceEnded(
                        window.id, window.public_id, window.organization_id, occurrence.end, frozenset(held)
                    )
                )
    return sorted(ended, key=lambda item: (item.ended_at, item.window_id))


class MaintenanceNow:
    """Answer, for an organization's healthchecks, until when each is under maintenance at ``at``.

    The API reads it per healthcheck shown; the organization's live windows are read once, on
    the first question, and a healthcheck's tags come from its prefetched ``tag_rows``.
    """

    def __init__(self, *, organization: Organization, at: datetime) -> None:
        self.organization = organization
        self.at = at
        self._active: list[tuple[LiveWindow, Occurrence]] | None = None

    def until(self, healthcheck: Healthcheck) -> datetime | None:
        if self._active is None:
            windows = maintenance_live(
                start=self.at, end=self.at + _INSTANT, organization_ids=[self.organization.id]
            )
            self._active = [
                (window, occurrence)
                for window in windows
                if (occurrence := active_at(window.schedule, self.at)) is not None
            ]
        if not self._active:
            return None
        tags = [row.name for row in healthcheck.tag_rows.all()]
        ends = [
            occurrence.end for window, occurrence in self._active if window.applies_to(healthcheck.id, tags)
        ]
        return max(ends) if ends else None


def maintenance_window_states(
    *, organization: Organization, at: datetime
) -> dict[int, tuple[Occurrence | None, Occurrence | None]]:
    """Return each of the organization's windows' (current, next) occurrence at ``at``, by window id."""
    states: dict[int, tuple[Occurrence | None, Occurrence | None]] = {}
    rows = MaintenanceWindow.objects.filter(organization=organization).values_list(
        "id", "starts_at", "duration", "rrule", "timezone", "ends_at"
    )
    for window_id, starts_at, duration, rrule, timezone, ends_at in rows:
        schedule = Schedule(starts_at=starts_at, duration=duration, rrule=rrule, timezone=timezone)
        over = ends_at is not None and ends_at <= at
        states[window_id] = (
            None if over else active_at(schedule, at),
            None if over else next_occurrence(schedule, at),
        )
    return states


def _tags_of(healthcheck_ids: list[int]) -> dict[int, set[str]]:
    tags: dict[int, set[str]] = defaultdict(set)
    for hc_id, name in HealthcheckTag.objects.filter(healthcheck_id__in=healthcheck_ids).values_list(
        "healthcheck_id", "name"
    ):
        tags[hc_id].add(name)
    return tags


# The half-open range [at, at + _INSTANT) asks about the moment ``at`` alone.
_INSTANT = timedelta(microseconds=1)
