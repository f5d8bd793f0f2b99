"""Read status pages and turn monitors' data into the renderers' plain inputs.

Every read here is bounded and batched: one query per kind of data for all the components of
a page (components, regions down, status changes, rollups, latest MCP results, incidents and
their updates), so a page of 50 components costs what a page of 5 does.

Over 600 lines on purpose: the reads of one page (:func:`page_view`) batch into each other,
each ``_`` helper one query whose rows the next one keys by; the lookups and the badges at either
end are short and lean on the same helpers.
"""

from __future__ import annotations

import re
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from django.db.models import Count, Exists, F, IntegerField, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from monitors.maintenance import occurrences
from monitors.models import (
    Healthcheck,
    HealthcheckTag,
    MaintenanceWindow,
    Organization,
    ProbeResult,
    RegionState,
    Rollup,
)
from monitors.selectors import maintenance_covering, maintenance_live, uptime_history
from monitors.timestamps import EpochSeconds, from_epoch
from probes.types import Status
from statuspages.models import (
    AffectedComponent,
    Component,
    ComponentGroup,
    IncidentUpdate,
    PublishedIncident,
    StatusPage,
)
from statuspages.render import badges
from statuspages.render import maintenances as scheduled
from statuspages.render import statuspage_api as api
from statuspages.render.bars import DAYS, DayBar, IncidentSpan, Interval, day_bars, period_uptime
from statuspages.render.chart import Point
from statuspages.render.periods import PERIODS, rolling_uptime
from statuspages.render.vocabulary import (
    ComponentStatus,
    Impact,
    PageStatus,
    component_status,
    group_status,
    page_status,
    shown_status,
)

# The response-time chart shows the last day of hourly rollups.
CHART_HOURS = 24
# The main page lists the open incidents and those resolved within this many days.
RECENT_INCIDENT_DAYS = 14
# A history page is one year; more incidents than this in a year are cut (newest kept).
MAX_HISTORY_INCIDENTS = 1000


# --- lookups -------------------------------------------------------------------------------------


def status_pages_of(*, organization: Organization) -> QuerySet[StatusPage]:
    return StatusPage.objects.filter(organization=organization)


def page_by_slug(*, slug: str) -> StatusPage | None:
    return StatusPage.objects.filter(slug=slug).first()


def _domain_of(host: str) -> str:
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name.strip().lower().removesuffix(".")


def page_by_domain(*, host: str) -> StatusPage | None:
    """Return the page whose verified custom domain is ``host`` (port and trailing dot ignored)."""
    name = _domain_of(host)
    if not name:
        return None
    return StatusPage.objects.filter(custom_domain=name, domain_verified_at__isnull=False).first()


def is_verified_domain(*, domain: str) -> bool:
    """Return whether ``domain`` (lower case, no port) is a page's verified custom domain."""
    return StatusPage.objects.filter(custom_domain=domain, domain_verified_at__isnull=False).exists()


# --- what the renderers are given ----------------------------------------------------------------


@dataclass(frozen=True)
class McpDetails:
    """Hold what a component may show of its MCP server: never a URL or a header."""

    protocol: str
    server_version: str
    tool_count: int | None


@dataclass(frozen=True)
class ComponentView:
    """Hold one component as the page draws it."""

    component: Component
    status: ComponentStatus
    regions_down: int
    bars: tuple[DayBar, ...] = ()
    points: tuple[Point, ...] = ()
    mcp: McpDetails | None = None

    @property
    def id(self) -> str:
        return str(self.component.public_id)

    @property
    def name(self) -> str:
        return self.component.display_name

    @property
    def visible(self) -> bool:
        return not self.component.only_show_when_not_operational or self.status != ComponentStatus.OPERATIONAL

    @property
    def uptime(self) -> str | None:
        return period_uptime(self.bars)


@dataclass(frozen=True)
class Section:
    """Hold a group and its visible components, or the ungrouped components (``group`` None)."""

    group: ComponentGroup | None
    status: ComponentStatus
    components: tuple[ComponentView, ...]


@dataclass(frozen=True)
class PageView:
    """Hold everything a page's HTML and JSON answer from."""

    page: StatusPage
    status: PageStatus
    components: tuple[ComponentView, ...]
    groups: tuple[ComponentGroup, ...]
    incidents: tuple[PublishedIncident, ...]
    content: api.PageContent
    sections: tuple[Section, ...] = field(default=())


