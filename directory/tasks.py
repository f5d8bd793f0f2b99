"""Celery tasks of the directory: thin, named stably (queued messages outlive deploys)."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from directory.services import scorecards_recompute
from directory.sync import look_up_licences, probe_listings, sync_registry

# GitHub allows 60 unauthenticated requests an hour, 5,000 with a token.
LICENCES_PER_ROUND = 50


@shared_task(name="directory.sync_registry")
def sync_registry_incremental() -> int:
    """Read what changed in the registry since the last sync (a full sync the first time); return entries stored."""
    return sync_registry(full=False).stored


@shared_task(name="directory.look_up_licences")
def look_up_licences_due() -> int:
    """Ask GitHub for the licences of listed repositories not looked up within a week; return how many answered."""
    return look_up_licences(limit=LICENCES_PER_ROUND).looked_up


@shared_task(name="directory.probe_listings")
def probe_listings_due() -> int:
    """Probe the remote listings due (UPTIMY_DIRECTORY_PROBE_BATCH at most); return how many were probed."""
    return probe_listings().probed


@shared_task(name="directory.recompute_scorecards")
def recompute_scorecards() -> int:
    """Recompute every visible listing's stored scorecard; return how many were written."""
    return scorecards_recompute(now=timezone.now())
