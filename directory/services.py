"""Write the directory: upsert registry entries as listings, run a full or incremental sync, look up licences.

The stored scorecards are recomputed here too (:func:`scorecards_recompute`). What probing the
directory finds is written by ``directory.services_probing``; its writers stay importable from here.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import DataError, IntegrityError, transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Least

from directory.github import AnswerStatus, GitHubClient, LicenceAnswer, repository_of
from directory.models import (
    RAW_MAX_BYTES,
    Listing,
    ListingProbeHour,
    ListingProbeState,
    ListingRemote,
    ListingScorecard,
    ListingToolChange,
    ListingToolList,
    RegistrySync,
    RepositoryLicence,
)
from directory.registry import RegistryClient, RegistryError, ServerEntry
from directory.selectors import listings_scorecard_evidence
from directory.services_probing import listing_probes_claim as listing_probes_claim
from directory.services_probing import listing_probes_prune as listing_probes_prune
from directory.services_probing import listing_probes_record as listing_probes_record
from directory.services_probing import listing_probes_return as listing_probes_return
from monitors.scorecard import (
    CORE_CHECKS,
    Evidence,
    Scorecard,
    Verdict,
    licence_of,
    scorecard,
)
from monitors.selectors import listed_repository_urls

logger = logging.getLogger(__name__)


@dataclass
class SyncReport:
    """What one sync did: entries stored, rejected (with reasons), pages read, and the error that stopped it."""

    full: bool
    pages: int = 0
    stored: int = 0
    rejected: list[str] = field(default_factory=list)
    # Entries stored without a field the directory cannot show, and why.
    left_out: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _raw_of(entry: ServerEntry) -> dict[str, object]:
    text = json.dumps(entry.raw, separators=(",", ":"), default=str)
    if len(text.encode()) <= RAW_MAX_BYTES:
        return dict(entry.raw)
    return {"truncated": True, "bytes": len(text.encode())}


def listings_upsert(
    *, entries: Iterable[ServerEntry], now: datetime, latest_asked: bool = True
) -> tuple[int, list[str]]:
    """Store each entry on its (name, version), replacing its remotes; return how many were stored and why others were not.

    An entry marked latest takes the flag from the name's other versions, so each name has at
    most one latest listing. An entry that does not say (the schema makes ``isLatest`` optional)
    is latest when the page lists latest versions only (``latest_asked``: a full sync asks
    ``version=latest``); otherwise it keeps the flag it had, and a new version is latest only
    while its name has no latest one. One transaction per call (one page), a savepoint per
    entry: an entry the database refuses is left out alone, never the page.
    """
    stored, refused = 0, []
    with transaction.atomic():
        for entry in entries:
            try:
                with transaction.atomic():
                    _listing_store(entry, now=now, is_latest=_latest_of(entry, latest_asked=latest_asked))
            except (DataError, IntegrityError) as error:
                refused.append(
                    f"{entry.name} {entry.version}: the database refused it ({type(error).__name__})"
                )
            else:
                stored += 1
    return stored, refused


def _probe_history_follow(*, to: Listing, now: datetime) -> None:
    """Give a server's new latest version the probe history of its most recently probed other version.

    The scorecard judges a server, not one of its versions: its 30 days of attempts and its tool
    list's changes (a new version that drops a tool is what check 9 is for) go on across
    publishes. A version that was probed before (the registry moved latest back to it) keeps its
    own. The new version is probed at its next slot, or at once: its remote may have moved.
    """
    if ListingProbeState.objects.filter(listing=to).exists():
        return
    source = (
        ListingProbeState.objects.filter(listing__name=to.name)
        .exclude(listing=to)
        .order_by(F("probed_at").desc(nulls_last=True))
        .values_list("listing_id", flat=True)
        .first()
    )
    if source is not None:
        _probe_history_move(from_id=source, to=to, now=now)


def _probe_history_move(*, from_id: int, to: Listing, now: datetime) -> None:
    """Move one listing's probe state, hourly counts, tool list and tool changes to ``to``."""
    moved = ListingProbeState.objects.filter(listing_id=from_id).update(
        listing=to, next_probe_at=Least(F("next_probe_at"), Value(now))
    )
    if not moved:
        return
    ListingProbeHour.objects.filter(listing_id=from_id).update(listing=to)
    ListingToolChange.objects.filter(listing_id=from_id).update(listing=to)
    if not ListingToolList.objects.filter(listing=to).exists():
        ListingToolList.objects.filter(listing_id=from_id).update(listing=to)


def _latest_of(entry: ServerEntry, *, latest_asked: bool) -> bool:
    """Return whether the entry is its name's latest version: as it says, else as ``listings_upsert`` explains."""
    if entry.is_latest is not None:
        return entry.is_latest
    if latest_asked:
        return True
    stored = (
        Listing.objects.filter(name=entry.name, version=entry.version)
        .values_list("is_latest", flat=True)
        .first()
    )
    if stored is not None:
        return stored
    return not Listing.objects.filter(name=entry.name, is_latest=True).exists()


