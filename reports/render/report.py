"""Shape a report's figures as JSON-ready data and as CSV: plain values in, plain values out.

The HTML (and so the PDF) is drawn from the same data as the JSON (``report_data``), so the
three never disagree. Nothing here reads a clock: the same report gives the same bytes.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from monitors.uptime import NO_ACKNOWLEDGEMENTS, Acknowledgements, Availability, SlaOutcome, sla_outcome
from reports.render.period import Period

DEFINITION = (
    "Availability is duration-based on each healthcheck's overall (quorum) status. Downtime runs from "
    "the first failing result that led to down to the first good result of the recovery; degraded is "
    "not downtime. Maintenance and unmonitored time (before creation, paused, no data) leave the "
    "denominator. Figures are whole seconds; percentages are floored to two decimals, so 100.00 means "
    "no downtime at all. An incident is one downtime episode; MTTR is their mean length. MTTA is the "
    "mean time from an alert incident's opening to its acknowledgement, over the alert incidents "
    "opened in the period and acknowledged."
)
MTTA_NOTE = "MTTA is not reported: no installed app keeps acknowledgements."


@dataclass(frozen=True)
class RegionLatency:
    """Hold one region's runs and response-time percentiles over the period, from the rollups' histograms."""

    region: str
    runs: int
    failures: int
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None


@dataclass(frozen=True)
class CheckReport:
    """Hold one healthcheck's figures over the period and the one before."""

    id: str
    name: str
    current: Availability
    previous: Availability
    target: Decimal  # the healthcheck's own SLA target, or its organization's
    latency: tuple[RegionLatency, ...]
    overall_latency: RegionLatency
    bounds_from_changes: int = 0
    acknowledged: Acknowledgements = NO_ACKNOWLEDGEMENTS
    previous_acknowledged: Acknowledgements = NO_ACKNOWLEDGEMENTS


@dataclass(frozen=True)
class Report:
    """Hold a whole report: the organization's or one healthcheck's."""

    organization: str
    organization_name: str
    scope: str  # "organization" or "healthcheck"
    period: Period
    checks: tuple[CheckReport, ...]
    target: Decimal  # the organization's default SLA target
    acknowledgements_kept: bool = True  # False: no app answered for acknowledgements (MTTA unknown)

    @property
    def current(self) -> Availability:
        """Return the period's figures summed over the healthchecks."""
        return sum((check.current for check in self.checks), Availability(0, 0, 0))

    @property
    def previous(self) -> Availability:
        """Return the previous period's figures summed over the healthchecks."""
        return sum((check.previous for check in self.checks), Availability(0, 0, 0))

    @property
    def acknowledged(self) -> Acknowledgements:
        """Return the period's acknowledgement waits over all the healthchecks (MTTA is their mean, not a mean of means)."""
        return sum((check.acknowledged for check in self.checks), Acknowledgements())

    @property
    def previous_acknowledged(self) -> Acknowledgements:
        """Return the previous period's acknowledgement waits over all the healthchecks."""
        return sum((check.previous_acknowledged for check in self.checks), Acknowledgements())


def _hundredths(percent: str | None) -> int | None:
    if percent is None:
        return None
    whole, _, fraction = percent.partition(".")
    return int(whole) * 100 + int(fraction)


def _signed(hundredths: int) -> str:
    sign = "+" if hundredths >= 0 else "-"
    value = abs(hundredths)
    return f"{sign}{value // 100}.{value % 100:02d}"


def _local(moment: datetime, zone: str) -> str:
    return moment.astimezone(ZoneInfo(zone)).isoformat()


def _period(period: Period) -> dict[str, Any]:
    return {
        "label": period.label,
        "start": _local(period.start, period.time_zone),
        "end": _local(period.end, period.time_zone),
        "time_zone": period.time_zone,
        "seconds": period.seconds,
    }


def _availability(figures: Availability, acknowledged: Acknowledgements) -> dict[str, Any]:
    return {
        "percent": figures.percent,
        "counted_seconds": figures.counted_seconds,
        "downtime_seconds": figures.downtime_seconds,
        "downtime_minutes": figures.downtime_minutes,
        "maintenance_seconds": figures.maintenance_seconds,
        "incidents": figures.incidents,
        "mttr_seconds": figures.mttr_seconds,
        "longest_incident_seconds": figures.longest_seconds,
        "acknowledged_incidents": acknowledged.count,
        "mtta_seconds": acknowledged.mtta_seconds,
    }


def _change(
    current: Availability,
    previous: Availability,
    acknowledged: Acknowledgements,
    before_acked: Acknowledgements,
) -> dict[str, Any]:
    now, before = _hundredths(current.percent), _hundredths(previous.percent)
    mtta, mtta_before = acknowledged.mtta_seconds, before_acked.mtta_seconds
    return {
        "percent_points": _signed(now - before) if now is not None and before is not None else None,
        "downtime_seconds": current.downtime_seconds - previous.downtime_seconds,
        "incidents": current.incidents - previous.incidents,
        "mtta_seconds": mtta - mtta_before if mtta is not None and mtta_before is not None else None,
    }


def _sla(outcome: SlaOutcome) -> dict[str, Any]:
    return {
        "target": f"{outcome.target:.3f}",
        "met": outcome.met,
        "error_budget_seconds": outcome.budget_seconds,
        "error_budget_used_percent": outcome.budget_used_percent,
    }


