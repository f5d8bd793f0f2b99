"""Read the directory: visible listings, a listing as the scorecard's evidence (probes 1–16, publisher 17–22), the ranked pages and a server.

The directory page and the server page are a fixed number of queries each (pinned in
tests/directory/test_directory_pages.py): the ranked page is one count and one query of stored
scorecards joined to their listings, read in the ranking index's order; a server is one query and
its remotes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from django.db.models import F, Q, QuerySet, Sum
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from directory import latency
from directory.github import repository_of
from directory.models import (
    Listing,
    ListingProbeHour,
    ListingProbeState,
    ListingRemote,
    ListingScorecard,
    ListingToolChange,
    ListingToolList,
    RepositoryLicence,
)
from directory.probing import tools_of
from directory.query import Kind
from monitors import scorecard
from monitors.scorecard import CheckResult, Evidence, LicenceLookup, ListingSource, LookupStatus, Verdict
from monitors.scorecard import Listing as ListingEvidence
from monitors.selectors import SCORECARD_LATENCY, SCORECARD_RELIABILITY, resource_metadata_of


def visible_listings() -> QuerySet[Listing]:
    """Return each server's latest listing the directory shows: deleted ones hidden, deprecated ones kept."""
    return (
        Listing.objects.filter(is_latest=True)
        .exclude(status=Listing.Status.DELETED)
        .prefetch_related("remotes")
        .order_by("name")
    )


def listing_evidence(listing: Listing) -> ListingEvidence:
    """Return what the listing says, as the publisher checks read it.

    The registry verified the namespace when it was published (17); the website (18), the
    repository (19, 20) and the update date (21) are the registry's own fields. It was observed
    when Uptimy last read it. A remote declaring a required header declares credentials (10).
    """
    remotes = list(listing.remotes.all())
    return ListingEvidence(
        source=ListingSource.REGISTRY,
        name=listing.name,
        observed_at=listing.synced_at,
        website_url=listing.website_url or None,
        repository_url=listing.repository_url or None,
        updated_at=listing.updated_at,
        declares_credentials=any(remote.headers_required for remote in remotes),
    )


def licence_lookup(listing: Listing) -> LicenceLookup:
    """Return GitHub's licence lookup of the listing's repository; not done for none, or one not on GitHub."""
    repository = repository_of(listing.repository_url)
    if repository is None:
        return LicenceLookup(status=LookupStatus.NOT_DONE)
    owner, repo = repository
    found = RepositoryLicence.objects.filter(owner=owner.lower(), repo=repo.lower()).first()
    if found is None:
        return LicenceLookup(status=LookupStatus.NOT_DONE)
    return LicenceLookup(
        status=LookupStatus(found.status),
        looked_up_at=found.looked_up_at,
        spdx_id=found.spdx_id or None,
        osi_approved=found.osi_approved,
        list_version=found.list_version or None,
    )


def listing_scorecard_evidence(listing: Listing, *, now: datetime | None = None) -> Evidence:
    """Return the scorecard's evidence of a listing: its probes (:func:`probe_evidence`), the registry and GitHub.

    A local-only listing has no endpoint, so it gets the publisher checks only.
    """
    probed = probe_evidence([listing.id], now=now or timezone.now())[listing.id]
    return replace(probed, listing=listing_evidence(listing), licence=licence_lookup(listing))


