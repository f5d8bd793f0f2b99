"""Build the registry and GitHub clients from settings and run one sync or licence round: the tasks' and commands' one call."""

from __future__ import annotations

from django.conf import settings
from django.utils import timezone

from directory.github import GitHubClient
from directory.registry import RegistryClient
from directory.services import LicenceReport, SyncReport, licences_look_up, registry_sync
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


def github_client() -> GitHubClient:
    """Return the client of GitHub's REST API (UPTIMY_GITHUB_API_URL), with the token when one is set."""
    return GitHubClient(
        base_url=settings.UPTIMY_GITHUB_API_URL,
        user_agent=USER_AGENT,
        token=settings.UPTIMY_GITHUB_TOKEN or None,
    )


def look_up_licences(*, limit: int) -> LicenceReport:
    """Ask GitHub for the licences of up to ``limit`` listed repositories that are due."""
    return licences_look_up(client=github_client(), now=timezone.now(), limit=limit)
