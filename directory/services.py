"""Write the directory: upsert registry entries as listings, and run a full or incremental sync."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.db import DataError, IntegrityError, transaction

from directory.models import RAW_MAX_BYTES, Listing, ListingRemote, RegistrySync
from directory.registry import RegistryClient, RegistryError, ServerEntry

logger = logging.getLogger(__name__)


@dataclass
class SyncReport:
    """What one sync did: entries stored, rejected (with reasons), pages read, and the error that stopped it."""

    full: bool
    pages: int = 0
    stored: int = 0
    rejected: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _raw_of(entry: ServerEntry) -> dict[str, object]:
    text = json.dumps(entry.raw, separators=(",", ":"), default=str)
    if len(text.encode()) <= RAW_MAX_BYTES:
        return dict(entry.raw)
    return {"truncated": True, "bytes": len(text.encode())}


def listings_upsert(*, entries: Iterable[ServerEntry], now: datetime) -> tuple[int, list[str]]:
    """Store each entry on its (name, version), replacing its remotes; return how many were stored and why others were not.

    An entry marked latest takes the flag from the name's other versions, so each name has at
    most one latest listing. One transaction per call (one page), a savepoint per entry: an
    entry the database refuses is left out alone, never the page.
    """
    stored, refused = 0, []
    with transaction.atomic():
        for entry in entries:
            try:
                with transaction.atomic():
                    _listing_store(entry, now=now)
            except (DataError, IntegrityError) as error:
                refused.append(
                    f"{entry.name} {entry.version}: the database refused it ({type(error).__name__})"
                )
            else:
                stored += 1
    return stored, refused


def _listing_store(entry: ServerEntry, *, now: datetime) -> None:
    listing, _ = Listing.objects.update_or_create(
        name=entry.name,
        version=entry.version,
        defaults={
            "is_latest": entry.is_latest,
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
    if entry.is_latest:
        Listing.objects.filter(name=entry.name, is_latest=True).exclude(pk=listing.pk).update(is_latest=False)
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
            stored, refused = listings_upsert(entries=page.entries, now=now)
            report.stored += stored
            for reason in refused:
                logger.warning("registry sync skipped %s", reason)
                report.rejected.append(reason)
            for entry in page.entries:
                if high_water is None or entry.updated_at > high_water:
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