def probe_evidence(listing_ids: Iterable[int], *, now: datetime) -> dict[int, Evidence]:
    """Return each listing's probe evidence (checks 1–16) at ``now``, by id; six queries for any number of listings.

    The endpoint is the remote the latest probe reached, else the first the directory would
    probe (not templated), else the first remote; a listing without remotes has none. Windows
    are whole UTC hours, as for healthchecks (monitors.selectors.scorecard_evidence): the
    current one and the 7×24 (30×24) before it, summed from ListingProbeHour, never from raw
    probes; the 7-day p50 and p95 are read from the hours' latency histograms
    (:mod:`directory.latency`). ``listing`` and ``licence`` are left None: :func:`listing_scorecard_evidence` (or
    a caller with its own publisher evidence) adds them with ``dataclasses.replace``.
    """
    ids = sorted(set(listing_ids))
    hour = now.replace(minute=0, second=0, microsecond=0)
    start_30d, start_7d = hour - SCORECARD_RELIABILITY, hour - SCORECARD_LATENCY
    states: dict[int, dict[str, Any]] = {
        row["listing_id"]: dict(row) for row in ListingProbeState.objects.filter(listing_id__in=ids).values()
    }
    endpoints = _endpoints(ids)
    counts = _window_counts(ids, start_30d, start_7d, now)
    histograms = _latency_histograms(ids, start_7d, now)
    changes: dict[int, list[tuple[int, int, int]]] = {}
    for listing_id, change_id, removed, required in (
        ListingToolChange.objects.filter(listing_id__in=ids, at__gte=start_30d, at__lte=now)
        .filter(Q(removed_count__gt=0) | Q(new_required_inputs_count__gt=0))
        .order_by("at", "id")
        .values_list("listing_id", "id", "removed_count", "new_required_inputs_count")
    ):
        changes.setdefault(listing_id, []).append((change_id, removed, required))
    lists = {
        listing_id: (tools, since)
        for listing_id, tools, since in ListingToolList.objects.filter(listing_id__in=ids).values_list(
            "listing_id", "tools", "current_since"
        )
    }
    evidence = {}
    for listing_id in ids:
        state = states.get(listing_id)
        endpoint = (state["url"] if state and state["url"] else None) or endpoints.get(listing_id)
        evidence[listing_id] = _evidence_of(
            endpoint,
            state,
            counts.get(listing_id, {}),
            changes.get(listing_id, []),
            lists.get(listing_id),
            histograms.get(listing_id, []),
        )
    return evidence


def _latency_histograms(ids: list[int], start_7d: datetime, now: datetime) -> dict[int, latency.Histogram]:
    """Return each listing's 7-day histogram of successful times, summed from its hours'; one query."""
    hours: dict[int, list[tuple[datetime, list[list[int]]]]] = {}
    for listing_id, hour, histogram in ListingProbeHour.objects.filter(
        listing_id__in=ids, hour__gte=start_7d, hour__lte=now, successes__gt=0
    ).values_list("listing_id", "hour", "latency"):
        hours.setdefault(listing_id, []).append((hour, histogram or []))
    return {
        listing_id: latency.window(rows, now=now, length=SCORECARD_LATENCY)
        for listing_id, rows in hours.items()
    }


def _endpoints(ids: list[int]) -> dict[int, str]:
    """Return each listing's first probeable remote's URL, else its first remote's; one query."""
    first: dict[int, str] = {}
    probeable: dict[int, str] = {}
    for listing_id, url, templated in (
        ListingRemote.objects.filter(listing_id__in=ids)
        .order_by("listing_id", "position")
        .values_list("listing_id", "url", "templated")
    ):
        first.setdefault(listing_id, url)
        if not templated:
            probeable.setdefault(listing_id, url)
    return {**first, **probeable}


def _window_counts(
    ids: list[int], start_30d: datetime, start_7d: datetime, now: datetime
) -> dict[int, dict[str, Any]]:
    """Return each listing's 30-day attempts and successes and 7-day latency counts; one query."""
    last_week = Q(hour__gte=start_7d)
    rows = (
        ListingProbeHour.objects.filter(listing_id__in=ids, hour__gte=start_30d, hour__lte=now)
        .values("listing_id")
        .annotate(
            attempts_30d=Sum("attempts"),
            successes_30d=Sum("successes"),
            successes_7d=Sum("successes", filter=last_week),
            within_1s_7d=Sum("successes_1s", filter=last_week),
            within_3s_7d=Sum("successes_3s", filter=last_week),
        )
        .order_by()
    )
    return {row["listing_id"]: dict(row) for row in rows}