def _latency(latency: RegionLatency) -> dict[str, Any]:
    runs_ok = latency.runs - latency.failures
    return {
        "region": latency.region,
        "runs": latency.runs,
        "failures": latency.failures,
        # The counted-runs success ratio: a secondary figure beside the duration-based availability.
        "run_success_percent": (
            f"{runs_ok * 10_000 // latency.runs // 100}.{runs_ok * 10_000 // latency.runs % 100:02d}"
            if latency.runs
            else None
        ),
        "p50_ms": latency.p50_ms,
        "p95_ms": latency.p95_ms,
        "p99_ms": latency.p99_ms,
    }


def _figures(
    current: Availability,
    previous: Availability,
    target: Decimal,
    acknowledged: Acknowledgements,
    before_acked: Acknowledgements,
) -> dict[str, Any]:
    return {
        "availability": _availability(current, acknowledged),
        "previous": _availability(previous, before_acked),
        "change": _change(current, previous, acknowledged, before_acked),
        "sla": _sla(sla_outcome(current, target=target)),
    }


def report_data(report: Report) -> dict[str, Any]:
    """Return the report as JSON-ready data: what the API answers and the template draws."""
    checks = []
    for check in report.checks:
        checks.append(
            {
                "id": check.id,
                "name": check.name,
                **_figures(
                    check.current,
                    check.previous,
                    check.target,
                    check.acknowledged,
                    check.previous_acknowledged,
                ),
                "response_times": {
                    "all_regions": _latency(check.overall_latency),
                    "regions": [_latency(region) for region in check.latency],
                },
                "downtime_bounds_from_status_changes": check.bounds_from_changes,
            }
        )
    summary_target = report.target if report.scope == "organization" else report.checks[0].target
    return {
        "organization": {"slug": report.organization, "name": report.organization_name},
        "scope": report.scope,
        "period": _period(report.period),
        "previous_period": _period(report.period.previous()),
        "summary": _figures(
            report.current,
            report.previous,
            summary_target,
            report.acknowledged,
            report.previous_acknowledged,
        ),
        "healthchecks": checks,
        "definition": DEFINITION,
        "notes": [] if report.acknowledgements_kept else [MTTA_NOTE],
    }


CSV_COLUMNS = (
    "scope",
    "healthcheck_id",
    "healthcheck",
    "region",
    "period_start",
    "period_end",
    "time_zone",
    "availability_percent",
    "counted_seconds",
    "downtime_seconds",
    "downtime_minutes",
    "maintenance_seconds",
    "incidents",
    "mttr_seconds",
    "longest_incident_seconds",
    "acknowledged_incidents",
    "mtta_seconds",
    "sla_target",
    "sla_met",
    "error_budget_seconds",
    "error_budget_used_percent",
    "previous_availability_percent",
    "previous_downtime_seconds",
    "previous_incidents",
    "previous_mtta_seconds",
    "runs",
    "failures",
    "p50_ms",
    "p95_ms",
    "p99_ms",
)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _figure_cells(figures: dict[str, Any]) -> dict[str, Any]:
    current, previous, sla = figures["availability"], figures["previous"], figures["sla"]
    return {
        "availability_percent": current["percent"],
        **{
            key: current[key]
            for key in (
                "counted_seconds",
                "downtime_seconds",
                "downtime_minutes",
                "maintenance_seconds",
                "incidents",
                "mttr_seconds",
                "longest_incident_seconds",
                "acknowledged_incidents",
                "mtta_seconds",
            )
        },
        "sla_target": sla["target"],
        "sla_met": sla["met"],
        "error_budget_seconds": sla["error_budget_seconds"],
        "error_budget_used_percent": sla["error_budget_used_percent"],
        "previous_availability_percent": previous["percent"],
        "previous_downtime_seconds": previous["downtime_seconds"],
        "previous_incidents": previous["incidents"],
        "previous_mtta_seconds": previous["mtta_seconds"],
    }


def _latency_cells(latency: dict[str, Any]) -> dict[str, Any]:
    return {key: latency[key] for key in ("runs", "failures", "p50_ms", "p95_ms", "p99_ms")}


def report_csv(data: dict[str, Any]) -> str:
    """Return the report's data as CSV: a row for the whole scope, one per healthcheck, one per region.

    A healthcheck's row carries its response times over all regions; the region rows that follow
    carry only the region's runs and percentiles. Formula-like text is quoted as text (a leading
    apostrophe), since a healthcheck's name is the customer's and the file opens in spreadsheets.
    """
    period = data["period"]
    common = {
        "period_start": period["start"],
        "period_end": period["end"],
        "time_zone": period["time_zone"],
    }
    rows: list[dict[str, Any]] = []
    if data["scope"] == "organization":
        rows.append(
            {"scope": "organization", "healthcheck": data["organization"]["name"], **common}
            | _figure_cells(data["summary"])
        )
    for check in data["healthchecks"]:
        base = {"healthcheck_id": check["id"], "healthcheck": check["name"], **common}
        rows.append(
            {"scope": "healthcheck", **base}
            | _figure_cells(check)
            | _latency_cells(check["response_times"]["all_regions"])
        )
        for region in check["response_times"]["regions"]:
            rows.append({"scope": "region", **base, "region": region["region"]} | _latency_cells(region))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        writer.writerow([_safe(_cell(row.get(column))) for column in CSV_COLUMNS])
    return out.getvalue()


def _safe(text: str) -> str:
    # CSV injection: a cell a spreadsheet would run as a formula is kept as text.
    if text[:1] in ("=", "+", "-", "@", "\t", "\r") and not _number(text):
        return "'" + text
    return text


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
