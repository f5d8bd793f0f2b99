"""Read what the web app's pages show, in a fixed number of queries per page (no query per row)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from django.core.paginator import Page, Paginator
from django.db.models import Avg, QuerySet, Sum
from django.db.models.functions import Left, Length
from rest_framework.exceptions import ValidationError as FilterRefused

from alerts.api.filters import IncidentFilter
from alerts.models import AlertPolicy, Channel, Delivery, Incident
from alerts.selectors import (
    alert_policies_of,
    channels_of,
    deliveries_of,
    incidents_of,
    incidents_of_healthcheck,
)
from monitors import scorecard, selectors
from monitors.api.audit import audit_filters
from monitors.api.filters import HealthcheckFilter
from monitors.models import (
    ApiKey,
    AuditEvent,
    CertificateChange,
    Healthcheck,
    HealthcheckListing,
    HealthcheckTag,
    Heartbeat,
    Organization,
    Ping,
    RegionState,
    Rollup,
    StatusChange,
    ToolChange,
    ToolList,
)
from monitors.selectors_audit import audit_events_of
from probes.checks import UnknownCheckKind, check_kind
from probes.checks.heartbeat import HeartbeatConfig
from probes.checks.mcp import MCP
from probes.heartbeats import PingKind
from web.heartbeat_usage import duration_words, schedule_words
from web.results import ResultView, response_time, view_of_result
from web.sparkline import HOURS, SparkHour

STATUS_CHANGES_SHOWN = 20
TOOL_CHANGES_SHOWN = 20
INCIDENTS_SHOWN = 10
# Healthchecks per dashboard page: a page's figures cost the same however many the organization has.
PAGE_SIZE = 50
# Deliveries per page of a channel's delivery log.
DELIVERIES_SHOWN = 20
CHART_SPANS = {"24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}


def type_name(healthcheck: Healthcheck) -> str:
    try:
        return check_kind(healthcheck.type).name
    except UnknownCheckKind:
        return "unknown"


UPTIME_SPANS = {"24h": timedelta(hours=24), "30d": timedelta(days=30)}


@dataclass(frozen=True, slots=True)
class DashboardRow:
    healthcheck: Healthcheck
    type_name: str
    # What the check watches, as the API's `target` answers it (a URL, host:port, a domain, "").
    target: str
    last_ms: float | None
    # Floored percentages as text ("99.99"), None without measured time: monitors.uptime's definition.
    uptime_24h: str | None
    uptime_30d: str | None
    tags: tuple[str, ...]
    spark: tuple[SparkHour, ...]


@dataclass(frozen=True, slots=True)
class Dashboard:
    rows: list[DashboardRow]
    errors: dict[str, list[str]]
    tags: list[str]
    page: Page[Healthcheck] | None


def dashboard(*, organization: Organization, query: Mapping[str, str], now: datetime) -> Dashboard:
    """Return the organization's healthchecks filtered as the API's list filters them (status, type, tag, search)."""
    # The list's own columns only: no regions, no encrypted headers; tags and the last response
    # time come in one query each, as plain values, whatever the number of rows.
    base: QuerySet[Healthcheck] = (
        Healthcheck.objects.filter(organization=organization)
        .defer("secret_headers", "cause_regions", "cause_missing_tools")
        .order_by("-created_at", "-id")
    )
    wanted = {key: query[key] for key in ("status", "type", "tag", "search") if query.get(key)}
    errors: dict[str, list[str]] = {}
    filtered = HealthcheckFilter(wanted, queryset=base)
    healthchecks: list[Healthcheck] = []
    page: Page[Healthcheck] | None = None
    try:
        if filtered.is_valid():
            page = Paginator(filtered.qs, PAGE_SIZE).get_page(query.get("page"))
            healthchecks = list(page.object_list)
        else:
            errors = {
                key: [str(message) for message in messages] for key, messages in filtered.errors.items()
            }
    except FilterRefused as refused:  # the API's type filter names an unknown type this way
        detail = refused.detail if isinstance(refused.detail, dict) else {"type": refused.detail}
        errors = {str(key): [str(message) for message in messages] for key, messages in detail.items()}
    ids = [hc.id for hc in healthchecks]
    figures = selectors.availability_over(healthchecks=healthchecks, spans=UPTIME_SPANS, now=now)
    sparks = spark_hours(healthcheck_ids=ids, now=now)
    last_ms: dict[int, float | None] = {}
    for hc_id, response_ms, kind in (
        RegionState.objects.filter(healthcheck_id__in=ids, last_result_at__isnull=False)
        .order_by("healthcheck_id", "-last_result_at")
        .values_list("healthcheck_id", "response_ms", "kind")
    ):
        last_ms.setdefault(hc_id, response_time(response_ms, kind))
    tags_of: dict[int, list[str]] = {}
    for hc_id, name in (
        HealthcheckTag.objects.filter(healthcheck_id__in=ids)
        .order_by("name")
        .values_list("healthcheck_id", "name")
    ):
        tags_of.setdefault(hc_id, []).append(name)
    rows = [
        DashboardRow(
            healthcheck=hc,
            type_name=type_name(hc),
            target=selectors.healthcheck_target(healthcheck=hc),
            last_ms=last_ms.get(hc.id),
            uptime_24h=figures[hc.id]["24h"].percent,
            uptime_30d=figures[hc.id]["30d"].percent,
            tags=tuple(tags_of.get(hc.id, ())),
            spark=tuple(sparks.get(hc.id, ())),
        )
        for hc in healthchecks
    ]
    tags = sorted(
        set(
            Healthcheck.objects.filter(organization=organization)
            .values_list("tag_rows__name", flat=True)
            .exclude(tag_rows__name=None)
        )
    )
    return Dashboard(rows=rows, errors=errors, tags=tags, page=page)


def spark_hours(*, healthcheck_ids: list[int], now: datetime) -> dict[int, list[SparkHour]]:
    """Return each healthcheck's last 24 hours from the hourly rollups, in one query for all of them.

    An hour's median is the mean of its regions' medians; its failures are summed.
    """
    first = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=HOURS - 1)
    rows = (
        Rollup.objects.filter(healthcheck_id__in=healthcheck_ids, period=Rollup.Period.HOUR, start__gte=first)
        .values("healthcheck_id", "start")
        .annotate(median=Avg("p50_ms"), failed=Sum("failures"))
        .order_by()
        .values_list("healthcheck_id", "start", "median", "failed")
    )
    hours: dict[int, list[SparkHour]] = {}
    for hc_id, start, median, failed in rows:
        index = int((start - first).total_seconds() // 3600)
        hours.setdefault(hc_id, []).append(SparkHour(index=index, median_ms=median, failures=failed or 0))
    return hours


@dataclass(frozen=True, slots=True)
class ToolChangeView:
    """Say what one change of the tool list did: tools removed, tools that gained required inputs, tools added.

    Each list holds the first names the recorder kept; ``*_more`` counts the ones it left out.
    """

    at: datetime
    region: str
    removed: tuple[str, ...]
    removed_more: int
    gained: tuple[tuple[str, tuple[str, ...]], ...]
    gained_more: int
    added: tuple[str, ...]
    added_more: int


def view_of_tool_change(row: ToolChange) -> ToolChangeView:
    gained = tuple(
        (str(tool), tuple(map(str, inputs))) for tool, inputs in dict(row.new_required_inputs).items()
    )
    return ToolChangeView(
        at=row.at,
        region=row.region.slug,
        removed=tuple(map(str, row.removed)),
        removed_more=max(0, row.removed_count - len(row.removed)),
        gained=gained,
        gained_more=max(0, row.new_required_inputs_count - len(gained)),
        added=tuple(map(str, row.added)),
        added_more=max(0, row.added_count - len(row.added)),
    )


@dataclass(frozen=True, slots=True)
class HealthcheckPage:
    healthcheck: Healthcheck
    type_name: str
    target: str
    regions: list[RegionState]
    latest: ResultView | None
    status_changes: list[StatusChange]
    tool_changes: list[ToolChangeView]
    certificate_changes: list[CertificateChange]
    incidents: list[Incident]
    uptime_24h: Any
    uptime_30d: Any
    # Floored percentages as text, monitors.uptime's definition (the runs and p95 above are the rollups').
    percent_24h: str | None
    percent_30d: str | None
    # The hourly median response times by region slug, each region its own chart.
    chart_points: dict[str, list[tuple[datetime, float]]]
    # MCP checks only: the scorecard's 22 checks (monitors.selectors.scorecard_of: four queries of its own, five
    # with a listed repository; its latest attempt, tool list version and listing shared with the page's reads).
    scorecard: ScorecardView | None = None
    # MCP checks only: the check's own listing (namespace, links, the free-tier quote), if entered.
    listing: HealthcheckListing | None = None
    # Passive checks with a ping URL (heartbeats) only: the schedule and the last pings.
    heartbeat: HeartbeatView | None = None
    # Whether regions probe the check (no regions, latest result, chart nor Run now when not).
    active: bool = True


# The pings a heartbeat's page lists, and how much of each body: the first lines, capped, read
# capped from the database too (a body may be 100 kB; the page refreshes every 5 s).
PINGS_SHOWN = 50
PING_BODY_READ = 2000
PING_BODY_LINES = 5
PING_BODY_LINE_CHARS = 200


@dataclass(frozen=True, slots=True)
class PingRow:
    at: datetime
    kind: str  # success | start | fail | exit (PingKind): the row's class
    kind_words: str  # "Success", "Start", "Fail", "Exit status 3"
    failed: bool
    source: str | None
    duration: str | None  # since the run's /start, in words
    body: str  # the first lines, each capped; "" without a body
    body_cut: bool  # the body goes on past what is shown
    user_agent: str


@dataclass(frozen=True, slots=True)
class HeartbeatView:
    ping_id: UUID | None  # None: the check has no ping URL (its heartbeat row is missing)
    schedule: str  # "cron 0 3 * * * (Europe/Paris)" or "every 1 h"
    config: HeartbeatConfig | None
    grace: str
    longest_run: str | None
    due_at: datetime | None
    pings: list[PingRow]


def ping_kind_words(kind: str, exit_status: int | None) -> str:
    """Say what a ping reported: "Success", "Start", "Fail", "Exit status 3"."""
    if kind == PingKind.EXIT:
        return f"Exit status {exit_status}"
    return kind.capitalize()


def body_head(body: str, *, cut: bool) -> tuple[str, bool]:
    """Return a ping body's first lines, each line capped, and whether anything was left out."""
    lines = body.splitlines()
    shown = []
    for line in lines[:PING_BODY_LINES]:
        if len(line) > PING_BODY_LINE_CHARS:
            line, cut = line[:PING_BODY_LINE_CHARS] + "…", True
        shown.append(line)
    return "\n".join(shown), cut or len(lines) > PING_BODY_LINES


