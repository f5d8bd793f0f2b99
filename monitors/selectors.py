"""Read tenancy and healthchecks; every function here is scoped to one organization."""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, TypedDict, cast
from uuid import UUID

import httpx
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.models import Session
from django.core.exceptions import ValidationError
from django.db import connection
from django.db.models import (
    Case,
    Count,
    Exists,
    Field,
    Model,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
)

from monitors import latency, roles, scorecard
from monitors.access_rules import api_key_expired, api_key_unused, user_agent_summary
from monitors.maintenance import (
    Occurrence,
    Schedule,
    active_at,
    next_occurrence,
    occurrences,
    windows_ended,
)
from monitors.models import (
    ApiKey,
    Healthcheck,
    HealthcheckListing,
    HealthcheckTag,
    Invitation,
    MaintenanceWindow,
    MaintenanceWindowTag,
    Membership,
    Organization,
    ProbeResult,
    Region,
    RegionState,
    Rollup,
    SignInSession,
    StatusChange,
    ToolChange,
    ToolList,
    ToolListVersion,
    TwoFactor,
)
from monitors.secrets import SecretUnreadable, decrypt_headers
from monitors.signals import acknowledgements_asked, licence_asked
from monitors.timestamps import EpochSeconds, epoch_sql, from_epoch
from monitors.uptime import Acknowledged, Availability, Interval, Run, availability, down_since, down_until
from probes.checks import CheckConfig, check_kind
from probes.checks.mcp import MCP
from probes.config import ConfigError
from probes.oauth import prm_candidates
from probes.text import storable
from probes.types import Access, SigninDiscovery, Status, ToolInfo

logger = logging.getLogger(__name__)


def healthchecks_of(*, organization: Organization) -> QuerySet[Healthcheck]:
    """Return the organization's healthchecks with what the API shows prefetched (a missing listing is None)."""
    return (
        Healthcheck.objects.filter(organization=organization)
        .select_related("organization", "listing")
        .prefetch_related("regions", "tag_rows")
    )


@dataclass(frozen=True, slots=True)
class RegionNow:
    """One region of a check: its status there, since when, and its newest result with the tools it listed."""

    region: str
    status: str
    since: datetime | None
    latest: ProbeResult | None
    tools: list[dict[str, Any]]


def regions_now(*, healthcheck: Healthcheck) -> list[RegionNow]:
    """Return each region the check runs in, by slug: its status and newest result (a query per region)."""
    states = {state.region_id: state for state in RegionState.objects.filter(healthcheck=healthcheck)}
    found: list[RegionNow] = []
    for region in healthcheck.regions.order_by("slug"):
        latest = (
            ProbeResult.objects.filter(healthcheck=healthcheck, region=region)
            .select_related("region")
            .order_by("-slot", "-attempt")
            .first()
        )
        tools: list[dict[str, Any]] = []
        if latest is not None and latest.tool_digest:
            tool_list = ToolList.objects.filter(healthcheck=healthcheck, digest=latest.tool_digest).first()
            tools = list(tool_list.tools) if tool_list is not None else []
        state = states.get(region.id)
        found.append(
            RegionNow(
                region=region.slug,
                status=state.status if state is not None else Status.PENDING.value,
                since=state.since if state is not None else None,
                latest=latest,
                tools=tools,
            )
        )
    return found


def memberships_of(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Membership]:
    """Return the user's memberships with their organizations and plans, oldest first (none when signed out)."""
    if user.pk is None:
        return Membership.objects.none()
    return (
        Membership.objects.filter(user_id=user.pk)
        .select_related("organization", "organization__plan")
        .order_by("created_at", "id")
    )


def members_of(*, organization: Organization) -> QuerySet[Membership]:
    """Return the organization's memberships with their users, owners first, then by email."""
    order = Case(*(When(role=role, then=Value(rank)) for rank, role in enumerate(roles.ROLES)))
    return (
        Membership.objects.filter(organization=organization)
        .select_related("user")
        .order_by(order, "user__email", "id")
    )


def invitations_pending(*, organization: Organization, now: datetime) -> QuerySet[Invitation]:
    """Return the organization's invitations neither accepted, revoked nor expired, newest first."""
    return Invitation.objects.filter(
        organization=organization, accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=now
    ).order_by("-created_at", "-id")


def invitation_by_public_id(*, public_id: str) -> Invitation | None:
    """Return the invitation with its organization, or None."""
    try:
        return Invitation.objects.select_related("organization").get(public_id=public_id)
    except (Invitation.DoesNotExist, ValueError, ValidationError):
        return None


def api_keys_of(*, organization: Organization) -> QuerySet[ApiKey]:
    """Return the organization's API keys, revoked ones too, newest first."""
    return ApiKey.objects.filter(organization=organization).order_by("-created_at", "-id")


@dataclass(frozen=True, slots=True)
class ListedApiKey:
    """One key as its list shows it: the key, whether it has expired, and whether it looks abandoned."""

    key: ApiKey
    expired: bool
    unused: bool


def api_keys_listed(*, organization: Organization, now: datetime) -> list[ListedApiKey]:
    """Return the organization's keys, newest first, each judged at ``now`` (a revoked key is never flagged)."""
    listed = []
    for key in api_keys_of(organization=organization):
        expired = api_key_expired(key.expires_at, now=now)
        live = key.is_active and not expired
        unused = live and api_key_unused(last_used_at=key.last_used_at, created_at=key.created_at, now=now)
        listed.append(ListedApiKey(key=key, expired=expired, unused=unused))
    return listed


@dataclass(frozen=True, slots=True)
class SignInSessionRow:
    """One signed-in session as its person sees it; never its key."""

    public_id: UUID
    device: str
    address: str | None
    created_at: datetime
    last_seen_at: datetime
    current: bool


