"""Chromium for the browser tests: Debian's /usr/bin/chromium driven by Playwright against the live server.

Playwright's own browser downloads are never used (`playwright install` needs a host these
machines can't reach). Without Chromium or Playwright the tests skip saying how to install
them, and fail instead under UPTIMY_REQUIRE_BROWSER=1, which .ci/run sets. A module imports
the fixtures it uses (``from tests.browser_support import chromium  # noqa: F401``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import unavailable

CHROMIUM = Path("/usr/bin/chromium")
BROWSER_SWITCH = "UPTIMY_REQUIRE_BROWSER"
HOW_TO = "apt-get install -y --no-install-recommends chromium"


@pytest.fixture(scope="module")
def chromium(django_db_setup, django_db_blocker) -> Iterator[Any]:
    """Start Debian's Chromium once for the module, headless, through Playwright.

    Playwright's sync API keeps an event loop running on the main thread while it lives: it is
    stopped when the module ends, or every later test calling asyncio.run() there would fail.
    Django refuses synchronous database calls beside a running loop; the tests' own ORM calls
    are plain synchronous code, so that check is off while the browser runs (the live server's
    thread has no loop and is unaffected). Hence the database is set up first.

    With a loop running, Django's connections are looked up per context instead of per thread
    (asgiref's Local): the tests would get new connection objects that lack the snapshot
    serialized_rollback restores from (so the flush after each test re-ran post_migrate, leaving
    content types that broke the next module's restore). The thread's own connections are put
    back in that context, so a browser test flushes and restores like any other.
    """
    if not CHROMIUM.exists():
        unavailable(f"Chromium is not installed at {CHROMIUM}: {HOW_TO}", switch=BROWSER_SWITCH)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("Playwright is not installed: make .venv/.dev-deps", switch=BROWSER_SWITCH)
    from django.db import connections

    own = {alias: connections[alias] for alias in connections}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_playwright() as playwright:
            for alias, connection in own.items():
                connections[alias] = connection
            # --no-sandbox: the tests run as root on CI, where Chromium's sandbox refuses to start.
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
            try:
                yield browser
            finally:
                browser.close()