def _listing_store(entry: ServerEntry, *, now: datetime, is_latest: bool) -> None:
    listing, _ = Listing.objects.update_or_create(
        name=entry.name,
        version=entry.version,
        defaults={
            "is_latest": is_latest,
            "title": entry.title or "",
            "description": entry.description,
            "website_url": entry.website_url or "",
            "repository_url": entry.repository_url or "",
            "repository_source": entry.repository_source or "",
            "packages": [
                {
                    "registry_type": package.registry_type,
                    "identifier": package.identifier,
                    "version": package.version,
                    "transport": package.transport,
                }
                for package in entry.packages
            ],
            "status": entry.status.value,
            "status_message": entry.status_message or "",
            "published_at": entry.published_at,
            "updated_at": entry.updated_at,
            "synced_at": now,
            "raw": _raw_of(entry),
        },
    )
    if is_latest:
        Listing.objects.filter(name=entry.name, is_latest=True).exclude(pk=listing.pk).update(is_latest=False)
        _probe_history_follow(to=listing, now=now)
        # A stored scorecard belongs to a shown listing only (the directory counts them without a join).
        ListingScorecard.objects.filter(listing__name=entry.name).exclude(listing=listing).delete()
    if not is_latest or entry.status.value == Listing.Status.DELETED:
        ListingScorecard.objects.filter(listing=listing).delete()
    listing.remotes.all().delete()
    ListingRemote.objects.bulk_create(
        ListingRemote(
            listing=listing,
            position=position,
            transport=remote.transport.value,
            url=remote.url,
            templated=remote.templated,
            headers_required=remote.headers_required,
            header_names=list(remote.header_names),
        )
        for position, remote in enumerate(entry.remotes)
    )


def registry_sync(*, client: RegistryClient, full: bool, now: datetime) -> SyncReport:
    """Read the registry into the directory: everything (``full``), or what changed since the high-water mark.

    Each page is stored as it arrives, so an error on a later page keeps the earlier ones; the
    high-water mark (the latest ``updatedAt`` seen) moves only when every page was read, so the
    next incremental sync asks again from where this one could not finish. Without a mark an
    incremental sync is a full one.
    """
    state, _ = RegistrySync.objects.get_or_create(base_url=client.base_url)
    since = None if full else state.updated_since
    report = SyncReport(full=since is None)
    high_water = state.updated_since
    try:
        for page in client.pages(updated_since=since):
            report.pages += 1
            for rejected in page.rejected:
                reason = (
                    f"{rejected.name or f'entry {rejected.index}'} (page {report.pages}): {rejected.reason}"
                )
                logger.warning("registry sync skipped %s", reason)
                report.rejected.append(reason)
            stored, refused = listings_upsert(entries=page.entries, now=now, latest_asked=since is None)
            report.stored += stored
            for reason in refused:
                logger.warning("registry sync skipped %s", reason)
                report.rejected.append(reason)
            for entry in page.entries:
                report.left_out.extend(f"{entry.name} {entry.version}: {note}" for note in entry.left_out)
                if entry.updated_at is not None and (high_water is None or entry.updated_at > high_water):
                    high_water = entry.updated_at
    except RegistryError as error:
        report.error = str(error)
        logger.warning("registry sync stopped after %d pages: %s", report.pages, error)
    state.last_run_at = now
    state.last_error = report.error or ""
    if report.ok:
        state.updated_since = high_water
        if report.full:
            state.last_full_at = now
    state.save()
    return report


LICENCE_MAX_AGE = timedelta(days=7)


@dataclass
class LicenceReport:
    """What one round of licence lookups did."""

    looked_up: int = 0
    failed: int = 0
    rate_limited: bool = False


def _repositories_due(*, now: datetime, limit: int) -> list[tuple[str, str]]:
    """Return the GitHub repositories of visible listings (and customers' own) never looked up, or not within LICENCE_MAX_AGE, oldest first."""
    fresh = {
        (licence.owner, licence.repo): licence.looked_up_at
        for licence in RepositoryLicence.objects.only("owner", "repo", "looked_up_at")
    }
    urls = (
        Listing.objects.filter(is_latest=True)
        .exclude(status=Listing.Status.DELETED)
        .exclude(repository_url="")
        .values_list("repository_url", flat=True)
        .distinct()
    )
    due: dict[tuple[str, str], datetime | None] = {}
    for url in [*urls, *listed_repository_urls()]:
        repository = repository_of(url)
        if repository is None:
            continue
        key = (repository[0].lower(), repository[1].lower())
        looked_up_at = fresh.get(key)
        if looked_up_at is None or now - looked_up_at > LICENCE_MAX_AGE:
            due[key] = looked_up_at
    # Never looked up first, then the stalest.
    ordered = sorted(due, key=lambda key: (due[key] is not None, due[key] or now, key))
    return ordered[:limit]