def sign_in_sessions_of(
    *, user: Any, current_session_key: str | None, now: datetime
) -> list[SignInSessionRow]:
    """Return the person's live sessions (Django still has them, unexpired), the current one first, in one query."""
    live = Session.objects.filter(session_key=OuterRef("session_key"), expire_date__gt=now)
    rows = [
        SignInSessionRow(
            public_id=record.public_id,
            device=user_agent_summary(record.user_agent),
            address=record.address,
            created_at=record.created_at,
            last_seen_at=record.last_seen_at,
            current=record.session_key == current_session_key,
        )
        for record in SignInSession.objects.filter(Exists(live), user=user).order_by("-last_seen_at", "-id")
    ]
    return sorted(rows, key=lambda row: not row.current)


def regions_enabled() -> QuerySet[Region]:
    return Region.objects.filter(enabled=True)


def healthchecks_overdue_count(*, before: datetime) -> int:
    """Count the unpaused healthchecks whose next check was due before ``before`` (the hc_due index)."""
    return Healthcheck.objects.filter(paused=False, next_check_at__lt=before).count()


def regions_allowed(*, organization: Organization) -> QuerySet[Region]:
    """Return the enabled regions the organization's plan allows."""
    return organization.plan.allowed_regions.filter(enabled=True).order_by("slug")


def api_key_by_hash(*, key_hash: str) -> ApiKey | None:
    return (
        ApiKey.objects.select_related("organization", "organization__plan").filter(key_hash=key_hash).first()
    )


@dataclass(frozen=True)
class CheckConfigs:
    """The engine configs of a batch's healthcheck ids: those that run, and why the others can't."""

    runnable: dict[int, CheckConfig]
    # Healthcheck id -> the sentence its result says: the check is down until someone fixes it.
    unrunnable: dict[int, str]


def check_configs(*, healthcheck_ids: list[int]) -> CheckConfigs:
    """Return the runnable engine config of each unpaused healthcheck, header values decrypted.

    A healthcheck whose stored config no longer parses (a rule tightened since it was saved) or
    whose headers can't be decrypted can't run; it is returned with the reason, which its result
    records, so its owner is told instead of it silently going unchecked, and one bad row never
    stops a batch.
    """
    runnable: dict[int, CheckConfig] = {}
    unrunnable: dict[int, str] = {}
    rows = Healthcheck.objects.filter(id__in=healthcheck_ids, paused=False).values_list(
        "id", "type", "config", "secret_headers"
    )
    for hc_id, check_type, config, secret_headers in rows:
        try:
            data = {**config, "headers": decrypt_headers(secret_headers)}
            runnable[hc_id] = check_kind(check_type).parse(data)
        except SecretUnreadable:
            unrunnable[hc_id] = UNREADABLE_HEADERS_REASON
        except ConfigError as exc:
            unrunnable[hc_id] = (
                f"{INVALID_CONFIG_REASON} ({storable(str(exc), 300)}); edit the healthcheck to fix them"
            )
        except (ValueError, TypeError, AttributeError):
            unrunnable[hc_id] = f"{INVALID_CONFIG_REASON}; edit the healthcheck to fix them"
    for hc_id, reason in unrunnable.items():
        logger.error("healthcheck %s can't run: %s", hc_id, reason)
    return CheckConfigs(runnable, unrunnable)


INVALID_CONFIG_REASON = "Uptimy can't run this check: its stored settings no longer pass validation"
UNREADABLE_HEADERS_REASON = (
    "Uptimy can't run this check: its stored header values can't be decrypted with this server's keys; "
    "enter them again"
)


def results_of(
    *, healthcheck: Healthcheck, region: str | None, start: datetime | None, end: datetime | None
) -> QuerySet[ProbeResult]:
    queryset = ProbeResult.objects.filter(healthcheck=healthcheck).select_related("region")
    if region:
        queryset = queryset.filter(region__slug=region)
    if start:
        queryset = queryset.filter(slot__gte=start)
    if end:
        queryset = queryset.filter(slot__lt=end)
    return queryset


class UptimeFigures(TypedDict):
    """Runs, failures and response times summed over a window, for a region or overall."""

    runs: int
    failures: int
    degraded: int
    uptime: float | None
    p50_ms: float | None
    p95_ms: float | None


# The functional form, since ``from`` is a keyword: keys as the API answers them.
Uptime = TypedDict(
    "Uptime",
    {"from": datetime, "to": datetime, "overall": UptimeFigures, "regions": dict[str, UptimeFigures]},
)


def uptime_of(*, healthcheck: Healthcheck, start: datetime, end: datetime) -> Uptime:
    """Sum the hourly rollups of hours that overlap [start, end), per region and overall."""
    # Truncate in UTC: rollup hours are UTC hours, and a window given at +05:30 truncated in
    # its own zone would start half an hour late and miss the hour it starts in.
    first_hour = start.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    rollups = Rollup.objects.filter(
        healthcheck=healthcheck, period=Rollup.Period.HOUR, start__gte=first_hour, start__lt=end
    ).values_list("region__slug", "runs", "failures", "degraded", "histogram")
    per_region: dict[str, list[tuple[int, int, int, list[list[int]]]]] = {}
    for slug, runs, failures, degraded, histogram in rollups:
        per_region.setdefault(slug, []).append((runs, failures, degraded, histogram))
    # Each region's rows summed once; the overall figures sum those sums (a few rows, not every hour again).
    summed = {slug: _summed(rows) for slug, rows in sorted(per_region.items())}
    return {
        "from": start,
        "to": end,
        "overall": _figures(_summed(list(summed.values()))),
        "regions": {slug: _figures(row) for slug, row in summed.items()},
    }


def _summed(rows: list[tuple[int, int, int, list[list[int]]]]) -> tuple[int, int, int, list[list[int]]]:
    """Return rollup rows as one: runs, failures and degraded added, histograms merged."""
    return (
        sum(row[0] for row in rows),
        sum(row[1] for row in rows),
        sum(row[2] for row in rows),
        latency.merge(row[3] for row in rows),
    )