def heartbeat_view(*, healthcheck: Healthcheck) -> HeartbeatView:
    """Return a heartbeat's schedule and its last pings, newest first: two queries whatever its history."""
    state = Heartbeat.objects.filter(pk=healthcheck.pk).values_list("ping_id", "due_at").first()
    rows = []
    for at, kind, exit_status, source, user_agent, duration, head, length in (
        Ping.objects.filter(healthcheck=healthcheck)
        .order_by("-at", "-id")
        .annotate(head=Left("body", PING_BODY_READ), length=Length("body"))
        .values_list(
            "at", "kind", "exit_status", "source", "user_agent", "duration_seconds", "head", "length"
        )[:PINGS_SHOWN]
    ):
        body, cut = body_head(head or "", cut=(length or 0) > PING_BODY_READ)
        rows.append(
            PingRow(
                at=at,
                kind=kind,
                kind_words=ping_kind_words(kind, exit_status),
                failed=kind == PingKind.FAIL or (kind == PingKind.EXIT and exit_status != 0),
                source=source,
                duration=None if duration is None else duration_words(duration),
                body=body,
                body_cut=cut,
                user_agent=user_agent,
            )
        )
    try:
        config = check_kind(healthcheck.type).parse(healthcheck.config)
    except (UnknownCheckKind, ValueError):
        config = None
    if not isinstance(config, HeartbeatConfig):
        config = None
    return HeartbeatView(
        ping_id=state[0] if state else None,
        schedule=schedule_words(config.schedule) if config else "",
        config=config,
        grace=duration_words(config.grace) if config else "",
        longest_run=duration_words(config.max_run_seconds) if config and config.max_run_seconds else None,
        due_at=state[1] if state else None,
        pings=rows,
    )


