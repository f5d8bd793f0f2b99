"""Summarize response times in log-spaced buckets, so percentiles survive merging and pruning.

Hourly rollups keep a histogram; a day's percentiles come from merging its hours' histograms,
since the raw results they came from are pruned. Buckets grow by 10%, so a percentile read
from a histogram is within 10% of the exact one. Pure: no Django.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence

GROWTH = 1.1
# Bucket i holds times in (GROWTH**(i-1), GROWTH**i] milliseconds; bucket 0 holds up to 1 ms.
Histogram = list[list[int]]  # sparse [[bucket, count], …], sorted by bucket: JSON-friendly


def bucket_of(ms: float) -> int:
    """Return the bucket that holds a response time of ``ms`` milliseconds."""
    if ms <= 1:
        return 0
    return math.ceil(math.log(ms, GROWTH) - 1e-9)


def upper_bound(bucket: int) -> float:
    return float(GROWTH**bucket)


def histogram_of(times: Iterable[float]) -> Histogram:
    """Return the sparse histogram of ``times`` (milliseconds)."""
    # A non-finite time is no measurement; it must not break a whole rollup.
    counts = Counter(bucket_of(ms) for ms in times if math.isfinite(ms))
    return [[bucket, count] for bucket, count in sorted(counts.items())]


def merge(histograms: Iterable[Sequence[Sequence[int]]]) -> Histogram:
    """Return the sum of several sparse histograms."""
    counts: Counter[int] = Counter()
    for histogram in histograms:
        for bucket, count in histogram:
            counts[int(bucket)] += int(count)
    return [[bucket, count] for bucket, count in sorted(counts.items())]


def percentile(histogram: Sequence[Sequence[int]], q: float) -> float | None:
    """Return the ``q`` quantile (0–1) as its bucket's upper bound, or None for no samples."""
    total = sum(count for _, count in histogram)
    if total == 0:
        return None
    rank = max(1, math.ceil(q * total))  # nearest-rank
    seen = 0
    for bucket, count in histogram:
        seen += count
        if seen >= rank:
            return round(upper_bound(bucket), 1)
    return round(upper_bound(histogram[-1][0]), 1)
