"""Read the MCP scorecard's evidence (issue 14): attempts, tallies, listings, licences."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
from django.db.models import Count, Q, QuerySet, Subquery, Sum

from monitors import scorecard
from monitors.models import Healthcheck, HealthcheckListing, ProbeResult, Rollup, ToolChange
from monitors.selectors_healthchecks import ToolListView, tool_list_latest
from monitors.signals import licence_asked
from probes.checks import check_kind
from probes.checks.mcp import MCP
from probes.oauth import prm_candidates
from probes.types import Access, SigninDiscovery


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
            f"Only MCP healthchecks have a scorecard, not {check_kind(healthcheck.type).title}s."
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
