"""monitors.ratelimit: a slot is taken atomically or refused, all keys or none, and given back."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from monitors.ratelimit import rate_give_back, rate_take


def test_the_limit_admits_its_count_then_answers_the_wait(db, settings):
    settings.REDIS_URL = ""
    answers = [rate_take(keys=["t:a"], limit=3, window=60) for _ in range(5)]
    assert answers[:3] == [0, 0, 0]
    assert all(0 < wait <= 60 for wait in answers[3:])


def test_a_full_key_takes_nothing_from_the_others(db, settings):
    settings.REDIS_URL = ""
    assert rate_take(keys=["t:ip"], limit=1, window=60) == 0
    assert rate_take(keys=["t:ip", "t:user"], limit=1, window=60) > 0
    assert rate_take(keys=["t:user"], limit=1, window=60) == 0


def test_a_slot_given_back_can_be_taken_again(db, settings):
    settings.REDIS_URL = ""
    assert rate_take(keys=["t:b"], limit=1, window=60) == 0
    rate_give_back(keys=["t:b"])
    assert rate_take(keys=["t:b"], limit=1, window=60) == 0
    assert rate_take(keys=["t:b"], limit=1, window=60) > 0


def test_forty_threads_at_once_on_redis_get_exactly_the_limit(redis_url, settings):
    settings.REDIS_URL = redis_url
    barrier = threading.Barrier(40)

    def take(_: int) -> int:
        barrier.wait(timeout=60)
        return rate_take(keys=["t:hammer:ip", "t:hammer:user"], limit=10, window=60)

    with ThreadPoolExecutor(40) as pool:
        answers = list(pool.map(take, range(40)))
    assert answers.count(0) == 10


@pytest.mark.parametrize("limit", [0, -1])
def test_a_limit_of_zero_or_less_is_closed(limit):
    assert rate_take(keys=["t:closed"], limit=limit, window=3600) == 3600