def uptimes_of(*, healthcheck_ids: Iterable[int], start: datetime, end: datetime) -> dict[int, float | None]:
    """Return each healthcheck's overall uptime over [start, end) as ``uptime_of`` computes it, in one query.

    A list page's figure for many checks at once: the hourly rollups summed per check (not per
    region), so no check costs a query of its own. A check without runs in the window maps to None.
    """
    first_hour = start.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    sums = (
        Rollup.objects.filter(
            healthcheck_id__in=list(healthcheck_ids),
            period=Rollup.Period.HOUR,
            start__gte=first_hour,
            start__lt=end,
        )
        .values("healthcheck_id")
        .annotate(runs=Sum("runs"), failures=Sum("failures"))
        .values_list("healthcheck_id", "runs", "failures")
    )
    return {hc_id: (runs - failures) / runs if runs else None for hc_id, runs, failures in sums}


def _figures(row: tuple[int, int, int, list[list[int]]]) -> UptimeFigures:
    runs, failures, degraded, histogram = row
    return {
        "runs": runs,
        "failures": failures,
        "degraded": degraded,
        "uptime": (runs - failures) / runs if runs else None,
        "p50_ms": latency.percentile(histogram, 0.5),
        "p95_ms": latency.percentile(histogram, 0.95),
    }


# --- maintenance windows --------------------------------------------------------------------------


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
        quote(_column(MaintenanceWindow, name)) for name in ("organization", "starts_at", "ends_at")
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


def _column(model: type[Model], name: str) -> str:
    field = model._meta.get_field(name)
    # A concrete field of the model: it has a column.
    assert isinstance(field, Field), name
    assert field.column is not None, name
    return field.column


def _tags_of(healthcheck_ids: list[int]) -> dict[int, set[str]]:
    tags: dict[int, set[str]] = defaultdict(set)
    for hc_id, name in HealthcheckTag.objects.filter(healthcheck_id__in=healthcheck_ids).values_list(
        "healthcheck_id", "name"
    ):
        tags[hc_id].add(name)
    return tags


# The half-open range [at, at + _INSTANT) asks about the moment ``at`` alone.
_INSTANT = timedelta(microseconds=1)


# --- uptime history (monitors.uptime's inputs) -----------------------------------------------------

# The measured statuses: pending and paused time is unmonitored and leaves the denominator.
MEASURED_STATUSES = frozenset({Status.UP.value, Status.DEGRADED.value, Status.DOWN.value})
# Read once: an enum member's value is a descriptor call, and _timeline asks per status change.
_DOWN = Status.DOWN.value
# The raw-result windows read per query when refining downtime bounds (they travel as arrays).
BOUND_WINDOWS_PER_QUERY = 20_000
# Slack past the rechecks when looking back for the results that led to a change: the verdict
# waits for the slowest region (its timeout, the settle window).
BOUND_SLACK = timedelta(minutes=2)


def acknowledgements_of(
    *, healthcheck_ids: Sequence[int], start: datetime, end: datetime, until: datetime
) -> dict[int, list[Acknowledged]] | None:
    """Return each healthcheck's incidents opened in ``[start, end)`` and acknowledged by ``until``, in order.

    Monitors keeps no acknowledgements: it asks the app that does (``signals.acknowledgements_asked``,
    answered by alerts). None when no app answers, so a report says MTTA is unknown, not zero.
    """
    answers = acknowledgements_asked.send(
        sender=None, healthcheck_ids=list(healthcheck_ids), start=start, end=end, until=until
    )
    if not answers:
        return None
    result: dict[int, list[Acknowledged]] = {hc_id: [] for hc_id in healthcheck_ids}
    for _, incidents in answers:
        # django-stubs types a receiver's answer as str | None; acknowledgements_asked's are these.
        for incident in cast("Iterable[Acknowledged]", incidents):
            result.setdefault(incident.healthcheck_id, []).append(incident)
    for found in result.values():
        found.sort(key=lambda incident: (incident.opened_at, incident.acknowledged_at))
    return result


@dataclass(frozen=True)
class UptimeHistory:
    """Hold one healthcheck's downtime and measured intervals over a period, and how downtime was bounded."""

    downtime: list[Interval]
    measured: list[Interval]
    # Downtime bounds taken at the status change's time because the raw results were gone.
    bounds_from_changes: int = 0


