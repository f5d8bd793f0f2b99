"""Count attempts against a limit atomically, in Redis where REDIS_URL is set, else in a locked database row.

The window is fixed and opens at a key's first attempt (the classic INCR + EXPIRE shape): one
atomic step takes a slot or refuses, the wait it answers is exact (when the window ends the
whole limit is back), and a refused attempt takes nothing, so a client hammering a closed
limit does not keep it closed. The price of a fixed window is that up to twice the limit can
pass around a window's end; a sliding log would need a row (or a sorted-set member) per
attempt. Callers reserve before the work they limit (a password check) and give the slot back
when the attempt should not count (a successful sign-in).

The cache can't do it on the embedded default: the file cache's get and set are two steps
with no lock between gunicorn's workers, which is how 40 parallel wrong passwords all got
checked under a limit of 10.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import cache

import redis
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from monitors.models import RateCounter

REDIS_PREFIX = "uptimy:rate:"

# KEYS: the counters; ARGV: limit, window in ms. All or nothing: when any counter is full, take
# none and answer the longest wait (ms, at least 1); else raise each, opening a window where
# there was none. Redis runs a script alone, so no other command sees a half-taken set.
TAKE = """
local wait = 0
for _, key in ipairs(KEYS) do
    local count = tonumber(redis.call('GET', key) or '0')
    if count >= tonumber(ARGV[1]) then
        local left = redis.call('PTTL', key)
        if left < 1 then left = 1 end
        if left > wait then wait = left end
    end
end
if wait > 0 then return wait end
for _, key in ipairs(KEYS) do
    if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, ARGV[2]) end
end
return 0
"""
# Lower each counter that is still counting; never below zero, never reviving an expired one.
GIVE_BACK = """
for _, key in ipairs(KEYS) do
    if tonumber(redis.call('GET', key) or '0') > 0 then redis.call('DECR', key) end
end
return 0
"""


def rate_take(*, keys: Sequence[str], limit: int, window: int) -> int:
    """Take one slot of ``limit`` per ``window`` seconds from every key at once; return 0, or the seconds to wait.

    All or nothing: when one key is full no key is counted. A limit of 0 or less is closed.
    """
    if limit <= 0:
        return window
    ordered = sorted(set(keys))  # one lock order for every caller: no deadlock between two
    if settings.REDIS_URL:
        waited = int(
            _redis().eval(TAKE, len(ordered), *[REDIS_PREFIX + k for k in ordered], limit, window * 1000)
        )
        return math.ceil(waited / 1000)
    return _take_in_database(ordered, limit=limit, window=window)


def rate_give_back(*, keys: Sequence[str]) -> None:
    """Return one slot to each key whose window is still open (an attempt that should not count)."""
    ordered = sorted(set(keys))
    if settings.REDIS_URL:
        _redis().eval(GIVE_BACK, len(ordered), *[REDIS_PREFIX + k for k in ordered])
        return
    # One UPDATE … SET count = count - 1: atomic on its own.
    RateCounter.objects.filter(key__in=ordered, count__gt=0, expires_at__gt=timezone.now()).update(
        count=F("count") - 1
    )


def rate_counters_prune(*, now: datetime) -> int:
    """Delete the database's counters whose window has ended; return how many (Redis expires its own)."""
    deleted, _ = RateCounter.objects.filter(expires_at__lte=now).delete()
    return deleted


def _take_in_database(keys: list[str], *, limit: int, window: int) -> int:
    now = timezone.now()
    with transaction.atomic():
        # Make sure each row exists, then lock them all: SELECT … FOR UPDATE can't lock a row
        # that isn't there, and two first attempts must not both find none. On SQLite the
        # IMMEDIATE transaction already holds the database's write lock from BEGIN.
        RateCounter.objects.bulk_create(
            [RateCounter(key=key, count=0, expires_at=now) for key in keys], ignore_conflicts=True
        )
        rows = list(RateCounter.objects.select_for_update().filter(key__in=keys).order_by("key"))
        for row in rows:
            if row.expires_at <= now:  # an ended window: this attempt opens the next
                row.count, row.expires_at = 0, now + timedelta(seconds=window)
        waits = [(row.expires_at - now).total_seconds() for row in rows if row.count >= limit]
        if waits:
            return max(1, math.ceil(max(waits)))
        for row in rows:
            row.count += 1
        RateCounter.objects.bulk_update(rows, ["count", "expires_at"])
    return 0


@cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url)


def _redis() -> redis.Redis:
    return _client(settings.REDIS_URL)
