"""Listings and stored scorecards made directly, for the directory's pages, API and badge tests."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from directory.models import Listing, ListingRemote, ListingScorecard
from tests.conftest import NOW


def make_listing(
    name: str,
    *,
    remote: bool = True,
    status: str = Listing.Status.ACTIVE,
    latest: bool = True,
    version: str = "1.0.0",
    title: str = "",
    description: str = "",
    status_message: str = "",
) -> Listing:
    """Store a listing (with one remote unless local-only)."""
    listing = Listing.objects.create(
        name=name,
        version=version,
        is_latest=latest,
        title=title,
        description=description,
        status=status,
        status_message=status_message,
        updated_at=NOW,
        synced_at=NOW,
    )
    if remote:
        ListingRemote.objects.create(
            listing=listing,
            position=0,
            transport="streamable-http",
            url=f"https://{name.replace('/', '.')}/mcp",
        )
    return listing


def make_card(
    listing: Listing,
    *,
    passed: int,
    total: int = 22,
    core_passed: int = 0,
    success_ratio: float | None = None,
    p50_ms: float | None = None,
    p95_ms: float | None = None,
    observed_at: datetime | None = None,
    results: list[dict[str, Any]] | None = None,
) -> ListingScorecard:
    """Store a scorecard with the given ranking figures."""
    return ListingScorecard.objects.create(
        listing=listing,
        remote=total == 22,
        passed=passed,
        total=total,
        core_passed=core_passed,
        success_ratio=success_ratio,
        p50_ms=p50_ms,
        p95_ms=p95_ms,
        observed_at=observed_at,
        results=results or [],
        computed_at=NOW,
    )
