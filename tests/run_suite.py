"""Run the whole pytest suite as `make test` does: the end-to-end tests in a pytest of their own, beside the rest.

The end-to-end tests (tests/e2e: Celery beat and workers, Redis and PostgreSQL restarts) spend
minutes waiting on real slots, redeliveries and restarts, not on CPU, and share nothing with
the rest of the suite: each stack has its own processes, database and Redis server. Run one
after the other, those waits were minutes of the suite's wall time; side by side they overlap
the rest's work. The rest's output streams as it runs; the end-to-end run's output follows
once both have ended, so the two never interleave. The exit status is the first failing one.

The rest is split across the cores by pytest-xdist (``worker_options``): up to MAX_WORKERS
workers, each with its own test database (pytest-django) and Redis database
(tests/xdist_services.py). ``UPTIMY_TEST_WORKERS=1`` runs it in one process.

Both runs are children of this process, in its process group: a Ctrl-C (or CI's timeout)
reaches both, and each pytest tears its fixtures down (stopping its stacks) as it would alone.

With CLOCK_OFFSET set (``45d``, ``36h``, or a later instant such as ``2027-03-28T01:05:00+00:00``)
every Python process of both runs has its clock moved ahead by the same amount, computed once here
(tests/clock.py): the suite must pass on any day it runs.

Usage: ``python tests/run_suite.py [PYTEST OPTIONS]`` (the options go to both runs);
``python tests/run_suite.py --single [PYTEST OPTIONS]`` runs one pytest with them (``make test PYTEST_ARGS=…``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.clock import ClockOffsetError, describe_offset, parse_offset, shifted_environment  # noqa: E402

E2E = "tests/e2e"
MAX_WORKERS = 4


def finished(process: subprocess.Popen[bytes]) -> int:
    """Wait for ``process`` to end, through Ctrl-Cs: it got the same signal and is tearing down."""
    while True:
        try:
            return process.wait()
        except KeyboardInterrupt:
            continue


def suite_environment() -> dict[str, str]:
    """Return this process's environment, shifted as CLOCK_OFFSET asks; say which clock the suite runs on."""
    now = datetime.now(UTC)
    offset = parse_offset(os.environ.get("CLOCK_OFFSET") or "0s", now=now)
    print(describe_offset(offset, now=now), flush=True)
    return shifted_environment(dict(os.environ), offset) if offset else dict(os.environ)


class WorkerCountError(ValueError):
    """UPTIMY_TEST_WORKERS is not a whole number of at least 1."""


def worker_options(cores: int, asked: str) -> list[str]:
    """Return the pytest options that split the rest of the suite across ``cores`` (pytest-xdist).

    Most of the suite's time is waiting on servers it starts, not CPU: two workers on two cores
    took 574 s where one took 1,421 s. At most MAX_WORKERS, since every worker starts its own
    live servers and browser, and takes a Redis database of its own (tests/xdist_services.py).
    UPTIMY_TEST_WORKERS overrides the count; 1 runs in one process, as before.
    """
    if not asked.strip():
        count = min(cores, MAX_WORKERS)
    elif asked.strip().isdigit() and int(asked) >= 1:
        count = int(asked)
    else:
        raise WorkerCountError(f"UPTIMY_TEST_WORKERS must be a whole number of at least 1, not {asked!r}")
    if count == 1:
        return []
    # xdist's default `load` scheduling: tests go to whichever worker is free. `loadfile` kept a
    # module's tests together but left one worker alone with the longest browser modules.
    return ["-p", "tests.xdist_services", "-n", str(count)]


def main(options: list[str]) -> int:
    """Run tests/e2e beside the rest of the suite; return the first non-zero exit status, else 0."""
    try:
        env = suite_environment()
    except ClockOffsetError as error:
        print(error, file=sys.stderr)
        return 2
    if options[:1] == ["--single"]:
        return finished(subprocess.Popen([sys.executable, "-m", "pytest", *options[1:]], cwd=ROOT, env=env))
    pytest = [sys.executable, "-m", "pytest", *options]
    try:
        split = worker_options(os.cpu_count() or 1, os.environ.get("UPTIMY_TEST_WORKERS", ""))
    except WorkerCountError as error:
        print(error, file=sys.stderr)
        return 2
    with tempfile.TemporaryFile(prefix="uptimy-e2e-") as e2e_output:
        # No cache plugin here: both runs would write .pytest_cache's last-failed list, the later
        # one over the other's.
        e2e = subprocess.Popen(
            [*pytest, "-p", "no:cacheprovider", E2E],
            cwd=ROOT,
            env=env,
            stdout=e2e_output,
            stderr=subprocess.STDOUT,
        )
        try:
            rest = finished(subprocess.Popen([*pytest, *split, f"--ignore={E2E}"], cwd=ROOT, env=env))
        finally:
            e2e_code = finished(e2e)
        e2e_output.seek(0)
        print(f"\n===== {E2E}, run beside the rest of the suite (exit {e2e_code}):", flush=True)
        sys.stdout.buffer.write(e2e_output.read())
        sys.stdout.flush()
    return rest or e2e_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
