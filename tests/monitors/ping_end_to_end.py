"""The ping check end to end, as test_types_end_to_end.py runs every other active type.

Not collected by the suite (no ``test_`` prefix): test_types_end_to_end.py runs this file in a
user and network namespace of its own (``unshare --user --map-root-user --net``), where the
namespace's ``ping_group_range`` may be set and an address added to and removed from its
loopback: the target answers echoes, stops, and answers again.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.monitors.test_types_end_to_end import goes_down_and_up, hook  # noqa: F401  (fixture)
from tests.monitors.type_servers import ping_namespace, ping_target
from tests.monitors.worker_support import embedded

if os.environ.get("DATABASE_URL"):
    raise RuntimeError(
        "run in a network namespace, on the embedded SQLite database: see the module's docstring"
    )


@pytest.fixture(scope="session", autouse=True)
def _namespace() -> Iterator[None]:
    # Before any other fixture: the receiver and the database need the loopback up.
    with ping_namespace():
        yield


@pytest.fixture(autouse=True)
def _loopback(settings) -> None:
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    settings.UPTIMY_ALERT_SEND_TIMEOUT = 5.0


@embedded
def test_a_ping_check_goes_down_and_up_through_alerts_a_status_page_and_a_report(client, hook):  # noqa: F811
    goes_down_and_up(ping_target(), client, hook)