VERDICT_WORDS = scorecard.VERDICT_WORDS


@dataclass(frozen=True, slots=True)
class ScorecardRow:
    number: int
    name: str
    verdict: str  # passed | failed | not_measured: the row's class
    verdict_words: str
    observed_at: datetime | None
    outdated_label: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class ScorecardView:
    passed: int
    total: int
    rows: list[ScorecardRow]


def scorecard_view(card: scorecard.Scorecard, *, now: datetime) -> ScorecardView:
    """Return the scorecard as the healthcheck page shows it: each verdict in words, with its freshness."""
    return ScorecardView(
        passed=card.passed,
        total=card.total,
        rows=[
            ScorecardRow(
                number=result.number,
                name=result.name,
                verdict=result.verdict.value,
                verdict_words=VERDICT_WORDS[result.verdict],
                observed_at=result.observed_at,
                outdated_label=scorecard.freshness_label(result, now=now),
                reason=result.reason,
            )
            for result in card.results
        ],
    )


def healthcheck_page(*, healthcheck: Healthcheck, now: datetime, span: str) -> HealthcheckPage:
    """Return what the healthcheck's page shows: regions, the newest result with its tools, changes, figures.

    A passive check (nothing probes it) has no regions, results, tool lists nor response times:
    none is read; a heartbeat's schedule and last pings are read instead (:func:`heartbeat_view`).
    """
    try:
        active = check_kind(healthcheck.type).active
    except UnknownCheckKind:
        active = True
    if not active:
        return _passive_page(healthcheck=healthcheck, now=now)
    regions = list(
        RegionState.objects.filter(healthcheck=healthcheck).select_related("region").order_by("region__slug")
    )
    is_mcp = healthcheck.type == MCP.number
    # One read each of the newest result and the tool list version, shared with the scorecard.
    found = selectors.newest_results(healthcheck=healthcheck)
    newest = found.newest
    tools: list[dict[str, object]] = []
    if newest is not None and newest.tool_digest:
        tool_list = ToolList.objects.filter(healthcheck=healthcheck, digest=newest.tool_digest).first()
        tools = list(tool_list.tools) if tool_list is not None else []
    version = selectors.tool_list_latest(healthcheck_id=healthcheck.id) if is_mcp or tools else None
    latest = None
    if newest is not None:
        descriptions = {tool.name: tool.description for tool in version.tools} if version and tools else {}
        latest = view_of_result(newest, tools, descriptions)
    changes = list(healthcheck.status_changes.all()[:STATUS_CHANGES_SHOWN])
    start = now - CHART_SPANS.get(span, CHART_SPANS["24h"])
    # One series per region: the median response time of each hour the region measured.
    chart_points: dict[str, list[tuple[datetime, float]]] = {}
    for region_slug, moment, median in (
        Rollup.objects.filter(
            healthcheck=healthcheck, period=Rollup.Period.HOUR, start__gte=start, p50_ms__isnull=False
        )
        .order_by("region__slug", "start")
        .values_list("region__slug", "start", "p50_ms")
    ):
        if median is not None:
            chart_points.setdefault(region_slug, []).append((moment, median))
    listing = selectors.listing_of(healthcheck=healthcheck) if is_mcp else None
    figures = selectors.availability_over(healthchecks=[healthcheck], spans=UPTIME_SPANS, now=now)[
        healthcheck.id
    ]
    return HealthcheckPage(
        healthcheck=healthcheck,
        type_name=type_name(healthcheck),
        target=selectors.healthcheck_target(healthcheck=healthcheck),
        regions=regions,
        latest=latest,
        status_changes=changes,
        tool_changes=[
            view_of_tool_change(row)
            for row in healthcheck.tool_changes.select_related("region")[:TOOL_CHANGES_SHOWN]
        ],
        certificate_changes=list(
            healthcheck.certificate_changes.select_related("region")[:TOOL_CHANGES_SHOWN]
        ),
        incidents=incidents_of_healthcheck(healthcheck=healthcheck, limit=INCIDENTS_SHOWN),
        uptime_24h=selectors.uptime_of(healthcheck=healthcheck, start=now - timedelta(hours=24), end=now)[
            "overall"
        ],
        uptime_30d=selectors.uptime_of(healthcheck=healthcheck, start=now - timedelta(days=30), end=now)[
            "overall"
        ],
        percent_24h=figures["24h"].percent,
        percent_30d=figures["30d"].percent,
        chart_points=chart_points,
        scorecard=scorecard_view(
            selectors.scorecard_of(
                healthcheck=healthcheck,
                now=now,
                known=selectors.ScorecardReads(
                    latest_attempt=found.latest_attempt, tool_list=version, listing=listing
                ),
            ),
            now=now,
        )
        if is_mcp
        else None,
        listing=listing,
    )