def licences_look_up(*, client: GitHubClient, now: datetime, limit: int = 50) -> LicenceReport:
    """Ask GitHub for the licence of up to ``limit`` listed repositories that are due, one at a time.

    A rate-limited answer is recorded for its repository and ends the round: the next round,
    after the limit resets, asks again. The SPDX License List's OSI flag and version are stored
    with each answer (check 22 records them).
    """
    report = LicenceReport()
    for owner, repo in _repositories_due(now=now, limit=limit):
        answer = client.licence(owner, repo)
        kept = (
            answer.status is not AnswerStatus.DONE
            and RepositoryLicence.objects.filter(
                owner=owner, repo=repo, status=RepositoryLicence.Status.DONE
            ).exists()
        )
        # An earlier answer stays, with its date, rather than a failure: the repository stays due.
        if not kept:
            _licence_store(owner, repo, answer, now=now)
        if answer.status is AnswerStatus.RATE_LIMITED:
            report.rate_limited = True
            logger.warning("licence lookups stopped: %s", answer.reason)
            break
        if answer.status is AnswerStatus.FAILED:
            report.failed += 1
            logger.warning("licence lookup of %s/%s failed: %s", owner, repo, answer.reason)
        else:
            report.looked_up += 1
    return report


def _licence_store(owner: str, repo: str, answer: LicenceAnswer, *, now: datetime) -> None:
    osi_approved, list_version = (
        licence_of(answer.spdx_id) if answer.status is AnswerStatus.DONE else (None, "")
    )
    RepositoryLicence.objects.update_or_create(
        owner=owner,
        repo=repo,
        defaults={
            "status": answer.status.value,
            "spdx_id": answer.spdx_id or "",
            "osi_approved": osi_approved,
            "list_version": list_version,
            "reason": answer.reason[:200],
            "looked_up_at": now,
        },
    )


# --- the stored scorecards -----------------------------------------------------------------------

SCORECARD_CHUNK = 1000
# The fields a listing's evidence reads (the raw entry, up to 64 KiB each, is never loaded).
_EVIDENCE_FIELDS = ("name", "website_url", "repository_url", "updated_at", "synced_at")
_SCORECARD_FIELDS = (
    "remote",
    "passed",
    "total",
    "core_passed",
    "success_ratio",
    "p50_ms",
    "p95_ms",
    "observed_at",
    "results",
    "computed_at",
)


def scorecard_row(listing_id: int, card: Scorecard, evidence: Evidence, *, now: datetime) -> ListingScorecard:
    """Return the stored form of a listing's scorecard: its counts, ranking figures and results."""
    counts = evidence.attempts_30d
    observed = [result.observed_at for result in card.results if result.observed_at is not None]
    return ListingScorecard(
        listing_id=listing_id,
        remote=card.remote,
        passed=card.passed,
        total=card.total,
        core_passed=sum(
            1 for result in card.results if result.number in CORE_CHECKS and result.verdict is Verdict.PASSED
        ),
        success_ratio=counts.successes / counts.attempts if counts and counts.attempts else None,
        p50_ms=evidence.latency_7d.p50_ms if evidence.latency_7d else None,
        p95_ms=evidence.latency_7d.p95_ms if evidence.latency_7d else None,
        observed_at=max(observed, default=None),
        results=[
            {
                "number": result.number,
                "name": result.name,
                "verdict": result.verdict.value,
                "observed_at": result.observed_at,
                "reason": result.reason,
                "evidence": dict(result.evidence),
            }
            for result in card.results
        ],
        computed_at=now,
    )


def scorecards_recompute(*, now: datetime, chunk_size: int = SCORECARD_CHUNK) -> int:
    """Recompute every visible latest listing's stored scorecard at ``now``; return how many were written.

    A chunk of listings at a time: their evidence in a fixed number of queries
    (``listings_scorecard_evidence``), the rules (pure), and one upsert per chunk in its own
    transaction, so readers see each chunk's new scorecards at once and a failure keeps the
    chunks before it. A stored scorecard belongs to a shown listing only: the sync removes one as
    it hides its listing (``_listing_store``), and this sweeps any left at the end.
    """
    ids = list(
        Listing.objects.filter(is_latest=True)
        .exclude(status=Listing.Status.DELETED)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    for start in range(0, len(ids), chunk_size):
        listings = list(
            Listing.objects.filter(pk__in=ids[start : start + chunk_size])
            .only(*_EVIDENCE_FIELDS)
            .prefetch_related("remotes")
        )
        evidence = listings_scorecard_evidence(listings, now=now)
        rows = [
            scorecard_row(listing_id, scorecard(found, now=now), found, now=now)
            for listing_id, found in evidence.items()
        ]
        with transaction.atomic():
            ListingScorecard.objects.bulk_create(
                rows, update_conflicts=True, unique_fields=["listing"], update_fields=list(_SCORECARD_FIELDS)
            )
    ListingScorecard.objects.filter(
        Q(listing__is_latest=False) | Q(listing__status=Listing.Status.DELETED)
    ).delete()
    return len(ids)
