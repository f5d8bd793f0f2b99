"""Read the directory: visible listings, a listing as the scorecard's evidence, the ranked pages and a server.

The directory page and the server page are a fixed number of queries each (pinned in
tests/directory/test_directory_pages.py): the ranked page is one count and one query of stored
scorecards joined to their listings, read in the ranking index's order; a server is one query and
its remotes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from django.db.models import F, Q, QuerySet
from django.utils.dateparse import parse_datetime

from directory.github import repository_of
from directory.models import Listing, ListingScorecard, RepositoryLicence
from directory.query import Kind
from monitors import scorecard
from monitors.scorecard import CheckResult, Evidence, LicenceLookup, ListingSource, LookupStatus, Verdict
from monitors.scorecard import Listing as ListingEvidence


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


def listing_scorecard_evidence(listing: Listing) -> Evidence:
    """Return the scorecard's evidence of a listing as far as the registry and GitHub know it.

    The endpoint is the first remote's URL (a local-only listing has none, so it gets the
    publisher checks only); the probing evidence (1–16) comes with directory probing.
    """
    remotes = list(listing.remotes.all())
    return Evidence(
        endpoint_url=remotes[0].url if remotes else None,
        listing=listing_evidence(listing),
        licence=licence_lookup(listing),
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
    # PROBE EVIDENCE HOOK: once directory probing lands, read checks 1–16 here, in a fixed
    # number of queries for the whole chunk, and merge them:
    #     probed = probe_evidence(list(publisher), now=now)
    probed: dict[int, Evidence] = {}
    return with_probe_evidence(publisher, probed)


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
    F("observed_at").desc(nulls_last=True),
    F("listing_id").asc(),
)


def directory_scorecards(*, kind: Kind, query: str = "") -> QuerySet[ListingScorecard]:
    """Return the stored scorecards of the visible latest listings of ``kind`` matching ``query``, ranked, each with its listing.

    Ranked by passed checks, then core checks (1–4), sampled success, p50 latency (lower first),
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