def _passive_page(*, healthcheck: Healthcheck, now: datetime) -> HealthcheckPage:
    figures = selectors.availability_over(healthchecks=[healthcheck], spans=UPTIME_SPANS, now=now)[
        healthcheck.id
    ]
    return HealthcheckPage(
        healthcheck=healthcheck,
        type_name=type_name(healthcheck),
        target=selectors.healthcheck_target(healthcheck=healthcheck),
        regions=[],
        latest=None,
        status_changes=list(healthcheck.status_changes.all()[:STATUS_CHANGES_SHOWN]),
        tool_changes=[],
        certificate_changes=[],
        incidents=incidents_of_healthcheck(healthcheck=healthcheck, limit=INCIDENTS_SHOWN),
        uptime_24h=None,
        uptime_30d=None,
        percent_24h=figures["24h"].percent,
        percent_30d=figures["30d"].percent,
        chart_points={},
        heartbeat=heartbeat_view(healthcheck=healthcheck),
        active=False,
    )


@dataclass(frozen=True, slots=True)
class IncidentRow:
    incident: Incident
    # open (nobody acknowledged it yet), acknowledged, or resolved: the page's words for it.
    state: str
    # Opened to resolved, or to now while it lasts.
    duration: timedelta


@dataclass(frozen=True, slots=True)
class IncidentsPage:
    rows: list[IncidentRow]
    errors: dict[str, list[str]]
    page: Page[Incident] | None
    # (public id, name) of each of the organization's healthchecks, for the filter.
    healthchecks: list[tuple[UUID, str]]