def uptime_history(
    *, healthchecks: Sequence[Healthcheck], start: datetime, end: datetime
) -> dict[int, UptimeHistory]:
    """Return each healthcheck's downtime and measured intervals over ``[start, end)``, from its status changes.

    The status at ``start`` is the first later change's ``from_status`` (or the current status
    when nothing changed since); nothing before the check's creation counts as measured, nor
    does pending or paused time.

    Downtime runs from the first failing result that led to ``down`` to the first good result
    of the recovery (``monitors.uptime.down_since`` / ``down_until``). The recorder stores that
    moment on the change as it writes it (``StatusChange.effective_at``, :func:`downtime_bounds`),
    so it outlives the raw results. For a change without one (written before that, or by a
    pause) it is read from the raw results just before the change; where those are pruned (or
    never came, as for a stale region) the bound falls back to the status change's own time,
    which is later by the rechecks (``bounds_from_changes`` counts those).

    The healthchecks need ``id``, ``created_at``, ``status``, ``quorum``, ``interval_seconds``,
    ``recheck_count`` and ``recheck_delay_seconds`` loaded. Queries: one for the changes and,
    when some went to or from down, one for each check's oldest kept result and, if some of
    those changes are newer, one per BOUND_WINDOWS_PER_QUERY of them for the results.
    """
    changes: dict[int, list[tuple[datetime, str, str]]] = defaultdict(list)
    stored: dict[tuple[int, datetime, bool], datetime] = {}
    rows = (
        StatusChange.objects.filter(
            healthcheck_id__in=[hc.id for hc in healthchecks], at__gte=start, at__lte=end
        )
        .order_by("healthcheck_id", "at", "id")
        # As epoch seconds: a flapping page reads tens of thousands (monitors.timestamps).
        .values_list("healthcheck_id", EpochSeconds("at"), "from_status", "to_status", "effective_at")
    )
    for hc_id, epoch, from_status, to_status, effective_at in rows:
        at = from_epoch(epoch)
        changes[hc_id].append((at, from_status, to_status))
        if effective_at is not None and Status.DOWN.value in (from_status, to_status):
            stored[(hc_id, at, to_status == Status.DOWN.value)] = effective_at
    timelines = {hc.id: _timeline(hc, changes.get(hc.id, []), start, end) for hc in healthchecks}
    bounds = _down_bounds(healthchecks, timelines, stored)
    result: dict[int, UptimeHistory] = {}
    for hc in healthchecks:
        measured, episodes = timelines[hc.id]
        downtime: list[Interval] = []
        fallbacks = 0
        for episode in episodes:
            begin, finish = episode.start, episode.end
            if episode.into is not None:
                found = bounds.get((hc.id, episode.into, True))
                fallbacks += found is None
                begin = max(found or begin, start)
            if episode.out_of is not None:
                found = bounds.get((hc.id, episode.out_of, False))
                fallbacks += found is None
                finish = min(max(found or finish, begin), end)
            downtime.append(Interval(begin, finish))
        result[hc.id] = UptimeHistory(downtime, measured, fallbacks)
    return result


def availability_over(
    *, healthchecks: Sequence[Healthcheck], spans: Mapping[str, timedelta], now: datetime
) -> dict[int, dict[str, Availability]]:
    """Return each healthcheck's uptime figures over each span ending at ``now`` (``{"24h": timedelta(hours=24)}``).

    The status pages' and reports' definition (``monitors.uptime.availability``): downtime from
    ``uptime_history``, maintenance out of the denominator. The healthchecks need what
    ``uptime_history`` reads plus ``organization_id``. Queries: ``uptime_history``'s over the
    longest span, and one or two for maintenance (none when no window is live).
    """
    if not healthchecks or not spans:
        return {}
    start = now - max(spans.values())
    history = uptime_history(healthchecks=healthchecks, start=start, end=now)
    held = maintenance_covering(
        organizations={hc.id: hc.organization_id for hc in healthchecks}, start=start, end=now
    )
    figures: dict[int, dict[str, Availability]] = {}
    for hc in healthchecks:
        own = history[hc.id]
        maintenance = [Interval(o.start, o.end) for o in held.get(hc.id, ())]
        figures[hc.id] = {
            name: availability(
                start=now - length, end=now, downtime=own.downtime, maintenance=maintenance, data=own.measured
            )
            for name, length in spans.items()
        }
    return figures


@dataclass(frozen=True, slots=True)
class _Episode:
    """Hold one down stretch as the changes say, and the changes that open and close it (None: a period bound)."""

    start: datetime
    end: datetime
    into: datetime | None  # the change to down, when inside the period
    out_of: datetime | None  # the change out of down, when inside the period
    look_back_from: datetime  # the change before ``into``, or the check's creation


def _timeline(
    hc: Healthcheck, own: list[tuple[datetime, str, str]], start: datetime, end: datetime
) -> tuple[list[Interval], list[_Episode]]:
    begin = max(start, hc.created_at)
    status = own[0][1] if own else hc.status
    measured: list[list[datetime]] = []  # [start, end] pairs, made Intervals once joined
    episodes: list[_Episode] = []
    cursor = begin
    previous_change = hc.created_at
    opened: datetime | None = None  # the change to down that opened the current status, if in the period
    opened_after = hc.created_at  # the change before it: its look-back goes no further
    for at, _, to_status in [*own, (end, "", "")]:
        change_at = at
        at = max(at, begin)
        if at > cursor:
            if status in MEASURED_STATUSES:
                # Measured stretches join across up/down/degraded changes: one interval, not hundreds.
                if measured and measured[-1][1] == cursor:
                    measured[-1][1] = at
                else:
                    measured.append([cursor, at])
            if status == _DOWN:
                closed = change_at if to_status else None
                episodes.append(_Episode(cursor, at, opened, closed, opened_after))
            cursor = at
        if to_status:
            opened = change_at if to_status == _DOWN and change_at >= begin else None
            opened_after = previous_change
            previous_change = change_at
            status = to_status
    return [Interval(first, last) for first, last in measured], episodes


class _Timing(Protocol):
    """What the bounds read of a healthcheck (a model instance, or the recorder's plain values)."""

    interval_seconds: int
    recheck_count: int
    recheck_delay_seconds: int
    quorum: int | None


def _look_back(hc: _Timing) -> timedelta:
    """Return how far before a change its deciding results can lie: a slot, its rechecks and slack."""
    return timedelta(seconds=hc.interval_seconds + hc.recheck_count * hc.recheck_delay_seconds) + BOUND_SLACK


@dataclass(frozen=True)
class BoundWindow:
    """Hold where the results that moved a check into (``into``) or out of down lie: checked in ``(after, until]``."""

    healthcheck_id: int
    into: bool
    after: datetime
    until: datetime
    quorum: int | None
    slot_lag: timedelta  # how far a run's checked_at trails its slot


def bound_window(
    hc: _Timing, *, healthcheck_id: int, into: bool, at: datetime, since: datetime | None
) -> BoundWindow:
    """Return the window of a change at ``at`` into or out of down; ``since`` is the change before it, if known."""
    back = _look_back(hc)
    after = at - back if since is None else max(at - back, since)
    return BoundWindow(healthcheck_id, into, after, at, hc.quorum, _slot_lag(hc))


