"""A real Uptimy serving /mcp, started once for the live tests of this folder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp_live import LiveUptimy, start_uptimy


@pytest.fixture(scope="session")
def live_uptimy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveUptimy]:
    """Serve Uptimy as `make run` does (manage.py serve) on a free port, with a database of its own."""
    running = start_uptimy(tmp_path_factory.mktemp("uptimy-live"))
    try:
        yield running
    finally:
        running.stop()