def _evidence_of(
    endpoint: str | None,
    state: dict[str, Any] | None,
    counts: dict[str, Any],
    changes: list[tuple[int, int, int]],
    tool_list: tuple[object, datetime] | None,
    histogram: latency.Histogram,
) -> Evidence:
    latest = _attempt_of_state(state) if state else None
    listed_at = state["listed_at"] if state else None
    successes_30d = counts.get("successes_30d") or 0
    tools = None
    if tool_list is not None:
        stored, since = tool_list
        tools = scorecard.ToolList(tools_of(stored), listed_at or since)
    metadata = None
    if latest is not None and state is not None:
        metadata = resource_metadata_of(
            discovery=state["signin_discovery"], endpoint=endpoint or "", at=latest.at
        )
    return Evidence(
        endpoint_url=endpoint,
        latest=latest,
        latency_7d=scorecard.LatencyWindow(
            samples=counts.get("successes_7d") or 0,
            within_1s=counts.get("within_1s_7d") or 0,
            within_3s=counts.get("within_3s_7d") or 0,
            observed_at=listed_at,
            p50_ms=latency.quantile(histogram, 50),
            p95_ms=latency.quantile(histogram, 95),
        ),
        attempts_30d=scorecard.AttemptCounts(
            attempts=counts.get("attempts_30d") or 0,
            successes=successes_30d,
            observed_at=latest.at if latest else None,
        ),
        tool_history_30d=scorecard.ToolHistory(
            successes=successes_30d,
            removals=sum(1 for _, removed, _ in changes if removed),
            new_required=sum(1 for _, _, required in changes if required),
            observed_at=listed_at,
            change_ids=tuple(change_id for change_id, _, _ in changes),
        ),
        tools=tools,
        resource_metadata=metadata,
    )


def _attempt_of_state(state: dict[str, Any]) -> scorecard.Attempt | None:
    """Return the listing's latest attempt (None before its first probe); the directory probes keyless."""
    if state["probed_at"] is None:
        return None
    return scorecard.Attempt(
        at=state["probed_at"],
        tools_listed=state["tool_count"] is not None,
        http_status=state["http_status"],
        duration_ms=state["total_ms"],
        protocol=state["protocol"] or None,
        server_name=state["server_name"] or None,
        tool_count=state["tool_count"],
        with_key=False,
        reason=state["reason"],
    )


def _licence_lookup_of(row: RepositoryLicence) -> LicenceLookup:
    return LicenceLookup(
        status=LookupStatus(row.status),
        looked_up_at=row.looked_up_at,
        spdx_id=row.spdx_id or None,
        osi_approved=row.osi_approved,
        list_version=row.list_version or None,
    )


def listings_scorecard_evidence(listings: Sequence[Listing], *, now: datetime) -> dict[int, Evidence]:
    """Return each listing's scorecard evidence by listing id, in one query for every licence.

    The listings come with their remotes prefetched (else one query each). The publisher
    evidence (17–22) is the registry's and GitHub's, as :func:`listing_scorecard_evidence` reads
    it for one listing; the probing evidence (1–16) is merged in :func:`with_probe_evidence`.
    """
    repositories = {listing.pk: repository_of(listing.repository_url) for listing in listings}
    keys = {(owner.lower(), repo.lower()) for owner, repo in filter(None, repositories.values())}
    licences: dict[tuple[str, str], LicenceLookup] = {}
    if keys:
        rows = RepositoryLicence.objects.filter(
            owner__in={owner for owner, _ in keys}, repo__in={repo for _, repo in keys}
        )
        licences = {(row.owner, row.repo): _licence_lookup_of(row) for row in rows}
    publisher: dict[int, Evidence] = {}
    for listing in listings:
        remotes = list(listing.remotes.all())
        repository = repositories[listing.pk]
        lookup = licences.get((repository[0].lower(), repository[1].lower())) if repository else None
        publisher[listing.pk] = Evidence(
            endpoint_url=remotes[0].url if remotes else None,
            listing=listing_evidence(listing),
            licence=lookup or LicenceLookup(status=LookupStatus.NOT_DONE),
        )
    # Directory probing's evidence (checks 1–16): six queries for the whole chunk.
    return with_probe_evidence(publisher, probe_evidence(list(publisher), now=now))


def with_probe_evidence(
    publisher: Mapping[int, Evidence], probed: Mapping[int, Evidence]
) -> dict[int, Evidence]:
    """Return the publisher evidence with directory probing's (checks 1–16) merged in: the one place they meet.

    Probing's evidence carries no listing and no licence; the publisher's carries nothing else.
    A listing probing has nothing for keeps its publisher evidence alone (its probe checks are
    then not measured).
    """
    merged: dict[int, Evidence] = {}
    for listing_id, evidence in publisher.items():
        probe = probed.get(listing_id)
        merged[listing_id] = (
            evidence
            if probe is None
            else replace(
                probe,
                endpoint_url=probe.endpoint_url or evidence.endpoint_url,
                listing=evidence.listing,
                licence=evidence.licence,
            )
        )
    return merged


# --- the public directory ----------------------------------------------------------------------


