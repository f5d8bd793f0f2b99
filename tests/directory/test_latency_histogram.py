"""directory.latency: fixed buckets, their windows, and the error bound of a quantile read from them."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from directory import latency
from monitors.scorecard import CONSISTENT_MS, FAST_MS, nearest_rank

HOUR = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def bound(exact: float) -> float:
    """The documented error bound: under one bucket, at most 2 % of the time, or 1 ms."""
    return max(1.0, 0.02 * exact)


def sample(kind: str, n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    draw = {
        "loopback": lambda: rng.uniform(0, 20),
        "regional": lambda: rng.uniform(80, 400),
        "lognormal": lambda: rng.lognormvariate(6, 1),
        "slow": lambda: rng.uniform(2_000, 15_000),
        "integers": lambda: float(rng.randint(0, 3_000)),
    }[kind]
    return [draw() for _ in range(n)]


@pytest.mark.parametrize("percent", [50, 95])
@pytest.mark.parametrize(
    ("kind", "n", "seed"),
    [
        ("loopback", 5, 1),
        ("loopback", 200, 2),
        ("regional", 20, 3),
        ("regional", 336, 4),
        ("lognormal", 1, 5),
        ("lognormal", 336, 6),
        ("lognormal", 1_440, 7),
        ("slow", 20, 8),
        ("slow", 500, 9),
        ("integers", 999, 10),
    ],
)
def test_a_quantile_is_at_least_the_exact_one_and_within_the_bound(kind, n, seed, percent):
    times = sample(kind, n, seed)
    exact = nearest_rank(times, percent)
    assert exact is not None

    read = latency.quantile(latency.histogram_of(times), percent)

    assert read is not None
    assert exact <= read <= exact + bound(exact)


@pytest.mark.parametrize(
    ("ms", "read"),
    [
        (0.0, 1.0),
        (1.0, 1.0),
        (1.2, 2.0),
        (100.0, 100.0),
        (100.5, 102.0),
        (999.9, 1_000.0),
        (1_000.0, 1_000.0),  # 1 s is an edge: "p50 ≤ 1 s" reads the same as the counts
        (1_000.1, 1_020.0),
        (3_000.0, 3_000.0),  # and so is 3 s
        (3_000.1, 3_050.0),
        (119_999.0, 120_000.0),
        (500_000.0, 120_000.0),  # past the last edge: read as the last edge ("at least")
    ],
)
def test_a_time_reads_back_as_its_buckets_upper_edge(ms, read):
    assert latency.quantile(latency.histogram_of([ms]), 50) == read


def test_every_bucket_is_at_most_2_percent_wide_or_1_ms():
    for bucket in range(1, latency.OVERFLOW):
        lower = latency.EDGES[bucket - 1]
        assert latency.width(bucket) <= max(1.0, 0.02 * lower), lower


@pytest.mark.parametrize("threshold", [FAST_MS, CONSISTENT_MS])
def test_the_scorecards_thresholds_are_edges(threshold):
    assert threshold in latency.EDGES


def test_no_samples_have_no_quantile():
    assert latency.quantile([], 50) is None


def test_merging_hours_equals_one_histogram_of_all_their_times():
    first, second = sample("lognormal", 30, 11), sample("regional", 40, 12)

    merged = latency.merge([latency.histogram_of(first), latency.histogram_of(second)])

    assert merged == latency.histogram_of(first + second)


def test_a_non_finite_time_is_no_sample():
    assert latency.histogram_of([float("nan"), float("inf"), 5.0]) == [[latency.bucket_of(5.0), 1]]


@pytest.mark.parametrize(
    ("hour", "counted"),
    [
        (HOUR - timedelta(days=7), True),  # the first hour of the window
        (HOUR - timedelta(days=7, hours=1), False),
        (HOUR, True),  # the current hour
        (HOUR + timedelta(hours=1), False),  # after now
    ],
)
def test_a_window_sums_the_whole_hours_from_its_length_before_nows_hour(hour, counted):
    now = HOUR + timedelta(minutes=30)
    hours = [(hour, latency.histogram_of([200.0]))]

    window = latency.window(hours, now=now, length=timedelta(days=7))

    assert latency.samples(window) == (1 if counted else 0)