# --- the reads -----------------------------------------------------------------------------------


def _regions_down_count() -> Subquery:
    """Return how many of the component's healthcheck's regions are down, as a subquery of the component's row."""
    down = (
        RegionState.objects.filter(healthcheck_id=OuterRef("healthcheck_id"), status=Status.DOWN.value)
        .values("healthcheck_id")
        .annotate(count=Count("id"))
        .values("count")
    )
    return Subquery(down, output_field=IntegerField())


def _components(page: StatusPage, ids: Iterable[int] | None = None) -> list[Component]:
    """Return the page's components (or those of ``ids``) with their healthchecks and, as ``regions_down``, their regions down."""
    chosen = Component.objects.filter(page=page)
    if ids is not None:
        chosen = chosen.filter(id__in=list(ids))
    return list(
        chosen.select_related("healthcheck")
        .only(
            "public_id",
            "page_id",
            "group_id",
            "display_name",
            "description",
            "position",
            "only_show_when_not_operational",
            "show_mcp_details",
            "declared_status",
            "created_at",
            "updated_at",
            "healthcheck__id",
            "healthcheck__status",
            "healthcheck__created_at",
            # What monitors.selectors.uptime_history reads to bound downtime by the raw results.
            "healthcheck__quorum",
            "healthcheck__interval_seconds",
            "healthcheck__recheck_count",
            "healthcheck__recheck_delay_seconds",
        )
        .annotate(regions_down=Coalesce(_regions_down_count(), 0))
    )


def _regions_down(healthcheck_ids: Sequence[int]) -> dict[int, int]:
    down: dict[int, int] = defaultdict(int)
    rows = RegionState.objects.filter(healthcheck_id__in=healthcheck_ids, status=Status.DOWN.value)
    for hc_id in rows.values_list("healthcheck_id", flat=True):
        down[hc_id] += 1
    return down


def _incidents(
    page: StatusPage, queryset: QuerySet[PublishedIncident], *, order: tuple[str, ...], limit: int
) -> list[PublishedIncident]:
    return list(
        queryset.filter(page=page)
        .order_by(*order)[:limit]
        .prefetch_related(
            Prefetch(
                "updates",
                queryset=IncidentUpdate.objects.order_by("-created_at", "-id").prefetch_related(
                    Prefetch(
                        "affected",
                        queryset=AffectedComponent.objects.select_related("component").only(
                            "update_id",
                            "old_status",
                            "new_status",
                            "component",
                            "component__id",
                            "component__public_id",
                            "component__display_name",
                        ),
                    )
                ),
            ),
            Prefetch(
                "components",
                queryset=Component.objects.only(
                    "id",
                    "public_id",
                    "display_name",
                    "page_id",
                    "group_id",
                    "position",
                    "created_at",
                    "updated_at",
                ),
            ),
        )
    )


def _declared(page_id: int, component_ids: Iterable[int] | None = None) -> dict[int, list[ComponentStatus]]:
    """Return each component's statuses declared by the page's open published incidents, one per incident.

    An incident declares, for each component, what its latest update naming the component said;
    a resolved incident or a draft declares nothing. One query.
    """
    rows = AffectedComponent.objects.filter(
        update__incident__page_id=page_id, update__incident__draft=False
    ).exclude(update__incident__status=PublishedIncident.Status.RESOLVED)
    if component_ids is not None:
        rows = rows.filter(component_id__in=list(component_ids))
    latest: dict[tuple[int, int], str] = {}
    ordered = rows.order_by("update__created_at", "update_id", "id").values_list(
        "update__incident_id", "component_id", "new_status"
    )
    for incident_id, component_id, new_status in ordered:
        latest[(incident_id, component_id)] = new_status
    declared: dict[int, list[ComponentStatus]] = defaultdict(list)
    for (_, component_id), new_status in latest.items():
        declared[component_id].append(ComponentStatus(new_status))
    return declared


def _declared_in(incidents: Iterable[PublishedIncident]) -> dict[int, list[ComponentStatus]]:
    """Return what _declared does, from incidents read with their updates and affected components (no query)."""
    declared: dict[int, list[ComponentStatus]] = defaultdict(list)
    for incident in incidents:
        if incident.draft or incident.status == PublishedIncident.Status.RESOLVED:
            continue
        latest: dict[int, str] = {}
        # Updates come newest first (_incidents): the first naming a component is its latest word.
        for update in incident.updates.all():
            for change in update.affected.all():
                latest.setdefault(change.component_id, change.new_status)
        for component_id, new_status in latest.items():
            declared[component_id].append(ComponentStatus(new_status))
    return declared