# The directory's order; ``scorecard_rank`` (directory.models) is this order, so a page is read in
# index order and stops after its rows, never sorting every listing.
RANKING = (
    F("passed").desc(),
    F("core_passed").desc(),
    F("success_ratio").desc(nulls_last=True),
    F("p50_ms").asc(nulls_last=True),
    F("p95_ms").asc(nulls_last=True),
    F("observed_at").desc(nulls_last=True),
    F("listing_id").asc(),
)


def directory_scorecards(*, kind: Kind, query: str = "") -> QuerySet[ListingScorecard]:
    """Return the stored scorecards of the visible latest listings of ``kind`` matching ``query``, ranked, each with its listing.

    Ranked by passed checks, then core checks (1–4), sampled success, p50 then p95 latency (lower first),
    recency, then the listing's id (the oldest listing first). ``query`` matches the name, title or
    description, case ignored. A listing is ranked once its first scorecard is computed (the
    recompute runs right after an import and every UPTIMY_DIRECTORY_SCORECARDS_SECONDS); its
    page answers before. One query per page and one to count.
    """
    # Only shown listings have a stored scorecard (the sync removes one as it hides its listing),
    # so neither the page nor its count joins the listings to filter them.
    cards = (
        ListingScorecard.objects.filter(remote=kind is Kind.REMOTE)
        .select_related("listing")
        # A page shows the figures, not each check: the results (a few kilobytes each) stay unread.
        .defer("results", "listing__raw", "listing__packages")
    )
    if query:
        cards = cards.filter(
            Q(listing__name__icontains=query)
            | Q(listing__title__icontains=query)
            | Q(listing__description__icontains=query)
        )
    return cards.order_by(*RANKING)


def listing_by_name(name: str) -> Listing | None:
    """Return the visible latest listing named ``name`` with its remotes and stored scorecard, or None."""
    return (
        Listing.objects.filter(is_latest=True, name=name)
        .exclude(status=Listing.Status.DELETED)
        .select_related("scorecard")
        .prefetch_related("remotes")
        .defer("raw")
        .first()
    )


def scorecard_of(listing: Listing) -> ListingScorecard | None:
    """Return the listing's stored scorecard (joined by the readers above), or None before the first recompute."""
    try:
        return listing.scorecard
    except ListingScorecard.DoesNotExist:
        return None


def stored_results(card: ListingScorecard) -> tuple[CheckResult, ...]:
    """Return the stored results as the scorecard's own values, so freshness is judged at read time."""
    results = []
    for item in card.results:
        observed = item.get("observed_at")
        results.append(
            CheckResult(
                number=int(item["number"]),
                name=str(item["name"]),
                verdict=Verdict(item["verdict"]),
                observed_at=parse_datetime(observed) if isinstance(observed, str) else None,
                reason=str(item.get("reason", "")),
                evidence=item.get("evidence") or {},
            )
        )
    return tuple(results)


@dataclass(frozen=True, slots=True)
class CheckRow:
    """One check as the server page and the API show it: its rule, verdict, date, freshness and evidence."""

    number: int
    name: str
    rule: str
    verdict: str  # passed | failed | not_measured
    verdict_words: str
    observed_at: datetime | None
    outdated: bool
    outdated_label: str | None
    reason: str
    evidence: Mapping[str, Any]


def check_rows(card: ListingScorecard, *, now: datetime) -> list[CheckRow]:
    """Return the stored scorecard's checks in order, each with its one-line rule and freshness at ``now``."""
    return [
        CheckRow(
            number=result.number,
            name=result.name,
            rule=scorecard.RULES[result.number],
            verdict=result.verdict.value,
            verdict_words=scorecard.VERDICT_WORDS[result.verdict],
            observed_at=result.observed_at,
            outdated=scorecard.is_outdated(result, now=now),
            outdated_label=scorecard.freshness_label(result, now=now),
            reason=result.reason,
            evidence=result.evidence,
        )
        for result in stored_results(card)
    ]


def badge_figures(name: str) -> tuple[int | None, int | None] | None:
    """Return the passed and total checks of the visible listing ``name`` (None, None before its first scorecard), or None."""
    found = (
        Listing.objects.filter(is_latest=True, name=name)
        .exclude(status=Listing.Status.DELETED)
        .values_list("scorecard__passed", "scorecard__total")
        .first()
    )
    return None if found is None else (found[0], found[1])