def downtime_bounds(windows: Sequence[BoundWindow]) -> list[datetime | None]:
    """Return each window's bound from the raw results: the first failing result that led to down, or the first good result of the recovery.

    None where the results don't say (pruned, or never came). One query per
    BOUND_WINDOWS_PER_QUERY windows, none for none.
    """
    found: list[datetime | None] = []
    for first in range(0, len(windows), BOUND_WINDOWS_PER_QUERY):
        chunk = windows[first : first + BOUND_WINDOWS_PER_QUERY]
        runs: dict[int, list[Run]] = defaultdict(list)
        for index, region_id, checked_at, failing in _window_results(
            [(w.healthcheck_id, w.after - w.slot_lag, w.until) for w in chunk]
        ):
            runs[index].append(Run(checked_at, region_id, failing))
        for index, window in enumerate(chunk):
            inside = [run for run in runs.get(index, ()) if window.after < run.at <= window.until]
            bound = down_since if window.into else down_until
            found.append(bound(inside, quorum=window.quorum))
    return found


def _down_bounds(
    healthchecks: Sequence[Healthcheck],
    timelines: Mapping[int, tuple[list[Interval], list[_Episode]]],
    stored: Mapping[tuple[int, datetime, bool], datetime],
) -> dict[tuple[int, datetime, bool], datetime]:
    """Return the bound of each change into (True) or out of (False) down: stored, or where kept results say it.

    Keyed by (healthcheck id, change time, into down).
    """
    by_id = {hc.id: hc for hc in healthchecks}
    windows: list[BoundWindow] = []
    for hc_id, (_, episodes) in timelines.items():
        hc = by_id[hc_id]
        for episode in episodes:
            if episode.into is not None and (hc_id, episode.into, True) not in stored:
                windows.append(
                    bound_window(
                        hc, healthcheck_id=hc_id, into=True, at=episode.into, since=episode.look_back_from
                    )
                )
            if episode.out_of is not None and (hc_id, episode.out_of, False) not in stored:
                windows.append(
                    bound_window(hc, healthcheck_id=hc_id, into=False, at=episode.out_of, since=episode.into)
                )
    windows = _retained(windows)
    found = dict(stored)
    for window, bound in zip(windows, downtime_bounds(windows), strict=True):
        if bound is not None:
            found[(window.healthcheck_id, window.until, window.into)] = bound
    return found


def _retained(windows: list[BoundWindow]) -> list[BoundWindow]:
    """Return the windows whose raw results are still kept: none older than each check's oldest result.

    Pruning deletes a check's results oldest first (monitors.services.results_prune), so a change
    older than its check's oldest result has lost the results that would bound it: it is not
    looked up. One index probe per check (the newest-first slot index read from its end).
    """
    if not windows:
        return windows
    oldest = dict(
        Healthcheck.objects.filter(id__in={window.healthcheck_id for window in windows})
        .annotate(
            oldest=Subquery(
                ProbeResult.objects.filter(healthcheck_id=OuterRef("pk")).order_by("slot").values("slot")[:1]
            )
        )
        .values_list("id", "oldest")
    )
    return [
        window
        for window in windows
        if (first := oldest.get(window.healthcheck_id)) is not None and window.until >= first
    ]


