"""Provide the end-to-end stack (tests/e2e/e2e_stack.py) once per module: starting it costs seconds."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_stack import Stack, require_services


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[pytest.TestReport]:
    """Add the tails of the stack's process logs to the report of a failed e2e test."""
    report: pytest.TestReport = yield
    running = getattr(item, "funcargs", {}).get("stack")
    if report.failed and isinstance(running, Stack):
        running.keep_logs = True
        report.sections.append((f"e2e process logs (tails; all in {running.tmp})", running.logs()))
    return report


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    """Leave the suite's cache alone (this overrides tests/conftest.py's, which clears it).

    `make test` runs these tests in a pytest of their own beside the rest of the suite
    (tests/run_suite.py), on the same REDIS_URL: a clear from here would empty the other run's
    rate-limit counts in the middle of its tests. These tests never use that cache: the stack's
    processes have a Redis server of their own.
    """


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    admin_url = require_services()
    # Not under pytest's basetemp: another pytest session on the machine may rotate that away
    # while this one still runs Redis and writes logs there.
    running = Stack(Path(tempfile.mkdtemp(prefix="uptimy-e2e-")), admin_url)
    try:
        running.start()
        yield running
        # A process that exited after the module's last wait fails it too.
        running.supervise("the end of the module")
    finally:
        running.close()


@pytest.fixture(scope="session")
def django_db_setup() -> None:
    """Refuse the suite's test database here (this overrides pytest-django's fixture).

    tests/run_suite.py runs these tests beside the rest of the suite, which creates and drops
    the test database: a second pytest doing the same at once would destroy the first's.
    """
    pytest.fail("tests/e2e must not use the suite's database: each stack has a database of its own")