def _declared_open() -> Exists:
    """Return whether an open published incident declares a status of the component, as a subquery of its row."""
    return Exists(
        AffectedComponent.objects.filter(component_id=OuterRef("pk"), update__incident__draft=False).exclude(
            update__incident__status=PublishedIncident.Status.RESOLVED
        )
    )


def _shown(
    component: Component, measured: ComponentStatus, declared: dict[int, list[ComponentStatus]]
) -> ComponentStatus:
    by_hand = [ComponentStatus(component.declared_status)] if component.declared_status else []
    return shown_status(measured, [*by_hand, *declared.get(component.id, ())])


def shown_statuses(
    *, page: StatusPage, component_ids: Iterable[int], now: datetime
) -> dict[int, ComponentStatus]:
    """Return the status the page shows at ``now`` for each of ``component_ids`` (its own): measured, worsened by what is declared."""
    components = _components(page, component_ids)
    healthchecks = [component.healthcheck for component in components]
    maintenance = _maintenance(healthchecks, page.organization_id, now, now)
    declared = _declared(page.pk, [component.id for component in components])
    shown: dict[int, ComponentStatus] = {}
    for component in components:
        hc = component.healthcheck
        measured = component_status(
            status=Status(hc.status),
            regions_down=getattr(component, "regions_down", 0),
            in_maintenance=_in_maintenance(maintenance.get(hc.id, ()), now),
        )
        shown[component.id] = _shown(component, measured, declared)
    return shown


def _window_incidents(page: StatusPage, start: datetime) -> list[PublishedIncident]:
    """Return the published incidents open at some time since ``start``, with their components, for the bars' tooltips.

    Their titles and times only: the updates are the listed incidents' (_incidents), not read here.
    """
    return list(
        PublishedIncident.objects.filter(page=page)
        .exclude(resolved_at__lt=start)
        # Newest kept when a window holds more than the cap.
        .order_by("-created_at", "-id")
        .only("id", "title", "created_at", "resolved_at")[:MAX_HISTORY_INCIDENTS]
        .prefetch_related(Prefetch("components", queryset=Component.objects.only("id")))
    )


def _maintenance(
    healthchecks: Sequence[Healthcheck], organization_id: int, start: datetime, now: datetime
) -> dict[int, list[Interval]]:
    """Return each healthcheck's maintenance occurrences over [start, now], from monitors' windows.

    One indexed query when the organization has no window live then (the common case).
    """
    covering = maintenance_covering(
        organizations={hc.id: organization_id for hc in healthchecks},
        start=start,
        # Through now itself: an occurrence that starts this second is maintenance now.
        end=now + timedelta(seconds=1),
    )
    return {hc_id: [Interval(o.start, o.end) for o in found] for hc_id, found in covering.items()}


def _in_maintenance(intervals: Sequence[Interval], now: datetime) -> bool:
    return any(interval.start <= now < interval.end for interval in intervals)


def _points(healthcheck_ids: Sequence[int], now: datetime) -> dict[int, list[Point]]:
    """Return each healthcheck's hourly median response time, averaged over its regions by answered runs.

    A rollup's median is over the runs that were answered (``monitors.rules.answered``); an
    hour of nothing but failures has none, and is no point.
    """
    sums: dict[tuple[int, datetime], list[float]] = defaultdict(lambda: [0.0, 0.0])
    rows = Rollup.objects.filter(
        healthcheck_id__in=healthcheck_ids,
        period=Rollup.Period.HOUR,
        start__gte=now - timedelta(hours=CHART_HOURS),
        p50_ms__isnull=False,
        runs__gt=F("failures"),
    ).values_list("healthcheck_id", EpochSeconds("start"), "runs", "failures", "p50_ms")
    for hc_id, start, runs, failures, p50 in rows:
        if p50 is None:
            continue
        total = sums[(hc_id, from_epoch(start))]
        total[0] += p50 * (runs - failures)
        total[1] += runs - failures
    points: dict[int, list[Point]] = defaultdict(list)
    for (hc_id, start), (weighted, counted) in sorted(sums.items()):
        points[hc_id].append((start, weighted / counted))
    return points