def _window_results(
    windows: Sequence[tuple[int, datetime, datetime]],
) -> list[tuple[int, int, datetime, bool]]:
    """Return (window index, region id, checked_at, failing) of the results of ``(healthcheck, slot > lo, slot <= hi)`` windows.

    One statement for all the windows, which travel as one JSON document (jsonb_to_recordset on
    PostgreSQL, json_each on SQLite): a flapping check's thousands of episodes cost an index probe
    each, where an OR of thousands of terms, a VALUES list of thousands of parameters or arrays
    quoted by the driver cost the page hundreds of milliseconds just to be sent and planned.
    """
    quote = connection.ops.quote_name
    table = quote(ProbeResult._meta.db_table)
    hc, region, slot, checked, status = (
        quote(_column(ProbeResult, name))
        for name in ("healthcheck", "region", "slot", "checked_at", "status")
    )
    if connection.vendor == "postgresql":
        source = "jsonb_to_recordset(%s::jsonb) AS w (k integer, hc bigint, lo timestamptz, hi timestamptz)"
        rows = [
            {"k": index, "hc": hc_id, "lo": low.isoformat(), "hi": high.isoformat()}
            for index, (hc_id, low, high) in enumerate(windows)
        ]
    else:
        adapt = connection.ops.adapt_datetimefield_value
        source = (
            "(SELECT json_extract(value, '$.k') AS k, json_extract(value, '$.hc') AS hc,"
            " json_extract(value, '$.lo') AS lo, json_extract(value, '$.hi') AS hi FROM json_each(%s)) AS w"
        )
        rows = [
            {"k": index, "hc": hc_id, "lo": adapt(low), "hi": adapt(high)}
            for index, (hc_id, low, high) in enumerate(windows)
        ]
    params = [json.dumps(rows)]
    sql = (
        f"SELECT w.k, r.{region}, {epoch_sql(f'r.{checked}', connection.vendor)}, r.{status} FROM {source} "  # noqa: S608 - quoted names, values are parameters
        f"JOIN {table} r ON r.{hc} = w.hc AND r.{slot} > w.lo AND r.{slot} <= w.hi"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        found = cursor.fetchall()
    return [
        (int(k), int(region_id), from_epoch(at), state == Status.DOWN.value)
        for k, region_id, at, state in found
    ]


def _aware(value: datetime | str) -> datetime:
    """Return a raw query's datetime as an aware UTC datetime (SQLite hands back text or naive values)."""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _slot_lag(hc: _Timing) -> timedelta:
    """Return how far a run's ``checked_at`` can trail its slot: its rechecks and a timeout's slack."""
    return timedelta(seconds=hc.recheck_count * hc.recheck_delay_seconds) + BOUND_SLACK


@dataclass(frozen=True, slots=True)
class ToolListView:
    """One stored version of a healthcheck's tool list, details included, as plain values."""

    healthcheck_id: int
    digest: str
    tools: tuple[ToolInfo, ...]
    first_seen_at: datetime
    current_since: datetime
    # None while it is the current version.
    replaced_at: datetime | None


def tool_list_latest(*, healthcheck_id: int) -> ToolListView | None:
    """Return the healthcheck's current tool list version (None before a run listed tools); one query."""
    return tool_lists_latest(healthcheck_ids=[healthcheck_id]).get(healthcheck_id)


def tool_lists_latest(*, healthcheck_ids: Iterable[int]) -> dict[int, ToolListView]:
    """Return each healthcheck's current tool list version, by id; one query for any number of checks."""
    rows = (
        ToolListVersion.objects.filter(healthcheck_id__in=list(healthcheck_ids), replaced_at__isnull=True)
        .order_by("healthcheck_id", "current_since", "id")
        .values_list("healthcheck_id", "digest", "tools", "first_seen_at", "current_since", "replaced_at")
    )
    # Ordered so the last one per check wins, should a crash ever leave two unreplaced.
    return {
        row[0]: ToolListView(
            healthcheck_id=row[0],
            digest=row[1],
            tools=tuple(_tool_info(tool) for tool in row[2] if isinstance(tool, dict)),
            first_seen_at=row[3],
            current_since=row[4],
            replaced_at=row[5],
        )
        for row in rows
    }


def _tool_info(stored: Mapping[str, object]) -> ToolInfo:
    """Return a tool as monitors.services.recording stored it in a ToolListVersion."""

    def text(key: str) -> str | None:
        value = stored.get(key)
        return value if isinstance(value, str) else None

    def flag(key: str) -> bool | None:
        value = stored.get(key)
        return value if isinstance(value, bool) else None

    required = stored.get("required_inputs")
    return ToolInfo(
        name=text("name") or "",
        required_inputs=tuple(name for name in required if isinstance(name, str))
        if isinstance(required, list)
        else (),
        description=text("description"),
        input_schema=text("input_schema"),
        read_only_hint=flag("read_only_hint"),
        destructive_hint=flag("destructive_hint"),
        description_kept=stored.get("description_kept", True) is not False,
        schema_kept=stored.get("schema_kept", True) is not False,
    )


# --- the MCP scorecard's evidence (issue 14) -----------------------------------------------------


class NotAnMcpCheck(ValueError):
    """Say that a healthcheck is no MCP check, so it has no scorecard."""


def scorecard_of(
    *, healthcheck: Healthcheck, now: datetime, known: ScorecardReads | None = None
) -> scorecard.Scorecard:
    """Return the MCP healthcheck's 22 checks judged at ``now`` (:func:`scorecard_evidence`'s queries)."""
    return scorecard.scorecard(scorecard_evidence(healthcheck=healthcheck, now=now, known=known), now=now)


# What the scorecard's latest attempt reads of a result (_attempt_of_row, _resource_metadata).
LATEST_ATTEMPT_FIELDS = (
    "checked_at",
    "tool_count",
    "http_status",
    "total_ms",
    "protocol",
    "server_name",
    "access",
    "reason",
    "signin_discovery",
)
LATEST_ATTEMPT_ORDER = ("-slot", "-checked_at", "-id")
NEWEST_RESULT_ORDER = ("-checked_at", "-id")


def _scorecard_attempts(healthcheck: Healthcheck) -> QuerySet[ProbeResult]:
    """Return the healthcheck's results that are scorecard attempts: none in maintenance, none unrunnable."""
    return ProbeResult.objects.filter(healthcheck=healthcheck, in_maintenance=False).exclude(
        kind=scorecard.UNRUNNABLE_KIND
    )


@dataclass(frozen=True, slots=True)
class ScorecardReads:
    """Hold what a page read already and the scorecard would read again: latest attempt, tool list, own listing."""

    latest_attempt: ProbeResult | None
    tool_list: ToolListView | None
    listing: HealthcheckListing | None


@dataclass(frozen=True, slots=True)
class NewestResults:
    """Say which result is the newest one recorded, and which is the scorecard's latest attempt (often the same)."""

    newest: ProbeResult | None
    latest_attempt: ProbeResult | None


def newest_results(*, healthcheck: Healthcheck) -> NewestResults:
    """Return the healthcheck's newest result and its scorecard's latest attempt, with their regions; one query."""
    newest_id = (
        ProbeResult.objects.filter(healthcheck=healthcheck).order_by(*NEWEST_RESULT_ORDER).values("id")[:1]
    )
    attempt_id = _scorecard_attempts(healthcheck).order_by(*LATEST_ATTEMPT_ORDER).values("id")[:1]
    rows = list(
        ProbeResult.objects.filter(healthcheck=healthcheck)
        .filter(Q(id=Subquery(newest_id)) | Q(id=Subquery(attempt_id)))
        .annotate(newest_id=Subquery(newest_id), attempt_id=Subquery(attempt_id))
        .select_related("region")
    )
    return NewestResults(
        newest=next((row for row in rows if row.id == row.newest_id), None),
        latest_attempt=next((row for row in rows if row.id == row.attempt_id), None),
    )


def scorecard_evidence(
    *, healthcheck: Healthcheck, now: datetime, known: ScorecardReads | None = None
) -> scorecard.Evidence:
    """Return every evidence value of the MCP healthcheck's scorecard at ``now``, in a fixed number of queries.

    Seven queries; four when ``known`` brings three; one more when the check's listing names a
    repository (its licence answer).

    Windows are whole hours: the current one and the 7×24 (30×24) before it. Hours before the
    last two are the hourly rollups' counts (hours rolled up before the counts existed count
    nothing); the last two, which the rollup job still rewrites, are counted from raw results,
    so a result counts as soon as it is recorded. The customer's own listing, when entered, is
    the publisher evidence (a manual listing, :func:`listing_evidence`) and its verified quote
    check 12's; without one the publisher checks are not measured. Raises NotAnMcpCheck for
    another type.

    ``known``: the latest attempt, the tool list version and the listing a caller read already
    (:func:`newest_results`, :func:`tool_list_latest`, :func:`listing_of`), which saves those queries.
    """
    if healthcheck.type != MCP.number:
        raise NotAnMcpCheck(
            f"Only MCP healthchecks have a scorecard; this one is a {check_kind(healthcheck.type).title} check."
        )
    hour = now.replace(minute=0, second=0, microsecond=0)
    start_30d, start_7d = hour - SCORECARD_RELIABILITY, hour - SCORECARD_LATENCY
    raw_from = hour - timedelta(hours=1)
    attempts = _scorecard_attempts(healthcheck)
    latest_row: Mapping[str, Any] | None
    if known is None:
        latest_row = attempts.order_by(*LATEST_ATTEMPT_ORDER).values(*LATEST_ATTEMPT_FIELDS).first()
    elif known.latest_attempt is None:
        latest_row = None
    else:
        latest_row = {name: getattr(known.latest_attempt, name) for name in LATEST_ATTEMPT_FIELDS}
    listed_at = (
        attempts.filter(tool_count__isnull=False)
        .order_by(*LATEST_ATTEMPT_ORDER)
        .values_list("checked_at", flat=True)
        .first()
    )
    tally_30d, tally_7d = _rolled_up_tallies(healthcheck, start_30d, start_7d, raw_from)
    recent = _raw_tally(attempts.filter(slot__gte=raw_from))
    for tally in (tally_30d, tally_7d):
        tally.merge(recent.attempts, recent.successes, recent.within_1s, recent.within_3s)
    changes = list(
        ToolChange.objects.filter(healthcheck=healthcheck, at__gte=start_30d)
        .filter(Q(removed_count__gt=0) | Q(new_required_inputs_count__gt=0))
        .order_by("at", "id")
        .values_list("id", "removed_count", "new_required_inputs_count")
    )
    version = tool_list_latest(healthcheck_id=healthcheck.id) if known is None else known.tool_list
    listing = listing_of(healthcheck=healthcheck) if known is None else known.listing
    uri = healthcheck.config.get("uri") if isinstance(healthcheck.config, dict) else None
    endpoint = uri if isinstance(uri, str) else ""
    latest = _attempt_of_row(latest_row) if latest_row else None
    attempt_at = latest.at if latest else None
    return scorecard.Evidence(
        endpoint_url=endpoint,
        latest=latest,
        latency_7d=scorecard.LatencyWindow(
            samples=tally_7d.successes,
            within_1s=tally_7d.within_1s,
            within_3s=tally_7d.within_3s,
            observed_at=listed_at,
        ),
        attempts_30d=scorecard.AttemptCounts(
            attempts=tally_30d.attempts, successes=tally_30d.successes, observed_at=attempt_at
        ),
        tool_history_30d=scorecard.ToolHistory(
            successes=tally_30d.successes,
            removals=sum(1 for _, removed, _ in changes if removed),
            new_required=sum(1 for _, _, required in changes if required),
            observed_at=listed_at,
            change_ids=tuple(change_id for change_id, _, _ in changes),
        ),
        tools=scorecard.ToolList(version.tools, listed_at or version.current_since) if version else None,
        resource_metadata=_resource_metadata(latest_row, endpoint) if latest_row else None,
        free_tier=quote_evidence(listing) if listing else None,
        listing=listing_evidence(listing) if listing else None,
        licence=licence_of_repository(listing.repository_url) if listing else None,
    )


def listing_of(*, healthcheck: Healthcheck) -> HealthcheckListing | None:
    """Return the healthcheck's own listing, or None; one query."""
    return HealthcheckListing.objects.filter(healthcheck=healthcheck).first()


def listing_evidence(listing: HealthcheckListing) -> scorecard.Listing:
    """Return the customer's listing as the publisher checks read it: manual, so check 17 fails.

    It has no registry update timestamp, so check 21 ("the registry's update timestamp",
    missing: fails) fails too; it declares no credentials (check 10 reads the attempts). It was
    observed when the customer last saved it.
    """
    return scorecard.Listing(
        source=scorecard.ListingSource.MANUAL,
        name=listing.namespace,
        observed_at=listing.updated_at,
        website_url=listing.website_url or None,
        repository_url=listing.repository_url or None,
    )


def quote_evidence(listing: HealthcheckListing) -> scorecard.VerifiedQuote | None:
    """Return the listing's free-tier quote as check 12 reads it: None until the page is fetched.

    A page fetched that never stated the quote is evidence too (no ``last_found_at``: check 12
    fails); a page not fetched yet, or no page, is none (not measured).
    """
    if not listing.pricing_url or (listing.quote_found_at is None and listing.quote_checked_at is None):
        return None
    return scorecard.VerifiedQuote(
        url=listing.pricing_url,
        quote=listing.quote,
        last_found_at=listing.quote_found_at,
        checked_at=listing.quote_checked_at,
    )


def licence_of_repository(repository_url: str) -> scorecard.LicenceLookup:
    """Return GitHub's licence lookup of a listed repository, as the directory answers ``licence_asked``.

    Not done when there is no repository or no app answers (the directory keeps the lookups).
    """
    if not repository_url:
        return scorecard.LicenceLookup(status=scorecard.LookupStatus.NOT_DONE)
    for _, answer in licence_asked.send(sender=None, repository_url=repository_url):
        if isinstance(answer, scorecard.LicenceLookup):
            return answer
    return scorecard.LicenceLookup(status=scorecard.LookupStatus.NOT_DONE)


def listed_repository_urls() -> QuerySet[HealthcheckListing, str]:
    """Return the repository URLs customers' own listings name (distinct): the directory looks up their licences."""
    return (
        HealthcheckListing.objects.exclude(repository_url="")
        .values_list("repository_url", flat=True)
        .order_by()
        .distinct()
    )


# The windows of the repeated measurements (scorecard checks 6–9).
SCORECARD_LATENCY = timedelta(days=7)
SCORECARD_RELIABILITY = timedelta(days=30)


def _rolled_up_tallies(
    healthcheck: Healthcheck, start_30d: datetime, start_7d: datetime, end: datetime
) -> tuple[scorecard.AttemptTally, scorecard.AttemptTally]:
    """Return the 30-day and 7-day tallies of the hourly rollups from ``start_30d`` to ``end``; one query."""
    last_week = Q(start__gte=start_7d)
    sums = Rollup.objects.filter(
        healthcheck=healthcheck, period=Rollup.Period.HOUR, start__gte=start_30d, start__lt=end
    ).aggregate(
        attempts_30d=Sum("attempts"),
        successes_30d=Sum("successes"),
        attempts_7d=Sum("attempts", filter=last_week),
        successes_7d=Sum("successes", filter=last_week),
        within_1s_7d=Sum("successes_1s", filter=last_week),
        within_3s_7d=Sum("successes_3s", filter=last_week),
    )
    return (
        scorecard.AttemptTally(attempts=sums["attempts_30d"] or 0, successes=sums["successes_30d"] or 0),
        scorecard.AttemptTally(
            attempts=sums["attempts_7d"] or 0,
            successes=sums["successes_7d"] or 0,
            within_1s=sums["within_1s_7d"] or 0,
            within_3s=sums["within_3s_7d"] or 0,
        ),
    )


def _raw_tally(results: QuerySet[ProbeResult]) -> scorecard.AttemptTally:
    """Return the tally of recorded results (skipped ones already left out), counted in SQL; one query.

    The same rule as scorecard.AttemptTally.add, which the rollup job applies row by row.
    """
    answered = ~Q(http_status__in=scorecard.AUTH_STATUSES)
    success = answered & Q(tool_count__isnull=False)
    counts = results.aggregate(
        attempts=Count("id", filter=answered),
        successes=Count("id", filter=success),
        within_1s=Count("id", filter=success & Q(total_ms__lte=scorecard.FAST_MS)),
        within_3s=Count("id", filter=success & Q(total_ms__lte=scorecard.CONSISTENT_MS)),
    )
    return scorecard.AttemptTally(**counts)


def _attempt_of_row(row: Mapping[str, Any]) -> scorecard.Attempt:
    """Return the Attempt evidence of a recorded result (the fields scorecard.attempt_of reads of an outcome)."""
    return scorecard.Attempt(
        at=row["checked_at"],
        tools_listed=row["tool_count"] is not None,
        http_status=row["http_status"],
        duration_ms=row["total_ms"],
        protocol=row["protocol"] or None,
        server_name=row["server_name"] or None,
        tool_count=row["tool_count"],
        with_key=row["access"] == Access.KEY,
        reason=row["reason"],
    )


def _resource_metadata(row: Mapping[str, Any], endpoint: str) -> scorecard.ResourceMetadata | None:
    """Return what the latest result's sign-in discovery tells of the protected-resource metadata."""
    return resource_metadata_of(discovery=row["signin_discovery"], endpoint=endpoint, at=row["checked_at"])


def resource_metadata_of(*, discovery: str, endpoint: str, at: datetime) -> scorecard.ResourceMetadata | None:
    """Return what an attempt's sign-in discovery (its stored SigninDiscovery value) tells of the metadata.

    The engine records how it found sign-in: by the RFC 9728 metadata (which answered with a JSON
    object naming the resource), or by the 2025-03-26 fallback, taken only when no such metadata
    answered. Nothing recorded (no discovery, or one that failed): None, not measured. The URL
    shown is the metadata's address for the endpoint, where RFC 9728 puts it. The directory's
    probes are read with it too.
    """
    if discovery not in (SigninDiscovery.RESOURCE_METADATA, SigninDiscovery.LEGACY_FALLBACK):
        return None
    found = discovery == SigninDiscovery.RESOURCE_METADATA
    return scorecard.ResourceMetadata(
        url=_metadata_address(endpoint),
        http_status=200 if found else None,
        json_object=found,
        fetched_at=at,
    )


def _metadata_address(endpoint: str) -> str:
    try:
        return str(prm_candidates(httpx.URL(endpoint), None)[0][0])
    except (httpx.InvalidURL, IndexError):
        return ""


def two_factor_on(*, user: AbstractBaseUser | AnonymousUser) -> bool:
    """Return whether the account signs in with a confirmed second factor."""
    if user.pk is None:
        return False
    return TwoFactor.objects.filter(user_id=user.pk, confirmed_at__isnull=False).exists()


def two_factor_enrolment(*, user: AbstractBaseUser | AnonymousUser) -> TwoFactor | None:
    """Return the account's enrolment in progress (a secret not yet confirmed by a code), if any."""
    if user.pk is None:
        return None
    return TwoFactor.objects.filter(user_id=user.pk, confirmed_at__isnull=True).first()


def two_factor_requirers(*, user: AbstractBaseUser | AnonymousUser) -> list[Organization]:
    """Return the user's organizations whose owners require two-factor sign-in, by name."""
    if user.pk is None:
        return []
    return list(
        Organization.objects.filter(memberships__user_id=user.pk, require_two_factor=True).order_by("name")
    )