def incident_state(incident: Incident) -> str:
    """Return what the page calls the incident's state: resolved, else acknowledged, else open."""
    if incident.resolved_at is not None:
        return "resolved"
    return "acknowledged" if incident.acknowledged_at is not None else "open"


def incidents_page(*, organization: Organization, query: Mapping[str, str], now: datetime) -> IncidentsPage:
    """Return a page of the organization's incidents, newest first, filtered as the API's list filters them.

    The incident keeps its healthcheck's name and id, so no row reads its healthcheck (nor its
    timeline): three queries, whatever the number of incidents.
    """
    base = incidents_of(organization=organization).prefetch_related(None).order_by("-opened_at", "-id")
    wanted = {key: query[key] for key in ("state", "healthcheck") if query.get(key)}
    filtered = IncidentFilter(wanted, queryset=base)
    errors: dict[str, list[str]] = {}
    page: Page[Incident] | None = None
    rows: list[IncidentRow] = []
    if filtered.is_valid():
        page = Paginator(filtered.qs, PAGE_SIZE).get_page(query.get("page"))
        rows = [
            IncidentRow(
                incident=incident,
                state=incident_state(incident),
                duration=(incident.resolved_at or now) - incident.opened_at,
            )
            for incident in page.object_list
        ]
    else:
        errors = {key: [str(message) for message in messages] for key, messages in filtered.errors.items()}
    healthchecks = list(
        Healthcheck.objects.filter(organization=organization)
        .order_by("name", "id")
        .values_list("public_id", "name")
    )
    return IncidentsPage(rows=rows, errors=errors, page=page, healthchecks=healthchecks)