def _mcp_details(healthcheck_ids: Sequence[int]) -> dict[int, McpDetails]:
    if not healthcheck_ids:
        return {}
    latest = Healthcheck.objects.filter(id__in=healthcheck_ids).annotate(
        last=Subquery(
            ProbeResult.objects.filter(healthcheck=OuterRef("pk"), protocol__gt="")
            .order_by("-slot", "-attempt")
            .values("id")[:1]
        )
    )
    rows = ProbeResult.objects.filter(id__in=latest.values("last")).values_list(
        "healthcheck_id", "protocol", "server_version", "tool_count"
    )
    return {hc_id: McpDetails(protocol, version, tools) for hc_id, protocol, version, tools in rows}


def _spans(incidents: Iterable[PublishedIncident]) -> dict[int, list[IncidentSpan]]:
    spans: dict[int, list[IncidentSpan]] = defaultdict(list)
    for incident in incidents:
        for component in incident.components.all():
            spans[component.id].append(
                IncidentSpan(incident.title, incident.created_at, incident.resolved_at)
            )
    return spans


def _content(
    page: StatusPage,
    views: Sequence[ComponentView],
    groups: Sequence[ComponentGroup],
    incidents: Sequence[PublishedIncident],
    status: PageStatus,
    url: str,
    maintenances: Sequence[api.Incident] = (),
) -> api.PageContent:
    members: dict[int, list[ComponentView]] = defaultdict(list)
    for view in views:
        if view.component.group_id is not None:
            members[view.component.group_id].append(view)
    by_id = {group.id: str(group.public_id) for group in groups}
    statuses = {view.component.id: view.status for view in views}
    shown: list[api.Component] = [_api_component(view, by_id) for view in views]
    for group in groups:
        own = members.get(group.id, [])
        shown.append(
            api.Component(
                id=str(group.public_id),
                name=group.name,
                status=group_status(v.status for v in own),
                created_at=group.created_at,
                updated_at=group.updated_at,
                position=group.position,
                group=True,
                components=tuple(v.id for v in own),
            )
        )
    moments = [page.updated_at, *(c.updated_at for c in shown), *(i.updated_at for i in incidents)]
    header = api.Page(
        id=str(page.public_id), name=page.title, url=url, time_zone=page.time_zone, updated_at=max(moments)
    )
    return api.PageContent(
        page=header,
        status=status,
        components=tuple(shown),
        incidents=tuple(_api_incident(incident, url, statuses, by_id) for incident in incidents),
        maintenances=tuple(maintenances),
    )


def _api_component(view: ComponentView, group_ids: dict[int, str]) -> api.Component:
    component = view.component
    return api.Component(
        id=view.id,
        name=component.display_name,
        status=view.status,
        created_at=component.created_at,
        updated_at=component.updated_at,
        position=component.position,
        description=component.description or None,
        group_id=group_ids.get(component.group_id) if component.group_id is not None else None,
        only_show_if_degraded=component.only_show_when_not_operational,
    )


def incident_url(page_url: str, incident_id: str) -> str:
    """Return the address of a published incident's own page, under the page's public URL."""
    return f"{page_url}incidents/{incident_id}/"


def _api_incident(
    incident: PublishedIncident, url: str, statuses: dict[int, ComponentStatus], group_ids: dict[int, str]
) -> api.Incident:
    incident_id = str(incident.public_id)
    return api.Incident(
        id=incident_id,
        name=incident.title,
        status=api.IncidentStatus(incident.status),
        impact=Impact(incident.impact),
        created_at=incident.created_at,
        updated_at=incident.updated_at,
        started_at=incident.created_at,
        shortlink=incident_url(url, incident_id),
        monitoring_at=incident.monitoring_at,
        resolved_at=incident.resolved_at,
        updates=tuple(
            api.IncidentUpdate(
                id=str(update.public_id),
                status=api.IncidentStatus(update.status),
                body=update.body,
                created_at=update.created_at,
                updated_at=update.created_at,
                display_at=update.created_at,
                affected_components=tuple(
                    api.AffectedComponent(
                        code=str(change.component.public_id),
                        name=change.component.display_name,
                        old_status=ComponentStatus(change.old_status),
                        new_status=ComponentStatus(change.new_status),
                    )
                    for change in update.affected.all()
                )
                or None,
            )
            for update in incident.updates.all()
        ),
        components=tuple(
            api.Component(
                id=str(component.public_id),
                name=component.display_name,
                status=statuses.get(component.id, ComponentStatus.OPERATIONAL),
                created_at=component.created_at,
                updated_at=component.updated_at,
                position=component.position,
                # The group's public id, as components.json gives it.
                group_id=group_ids.get(component.group_id) if component.group_id is not None else None,
            )
            for component in incident.components.all()
        ),
    )


