"""Move this Python process's clock ahead when the test suite runs shifted (``make test CLOCK_OFFSET=45d``).

``tests/run_suite.py`` puts this directory first on PYTHONPATH and sets the offset once, in seconds,
so every Python process the suite starts (pytest, ``manage.py serve``, Celery workers, the SDK's
servers) imports this file at start-up and travels by the same amount: the processes agree on the
time as they do on a real machine. ``tick=True``: the shifted clock keeps running. time-machine
leaves the monotonic clock alone, so timeouts, sleeps and event loops behave as without the shift.

Self-contained on purpose: it runs before anything else of the process, from whatever directory
the process starts in, so it can import nothing of the project.
"""

from __future__ import annotations

import os

OFFSET_VARIABLE = "UPTIMY_TEST_CLOCK_OFFSET"


def _travel_by_offset() -> None:
    offset = os.environ.get(OFFSET_VARIABLE, "")
    if not offset:
        return
    import time
    from datetime import UTC, datetime

    try:
        import time_machine
    except ImportError:  # a Python without the dev install (a system tool the suite runs): real clock
        return
    destination = datetime.fromtimestamp(time.time() + float(offset), UTC)
    time_machine.travel(destination, tick=True).start()
    # time-machine starts a ticking clock at its first reading, not at start(): read it now, or
    # the process's clock would lag by however long it took to first ask for the time.
    time.time()


_travel_by_offset()
