"""The suite's clocks (tests/clock.py): a shifted run moves every Python process ahead; a held clock holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from tests.clock import (
    ClockOffsetError,
    current_offset,
    frozen_at,
    parse_offset,
    real_now,
    shifted_environment,
)

ROOT = Path(__file__).resolve().parents[1]
AT = datetime(2026, 12, 3, 17, 0, tzinfo=UTC)
# A child that prints its wall clock, and its own child's: shifts reach every generation.
READ_CLOCKS = """
import json, subprocess, sys, time
child = subprocess.run([sys.executable, "-c", "import time; print(time.time())"], capture_output=True, text=True)
print(json.dumps([time.time(), float(child.stdout)]))
"""


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ("45d", timedelta(days=45)),
        ("+1d", timedelta(days=1)),
        ("400d", timedelta(days=400)),
        ("36h", timedelta(hours=36)),
        ("90m", timedelta(minutes=90)),
        ("30s", timedelta(seconds=30)),
        ("0s", timedelta(0)),
        ("2027-01-01T00:05:00+00:00", timedelta(days=28, hours=7, minutes=5)),
        ("2027-01-01T00:05:00Z", timedelta(days=28, hours=7, minutes=5)),
    ],
)
def test_an_offset_is_an_amount_ahead_or_a_later_instant(text, offset):
    assert parse_offset(text, now=AT) == offset


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("45", "neither an amount ahead"),
        ("-1d", "neither an amount ahead"),
        ("tomorrow", "neither an amount ahead"),
        ("2027-01-01T00:05:00", "needs its UTC offset"),
        ("2026-01-01T00:00:00+00:00", "in the past"),
    ],
)
def test_an_offset_that_is_not_ahead_is_refused_by_name(text, message):
    with pytest.raises(ClockOffsetError, match=message):
        parse_offset(text, now=AT)


def test_every_python_process_of_a_shifted_run_is_ahead_by_the_same_amount():
    offset = timedelta(days=45)
    env = shifted_environment({k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, offset)
    before = time.time()
    done = subprocess.run(
        [sys.executable, "-c", READ_CLOCKS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    after = time.time()
    # This process may itself run shifted: the child's offset replaces it, from the real clock.
    expected = (offset - current_offset()).total_seconds()
    for seen in json.loads(done.stdout):
        assert before + expected - 1 <= seen <= after + expected + 1


def test_a_held_clock_holds_every_wall_clock_and_leaves_the_monotonic_clock_running():
    with frozen_at(AT):
        started = time.monotonic()
        time.sleep(0.01)
        assert (timezone.now(), datetime.now(UTC), time.time(), date.today()) == (
            AT,
            AT,
            AT.timestamp(),
            AT.date(),
        )
        assert time.monotonic() > started


def test_now_holds_the_clock_at_the_test_s_instant(now):
    assert timezone.now() == now


def test_the_real_time_is_read_through_a_held_clock():
    before = real_now()
    with frozen_at(AT - timedelta(days=1)):
        inside = real_now()
    assert before <= inside <= real_now()