def page_view(
    *,
    page: StatusPage,
    now: datetime,
    url: str,
    history: bool = True,
    incidents: str = "recent",
    maintenances: bool = True,
) -> PageView:
    """Read everything the page shows at ``now``; ``url`` is its public address (for the JSON).

    ``history`` adds the 90-day bars, the response-time points and the MCP details (the HTML);
    the JSON leaves them out. ``maintenances`` adds the scheduled maintenances (completed
    lately, in progress, upcoming) of the windows that cover the page's components. ``incidents`` picks which published incidents are read:
    ``recent`` (open ones and those resolved within RECENT_INCIDENT_DAYS), ``unresolved``, or
    ``latest`` (the last INCIDENTS_LIMIT).
    """
    groups = list(ComponentGroup.objects.filter(page=page))
    components = _components(page)
    healthchecks = [component.healthcheck for component in components]
    ids = [hc.id for hc in healthchecks]
    # Read with the components (one query for both).
    down = {component.healthcheck_id: getattr(component, "regions_down", 0) for component in components}
    chosen = PublishedIncident.objects.all()
    if incidents == "unresolved":
        chosen = chosen.exclude(status=PublishedIncident.Status.RESOLVED)
    elif incidents == "recent":
        recent = now - timedelta(days=RECENT_INCIDENT_DAYS)
        chosen = chosen.exclude(status=PublishedIncident.Status.RESOLVED, resolved_at__lt=recent)
    listed = _incidents(page, chosen, order=("-created_at", "-id"), limit=api.INCIDENTS_LIMIT)
    views: list[ComponentView] = []
    zone = ZoneInfo(page.time_zone)
    today = now.astimezone(zone).date()
    window_start = datetime.combine(today - timedelta(days=DAYS - 1), datetime.min.time(), tzinfo=zone)
    # The JSON needs only whether maintenance holds each component now; the bars, the 90 days.
    maintenance = _maintenance(healthchecks, page.organization_id, window_start if history else now, now)
    if history:
        intervals = uptime_history(healthchecks=healthchecks, start=window_start, end=now)
        points = _points(ids, now)
        mcp = _mcp_details([c.healthcheck_id for c in components if c.show_mcp_details])
        spans = _spans(_window_incidents(page, window_start))
    # Every open incident is among those listed unless the list was cut: then no query is needed.
    complete = incidents in ("unresolved", "recent") and len(listed) < api.INCIDENTS_LIMIT
    declared = _declared_in(listed) if complete else _declared(page.pk)
    for component in components:
        hc = component.healthcheck
        measured = component_status(
            status=Status(hc.status),
            regions_down=down.get(hc.id, 0),
            in_maintenance=_in_maintenance(maintenance.get(hc.id, ()), now),
        )
        status = _shown(component, measured, declared)
        if not history:
            views.append(ComponentView(component, status, down.get(hc.id, 0)))
            continue
        history_of = intervals[hc.id]
        bars = day_bars(
            now=now,
            time_zone=page.time_zone,
            downtime=history_of.downtime,
            maintenance=maintenance.get(hc.id, ()),
            data=history_of.measured,
            incidents=spans.get(component.id, ()),
        )
        views.append(
            ComponentView(
                component,
                status,
                down.get(hc.id, 0),
                bars=tuple(bars),
                points=tuple(points.get(hc.id, ())),
                mcp=mcp.get(hc.id),
            )
        )
    unresolved = [
        Impact(incident.impact) for incident in listed if incident.status != PublishedIncident.Status.RESOLVED
    ]
    overall = page_status((view.status for view in views), unresolved)
    planned = _scheduled_maintenances(page, views, groups, now, url) if maintenances else []
    return PageView(
        page=page,
        status=overall,
        components=tuple(views),
        groups=tuple(groups),
        incidents=tuple(listed),
        content=_content(page, views, groups, listed, overall, url, planned),
        sections=_sections(views, groups),
    )


