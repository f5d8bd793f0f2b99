"""Build the registry client from settings and run one sync: the task's and the command's one call."""

from __future__ import annotations

from django.conf import settings
from django.utils import timezone

from directory.registry import RegistryClient
from directory.services import SyncReport, registry_sync
from probes import __version__

USER_AGENT = f"Uptimy/{__version__} (+https://uptimy.example; MCP directory import; one request at a time)"


def registry_client() -> RegistryClient:
    """Return the client of the configured registry (UPTIMY_MCP_REGISTRY_URL)."""
    return RegistryClient(
        base_url=settings.UPTIMY_MCP_REGISTRY_URL,
        user_agent=USER_AGENT,
        timeout=settings.UPTIMY_MCP_REGISTRY_TIMEOUT,
    )


def sync_registry(*, full: bool) -> SyncReport:
    """Sync the directory from the configured registry, fully or since the last high-water mark."""
    return registry_sync(client=registry_client(), full=full, now=timezone.now())
