"""Give `make run` a directory to show: recorded registry pages imported once, and their scorecards.

The pages (``directory/demo/page-*.json``) have the Official MCP Registry's shape and hold what a
real import meets: an older version beside the latest, a deleted server, a deprecated one with its
message, a templated remote URL, a remote requiring a header, and local-only packages. They are
imported through the same parser and upsert as a sync (``registry.parse_page``,
``services.listings_upsert``), only while the directory is empty and the registry is not synced, so
a synced directory is never mixed with demo listings; then every scorecard is computed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone

from directory.models import Listing
from directory.registry import parse_page
from directory.services import listings_upsert, scorecards_recompute

PAGES = Path(__file__).with_name("demo")


def demo_pages() -> list[Path]:
    """Return the recorded pages in order."""
    return sorted(PAGES.glob("page-*.json"))


def demo_import() -> int:
    """Import the recorded pages into an empty directory (nothing otherwise); return the listings stored.

    Nothing either when the registry is synced (UPTIMY_MCP_REGISTRY_SYNC): real listings are coming.
    """
    if settings.UPTIMY_MCP_REGISTRY_SYNC or Listing.objects.exists():
        return 0
    now = timezone.now()
    stored = 0
    for path in demo_pages():
        page = parse_page(json.loads(path.read_text()))
        stored += listings_upsert(entries=page.entries, now=now)[0]
    return stored


def demo_directory(*, base_url: str, **_: Any) -> str:
    """Fill an empty directory from the recorded pages and score them; return the line telling where the directory is.

    A directory that was not empty is left to the beat's recompute, which runs as the worker
    starts: a large one would hold up the server's start.
    """
    if demo_import():
        scorecards_recompute(now=timezone.now())
    return f"MCP directory: {base_url}/directory/ (JSON: {base_url}/api/v1/directory/servers/)"