def _scheduled_maintenances(
    page: StatusPage,
    views: Sequence[ComponentView],
    groups: Sequence[ComponentGroup],
    now: datetime,
    url: str,
) -> list[api.Incident]:
    """Return the page's scheduled maintenances: each listed occurrence of a window over one of its components.

    Windows and occurrences are monitors' (``maintenance_live`` and ``monitors.maintenance``),
    the same that put a component under maintenance; one query when the organization has no
    window live from LOOKBACK ago to HORIZON ahead, three or four more otherwise.
    """
    start, end = now - scheduled.LOOKBACK, now + scheduled.HORIZON
    windows = maintenance_live(start=start, end=end, organization_ids=[page.organization_id])
    if not windows or not views:
        return []
    check_ids = {view.component.healthcheck_id for view in views}
    tags: dict[int, set[str]] = defaultdict(set)
    if any(window.tags for window in windows):
        rows = HealthcheckTag.objects.filter(healthcheck_id__in=check_ids).values_list(
            "healthcheck_id", "name"
        )
        for hc_id, name in rows:
            tags[hc_id].add(name)
    described = {
        window_id: (name, description, created_at)
        for window_id, name, description, created_at in MaintenanceWindow.objects.filter(
            id__in=[window.id for window in windows]
        ).values_list("id", "name", "description", "created_at")
    }
    group_ids = {group.id: str(group.public_id) for group in groups}
    found: list[api.Incident] = []
    for window in windows:
        affected = [
            _api_component(view, group_ids)
            for view in views
            if window.applies_to(view.component.healthcheck_id, tags.get(view.component.healthcheck_id, ()))
        ]
        if not affected or window.id not in described:
            continue
        name, description, created_at = described[window.id]
        about = scheduled.Window(str(window.public_id), name, description, created_at)
        spans = [(o.start, o.end) for o in occurrences(window.schedule, start, end)]
        for begins, ends in scheduled.shown_occurrences(spans, now):
            found.append(
                scheduled.scheduled_maintenance(about, begins, ends, now=now, url=url, components=affected)
            )
    return found


def _sections(views: Sequence[ComponentView], groups: Sequence[ComponentGroup]) -> tuple[Section, ...]:
    """Return the page's layout: ungrouped components and groups, interleaved by position."""
    members: dict[int, list[ComponentView]] = defaultdict(list)
    loose: list[tuple[int, int, Section]] = []
    for view in views:
        if view.component.group_id is None:
            if view.visible:
                loose.append((view.component.position, 0, Section(None, view.status, (view,))))
        else:
            members[view.component.group_id].append(view)
    for group in groups:
        own = members.get(group.id, [])
        shown = tuple(view for view in own if view.visible)
        if shown:
            loose.append((group.position, 1, Section(group, group_status(v.status for v in own), shown)))
    loose.sort(key=lambda item: (item[0], item[1]))
    return tuple(section for _, _, section in loose)


@dataclass(frozen=True)
class Month:
    """Hold one month of a page's incident history."""

    first_day: date
    incidents: tuple[PublishedIncident, ...]


def incident_history(*, page: StatusPage, year: int, now: datetime) -> list[Month]:
    """Return the months of ``year`` up to now (newest first), each with its incidents, in the page's zone."""
    zone = ZoneInfo(page.time_zone)
    start = datetime(year, 1, 1, tzinfo=zone)
    end = datetime(year + 1, 1, 1, tzinfo=zone)
    incidents = _incidents(
        page,
        PublishedIncident.objects.filter(created_at__gte=start, created_at__lt=end),
        order=("-created_at", "-id"),
        limit=MAX_HISTORY_INCIDENTS,
    )
    by_month: dict[int, list[PublishedIncident]] = defaultdict(list)
    for incident in incidents:
        by_month[incident.created_at.astimezone(zone).month].append(incident)
    local_now = now.astimezone(zone)
    last = 12 if year < local_now.year else local_now.month if year == local_now.year else 0
    return [Month(date(year, month, 1), tuple(by_month.get(month, ()))) for month in range(last, 0, -1)]


def published_incident(*, page: StatusPage, public_id: uuid.UUID) -> PublishedIncident | None:
    """Return the page's published incident ``public_id`` with its updates and components, or None (a draft too)."""
    found = _incidents(
        page, PublishedIncident.objects.filter(public_id=public_id), order=("-created_at", "-id"), limit=1
    )
    return found[0] if found else None


def feed_incidents(*, page: StatusPage, limit: int) -> list[PublishedIncident]:
    """Return the page's last ``limit`` published incidents, newest first, with their updates and components."""
    return _incidents(page, PublishedIncident.objects.all(), order=("-created_at", "-id"), limit=limit)


