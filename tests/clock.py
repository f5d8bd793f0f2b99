"""Keep the suite independent of the day it runs: the shifted clock of a whole run, and frozen instants.

Two tools, one rule (ARCHITECTURE.md, "Time in tests"): a test either fixes an instant and makes
every path it drives see that instant (``frozen_at``, or the ``now`` fixture, which uses it), or
it uses the real clock and derives every date from it. ``make test CLOCK_OFFSET=45d`` runs the
whole suite with every Python process's clock moved ahead, which is how a test that mixes the
two is found before the calendar finds it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import time_machine

# Read by tests/clock_site/sitecustomize.py, which can import nothing of the project.
OFFSET_VARIABLE = "UPTIMY_TEST_CLOCK_OFFSET"
CLOCK_SITE = Path(__file__).resolve().parent / "clock_site"
_RELATIVE = re.compile(r"^\+?(?P<amount>\d+(?:\.\d+)?)(?P<unit>[dhms])$")
_UNITS = {"d": "days", "h": "hours", "m": "minutes", "s": "seconds"}


class ClockOffsetError(ValueError):
    """A CLOCK_OFFSET that names neither an amount ahead nor a later instant."""


def parse_offset(text: str, *, now: datetime) -> timedelta:
    """Return how far ahead of ``now`` the clock ``text`` asks for is.

    ``text`` is an amount ahead (``45d``, ``+1d``, ``36h``, ``90m``, ``30s``) or an instant with
    its offset (``2027-03-28T01:05:00+00:00``, ``…Z``), which becomes the amount from ``now``. Only
    forward: the programs the suite cannot shift (Chromium, OpenSSL, PostgreSQL, Node) judge
    dates by the real clock, and a clock behind theirs would sign cookies and tokens they take
    for expired.
    """
    text = text.strip()
    relative = _RELATIVE.match(text)
    if relative:
        offset = timedelta(**{_UNITS[relative["unit"]]: float(relative["amount"])})
    else:
        try:
            instant = datetime.fromisoformat(text)
        except ValueError:
            raise ClockOffsetError(
                f"CLOCK_OFFSET={text!r} is neither an amount ahead (45d, 36h, 90m, 30s) "
                "nor an ISO 8601 instant with its offset (2027-03-28T01:05:00+00:00)"
            ) from None
        if instant.tzinfo is None:
            raise ClockOffsetError(f"CLOCK_OFFSET={text!r} needs its UTC offset (…+00:00 or …Z)")
        offset = instant - now
    if offset < timedelta(0):
        raise ClockOffsetError(f"CLOCK_OFFSET={text!r} is in the past; the suite's clock only moves ahead")
    return offset


def shifted_environment(environment: dict[str, str], offset: timedelta) -> dict[str, str]:
    """Return ``environment`` for processes whose clocks run ``offset`` ahead (tests/clock_site)."""
    path = environment.get("PYTHONPATH", "")
    return {
        **environment,
        OFFSET_VARIABLE: repr(offset.total_seconds()),
        "PYTHONPATH": os.pathsep.join(part for part in (str(CLOCK_SITE), path) if part),
    }


def clock_environment() -> dict[str, str]:
    """Return the variables that carry this run's clock shift, for a child given a bare environment.

    The shift is the machine's day, not a setting of Uptimy: a test that starts a process with
    "nothing a new user would have" still starts it on the suite's clock.
    """
    if OFFSET_VARIABLE not in os.environ:
        return {}
    return {OFFSET_VARIABLE: os.environ[OFFSET_VARIABLE], "PYTHONPATH": os.environ.get("PYTHONPATH", "")}


def current_offset() -> timedelta:
    """Return how far ahead this run's clock is (zero on an unshifted run)."""
    return timedelta(seconds=float(os.environ.get(OFFSET_VARIABLE) or 0))


def describe_offset(offset: timedelta, *, now: datetime) -> str:
    """Say how far the clock is shifted and what it reads, for the suite's first and last lines."""
    if not offset:
        return "clock: real"
    days, seconds = offset.days, round(offset.seconds + offset.microseconds / 1e6)
    amount = f"{days} d" + (f" {seconds} s" if seconds else "")
    return f"clock: shifted {amount} ahead, to {(now + offset).isoformat(timespec='seconds')}"


def real_now() -> datetime:
    """Return the machine's real time, for dates a program outside Python judges (OpenSSL's certificate dates).

    Shifted or held, Python's clock is not the one OpenSSL, Chromium or PostgreSQL read; a
    certificate dated by it is "not yet valid" or "expired" to them.
    """
    if time_machine.escape_hatch.is_travelling():
        return time_machine.escape_hatch.datetime.datetime.now(UTC)
    return datetime.now(UTC)


@contextmanager
def frozen_at(instant: datetime) -> Iterator[datetime]:
    """Stop every clock the code reads at ``instant``: datetime, ``time.time``, ``date.today``, auto_now fields.

    The monotonic clock goes on (time-machine leaves it alone), so timeouts and event loops keep
    working; only the wall clock is held. For tests of one process: a server in another process,
    a browser or TLS library keeps its own clock, and such a test uses the real clock instead.
    """
    if instant.tzinfo is None:
        raise ValueError("frozen_at needs an aware instant")
    with time_machine.travel(instant.astimezone(UTC), tick=False):
        yield instant