@dataclass(frozen=True, slots=True)
class AlertPolicyPage:
    # None until the organization sets one: every enabled channel hears of every incident then.
    policy: AlertPolicy | None
    channels: list[Channel]


def alert_policy_page(*, organization: Organization) -> AlertPolicyPage:
    """Return the organization's default alert policy (the one of no healthcheck) and the channels it may name."""
    policy = alert_policies_of(organization=organization).filter(healthcheck__isnull=True).first()
    return AlertPolicyPage(policy=policy, channels=list(channels_of(organization=organization)))


def channel_deliveries(*, channel: Channel, page: str | None) -> Page[Delivery]:
    """Return a page of the channel's delivery log, newest first, as ``GET /channels/{id}/deliveries/`` lists it.

    Three queries whatever the page holds: the count, the deliveries with their notification and
    incident, and the page's attempts.
    """
    return Paginator(deliveries_of(channel=channel), DELIVERIES_SHOWN).get_page(page)


# Events per page of the audit log.
AUDIT_EVENTS_SHOWN = 50


@dataclass(frozen=True, slots=True)
class AuditChange:
    key: str
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class AuditRow:
    event: AuditEvent
    changes: list[AuditChange]


@dataclass(frozen=True, slots=True)
class AuditPage:
    rows: list[AuditRow]
    errors: dict[str, list[str]]
    page: Page[AuditEvent] | None
    actions: list[str]
    target_types: list[str]
    api_keys: list[tuple[UUID, str]]


def audit_page(*, organization: Organization, query: Mapping[str, str]) -> AuditPage:
    """Return a page of the organization's audit log, newest first, filtered as ``GET /audit-events/`` filters it.

    Five queries whatever the page holds: the count, the events, the actions and object types
    the organization's log names (the filters' choices) and its API keys.
    """
    errors: dict[str, list[str]] = {}
    page: Page[AuditEvent] | None = None
    try:
        events = audit_events_of(organization=organization, **audit_filters(query))
    except FilterRefused as refused:
        detail = refused.detail if isinstance(refused.detail, dict) else {"action": refused.detail}
        errors = {str(key): [str(message) for message in messages] for key, messages in detail.items()}
    else:
        page = Paginator(events, AUDIT_EVENTS_SHOWN).get_page(query.get("page"))
    logged = AuditEvent.objects.filter(organization=organization).order_by()
    return AuditPage(
        rows=[AuditRow(event=event, changes=audit_changes(event)) for event in page or []],
        errors=errors,
        page=page,
        actions=sorted(set(logged.values_list("action", flat=True).distinct())),
        target_types=sorted(set(logged.values_list("target_type", flat=True).distinct())),
        api_keys=list(
            ApiKey.objects.filter(organization=organization)
            .order_by("created_at", "id")
            .values_list("public_id", "prefix")
        ),
    )


def audit_changes(event: AuditEvent) -> list[AuditChange]:
    """Return an event's before and after key by key, as stored (secrets masked already), for a diff."""
    before = event.before if isinstance(event.before, dict) else {}
    after = event.after if isinstance(event.after, dict) else {}
    keys = list(dict.fromkeys([*before, *after]))
    return [
        AuditChange(key=key, before=_shown(before, key, event.before), after=_shown(after, key, event.after))
        for key in keys
    ]


def _shown(side: Mapping[str, Any], key: str, whole: Any) -> str:
    """Say a value in a diff: JSON, "—" where that side does not exist (a create's before, a delete's after)."""
    if whole is None or key not in side:
        return "—"
    return json.dumps(side[key], sort_keys=True, ensure_ascii=False, default=str)
