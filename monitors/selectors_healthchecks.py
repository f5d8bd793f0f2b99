"""Read healthchecks and what a batch runs: regions, engine configs, results, the tool lists."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import QuerySet

from monitors.models import (
    Healthcheck,
    Organization,
    ProbeResult,
    Region,
    RegionState,
    ToolList,
    ToolListVersion,
)
from monitors.secrets import SecretUnreadable, with_secret_headers
from probes.checks import CheckConfig, UnknownCheckKind, check_kind
from probes.config import ConfigError
from probes.text import storable
from probes.types import Status, ToolInfo

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


def regions_enabled() -> QuerySet[Region]:
    return Region.objects.filter(enabled=True)


def healthchecks_overdue_count(*, before: datetime) -> int:
    """Count the unpaused healthchecks whose next check was due before ``before`` (the hc_due index)."""
    return Healthcheck.objects.filter(paused=False, next_check_at__lt=before).count()


def regions_allowed(*, organization: Organization) -> QuerySet[Region]:
    """Return the enabled regions the organization's plan allows."""
    return organization.plan.allowed_regions.filter(enabled=True).order_by("slug")


@dataclass(frozen=True)
class CheckConfigs:
    """The engine configs of a batch's healthcheck ids: those that run, and why the others can't."""

    runnable: dict[int, CheckConfig]
    # Healthcheck id -> the sentence its result says: the check is down until someone fixes it.
    unrunnable: dict[int, str]


def healthcheck_target(*, healthcheck: Healthcheck) -> str:
    """Return what ``healthcheck`` watches (its type's target) from its stored config; "" when that no longer parses.

    Its header values play no part in a target, so they are left out rather than decrypted.
    """
    config = {key: value for key, value in healthcheck.config.items() if key != "headers"}
    try:
        kind = check_kind(healthcheck.type)
        return kind.target(kind.parse(config))
    except (UnknownCheckKind, ConfigError, ValueError, TypeError, AttributeError):
        return ""


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
            data = with_secret_headers(config, secret_headers)
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
