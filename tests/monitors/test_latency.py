"""Check the response-time histograms with tables: buckets, merging, percentiles."""

from __future__ import annotations

import math

import pytest

from monitors import latency


@pytest.mark.parametrize(
    ("ms", "bucket"),
    [
        (-5.0, 0),
        (0.0, 0),
        (0.5, 0),
        (1.0, 0),
        (1.05, 1),
        (1.1, 1),  # bucket i holds (1.1**(i-1), 1.1**i]: the upper bound is inside
        (1.1000001, 2),
        (1.21, 2),
        (100.0, 49),
        (1000.0, 73),
        (60_000.0, 116),
    ],
)
def test_bucket_of_puts_a_time_in_its_log_spaced_bucket(ms, bucket):
    assert latency.bucket_of(ms) == bucket


@pytest.mark.parametrize("ms", [1.5, 3.0, 12.0, 99.9, 250.0, 1234.5, 9999.0, 45_000.0])
def test_a_bucket_upper_bound_is_within_ten_percent_above_the_time(ms):
    bound = latency.upper_bound(latency.bucket_of(ms))

    assert ms <= bound <= ms * latency.GROWTH


@pytest.mark.parametrize(
    ("times", "histogram"),
    [
        ([], []),
        ([100.0], [[49, 1]]),
        ([100.0, 100.0, 0.5], [[0, 1], [49, 2]]),
        ([1000.0, 100.0, 1.1], [[1, 1], [49, 1], [73, 1]]),
    ],
)
def test_histogram_of_counts_times_per_bucket_sorted_by_bucket(times, histogram):
    assert latency.histogram_of(times) == histogram


@pytest.mark.parametrize(
    ("histograms", "merged"),
    [
        ([], []),
        ([[]], []),
        ([[[49, 1]], [[49, 2]]], [[49, 3]]),
        ([[[73, 1]], [[0, 2], [49, 1]]], [[0, 2], [49, 1], [73, 1]]),
        # JSON may hand back the pairs as tuples or lists; both merge.
        ([[(49, 1)], [[49, 1], [50, 4]]], [[49, 2], [50, 4]]),
    ],
)
def test_merge_sums_counts_per_bucket(histograms, merged):
    assert latency.merge(histograms) == merged


def test_merging_the_parts_equals_the_histogram_of_the_whole():
    first, second = [10.0, 20.0, 30.0], [20.0, 500.0]

    assert latency.merge([latency.histogram_of(first), latency.histogram_of(second)]) == latency.histogram_of(
        first + second
    )


@pytest.mark.parametrize(
    ("histogram", "q", "expected"),
    [
        ([], 0.5, None),
        ([[49, 1]], 0.5, 106.7),
        ([[49, 1]], 0.95, 106.7),
        # nearest rank: rank ceil(q * n), at least 1
        ([[0, 1], [49, 1]], 0.5, 1.0),
        ([[0, 1], [49, 1]], 0.51, 106.7),
        ([[0, 1], [49, 1]], 0.0, 1.0),
        ([[0, 19], [49, 1]], 0.95, 1.0),
        ([[0, 18], [49, 2]], 0.95, 106.7),
        ([[0, 1], [49, 1], [73, 1]], 1.0, 1051.2),
    ],
)
def test_percentile_is_the_upper_bound_of_the_nearest_rank_bucket(histogram, q, expected):
    assert latency.percentile(histogram, q) == expected


@pytest.mark.parametrize("q", [0.5, 0.95])
def test_percentile_from_a_histogram_is_within_ten_percent_of_the_exact_one(q):
    times = [float(ms) for ms in range(40, 1040, 10)]
    exact = times[math.ceil(q * len(times)) - 1]

    estimate = latency.percentile(latency.histogram_of(times), q)

    assert estimate is not None
    assert exact - 0.05 <= estimate <= exact * latency.GROWTH


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_histogram_ignores_times_that_are_not_finite(bad):
    assert latency.histogram_of([bad, 5.0]) == latency.histogram_of([5.0])