# --- badges --------------------------------------------------------------------------------------

# A badge URL's key: a component's public id (public pages) or its badge token (any page).
BADGE_KEY = re.compile(r"[A-Za-z0-9_-]{1,64}")
BADGE_NAMES = ("status", *(f"uptime-{period}" for period in PERIODS), "response-time")


def component_by_badge_key(*, key: str, slug: str | None = None, host: str | None = None) -> Component | None:
    """Return the component a badge URL names on the page at ``slug`` (or the verified domain ``host``), or None.

    Any page's component answers to its badge token; a public page's also to its public id. A
    password page's public id names nothing here: its ids show in its JSON to those who signed in.
    One query: the page, the component, its healthcheck and how many of its regions are down.
    """
    if not BADGE_KEY.fullmatch(key):
        return None
    if slug is not None:
        on_page = Q(page__slug=slug)
    else:
        domain = _domain_of(host or "")
        if not domain:
            return None
        on_page = Q(page__custom_domain=domain, page__domain_verified_at__isnull=False)
    wanted = Q(badge_token=key)
    public_id = _uuid(key)
    if public_id is not None:
        wanted |= Q(public_id=public_id, page__access=StatusPage.Access.PUBLIC)
    return (
        Component.objects.filter(on_page, wanted)
        .select_related("healthcheck")
        .only(
            "public_id",
            "page_id",
            "display_name",
            "badge_token",
            "declared_status",
            "healthcheck__id",
            "healthcheck__status",
            "healthcheck__created_at",
            "healthcheck__organization_id",
            # What monitors.selectors.uptime_history reads to bound downtime by the raw results.
            "healthcheck__quorum",
            "healthcheck__interval_seconds",
            "healthcheck__recheck_count",
            "healthcheck__recheck_delay_seconds",
        )
        .annotate(regions_down=Coalesce(_regions_down_count(), 0), declared_open=_declared_open())
        .first()
    )


def _uuid(text: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(text)
    except ValueError:
        return None


def component_badge(*, component: Component, name: str, now: datetime) -> badges.Badge:
    """Return what the component's badge ``name`` (one of BADGE_NAMES) says at ``now``.

    The status is the page's (regions down, maintenance); uptime is the page's maths over a
    rolling period (statuspages.render.periods); the response time is the mean of the chart's
    hourly medians over its last CHART_HOURS. One to three queries, whatever the page holds.
    """
    hc = component.healthcheck
    if name == "status":
        maintenance = _maintenance([hc], hc.organization_id, now, now)
        # Read with the component (component_by_badge_key); asked afresh for one given otherwise.
        down = getattr(component, "regions_down", None)
        measured = component_status(
            status=Status(hc.status),
            regions_down=_regions_down([hc.id]).get(hc.id, 0) if down is None else down,
            in_maintenance=_in_maintenance(maintenance.get(hc.id, ()), now),
        )
        # The page's status for it: what its owners declare counts as it does on the page.
        # Asked only when an open incident declares something of it (read with the component).
        declared = (
            _declared(component.page_id, [component.id]) if getattr(component, "declared_open", True) else {}
        )
        status = _shown(component, measured, declared)
        return badges.status_badge(status, label=component.display_name)
    if name.startswith("uptime-") and name.removeprefix("uptime-") in PERIODS:
        period = name.removeprefix("uptime-")
        start = now - PERIODS[period]
        history = uptime_history(healthchecks=[hc], start=start, end=now)[hc.id]
        maintenance = _maintenance([hc], hc.organization_id, start, now)
        uptime = rolling_uptime(
            now=now,
            period=period,
            downtime=history.downtime,
            maintenance=maintenance.get(hc.id, ()),
            data=history.measured,
        )
        return badges.uptime_badge(period, uptime)
    if name == "response-time":
        points = _points([hc.id], now).get(hc.id, [])
        if points:
            return badges.response_time_badge(sum(ms for _, ms in points) / len(points))
        # No answer to time: say whether it ran and failed throughout, or has not run.
        failed = Rollup.objects.filter(
            healthcheck_id=hc.id,
            period=Rollup.Period.HOUR,
            start__gte=now - timedelta(hours=CHART_HOURS),
            failures__gt=0,
        ).exists()
        return badges.response_time_badge(None, failing=failed)
    raise ValueError(f"no badge named {name!r}")
