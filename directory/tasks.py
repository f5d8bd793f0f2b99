"""Celery tasks of the directory: thin, named stably (queued messages outlive deploys)."""

from __future__ import annotations

from celery import shared_task

from directory.sync import sync_registry


@shared_task(name="directory.sync_registry")
def sync_registry_incremental() -> int:
    """Read what changed in the registry since the last sync (a full sync the first time); return entries stored."""
    return sync_registry(full=False).stored
