"""Keep the domain check's RDAP bootstrap current: fetch IANA's file, and hand the newest one to the engine.

The engine ships a snapshot (``probes/data/rdap_dns.json``); ``manage.py refreshrdap`` writes a
fresh one to ``UPTIMY_RDAP_BOOTSTRAP_FILE``, and every worker's batch (:func:`use_refreshed`,
called by ``probe_env``) reads that file when it changed, so a refresh needs no restart.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import httpx
from django.conf import settings

from probes import rdap

logger = logging.getLogger(__name__)

_loaded: tuple[Path, float] | None = None


class RefreshFailed(Exception):
    """Say why the bootstrap could not be refreshed; the file in use stays as it was."""


def refresh(*, url: str | None = None, path: Path | None = None, timeout: float = 30.0) -> rdap.Bootstrap:
    """Fetch the bootstrap from ``url``, check it is an RFC 9224 DNS registry, and replace ``path`` atomically."""
    url = url or settings.UPTIMY_RDAP_BOOTSTRAP_URL
    path = path or settings.UPTIMY_RDAP_BOOTSTRAP_FILE
    try:
        with httpx.stream("GET", url, timeout=timeout, follow_redirects=True) as response:
            if response.status_code != 200:
                raise RefreshFailed(f"{url} answered HTTP {response.status_code}")
            body = b""
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > rdap.MAX_BOOTSTRAP_BYTES:
                    raise RefreshFailed(
                        f"{url} sent more than {rdap.MAX_BOOTSTRAP_BYTES // (1024 * 1024)} MiB"
                    )
    except httpx.HTTPError as exc:
        raise RefreshFailed(f"{url} could not be fetched: {exc}") from None
    try:
        found = rdap.parse_bootstrap(body)
    except rdap.BootstrapInvalid as exc:
        raise RefreshFailed(f"{url} is not an RDAP bootstrap: {exc}") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(body)
    os.replace(partial, path)
    return found


def use_refreshed(path: Path | None = None) -> None:
    """Hand the engine the refreshed bootstrap when its file is new or changed; keep the current one otherwise.

    A file that no longer parses is logged and left unused: the snapshot (or the last good file)
    keeps answering, so a bad refresh never stops domain checks.
    """
    global _loaded
    path = path or settings.UPTIMY_RDAP_BOOTSTRAP_FILE
    try:
        stamp = path.stat().st_mtime
    except OSError:
        return
    if _loaded == (path, stamp):
        return
    _loaded = (path, stamp)
    try:
        rdap.use_bootstrap(rdap.parse_bootstrap(path.read_bytes()))
    except (OSError, rdap.BootstrapInvalid) as exc:
        logger.error("RDAP bootstrap %s is unusable, keeping the one in use: %s", path, exc)
