"""Keep directory probes' successful times in fixed buckets, so a window's p50 and p95 need no raw times.

Pure: no Django. Each probed hour of a listing keeps one sparse histogram (``[[bucket, count], …]``,
JSON-friendly); a window's is the sum of its hours' (:func:`window`), and its nearest-rank
quantiles are read from the sum (:func:`quantile`). The buckets are fixed (:data:`EDGES`), at most
2 % wide (1 ms below 50 ms), and 1 s and 3 s are edges, so a quantile read here is at least the
exact nearest-rank one and less than one bucket above it, and "p50 ≤ 1 s" / "p95 ≤ 3 s" read
from a histogram agree with the scorecard's counts at those thresholds.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

Histogram = list[list[int]]  # sparse [[bucket, count], …], sorted by bucket

# (up to ms, bucket width ms): every width is at most 2 % of its bucket's lower edge, or 1 ms.
_SPANS = (
    (100, 1),
    (250, 2),
    (500, 5),
    (1_000, 10),
    (2_500, 20),
    (5_000, 50),
    (10_000, 100),
    (25_000, 200),
    (50_000, 500),
    (120_000, 1_000),
)


def _edges() -> tuple[float, ...]:
    edges: list[float] = []
    start = 0
    for up_to, width in _SPANS:
        edges.extend(float(edge) for edge in range(start + width, up_to + 1, width))
        start = up_to
    return tuple(edges)


# Bucket i holds times in (EDGES[i-1], EDGES[i]] ms (bucket 0 from 0 ms); one more bucket past the
# last edge holds anything longer (read back as the last edge: "at least").
EDGES = _edges()
OVERFLOW = len(EDGES)


def bucket_of(ms: float) -> int:
    """Return the bucket holding a time of ``ms`` milliseconds."""
    return bisect.bisect_left(EDGES, max(0.0, ms))


def upper_edge(bucket: int) -> float:
    """Return the largest time bucket ``bucket`` holds (the overflow bucket: the last edge)."""
    return EDGES[min(bucket, OVERFLOW - 1)]


def histogram_of(times_ms: Iterable[float]) -> Histogram:
    """Return the sparse histogram of ``times_ms`` (a non-finite time is no measurement)."""
    counts = Counter(bucket_of(ms) for ms in times_ms if math.isfinite(ms))
    return [[bucket, count] for bucket, count in sorted(counts.items())]


def merge(histograms: Iterable[Sequence[Sequence[int]]]) -> Histogram:
    """Return the sum of sparse histograms (a stored one is read as it is: JSON lists)."""
    counts: Counter[int] = Counter()
    for histogram in histograms:
        for bucket, count in histogram:
            counts[int(bucket)] += int(count)
    return [[bucket, count] for bucket, count in sorted(counts.items()) if count > 0]


def window(
    hours: Iterable[tuple[datetime, Sequence[Sequence[int]]]], *, now: datetime, length: timedelta
) -> Histogram:
    """Return the sum of the hourly histograms in the whole hours from ``length`` before ``now``'s hour to ``now``."""
    start = now.replace(minute=0, second=0, microsecond=0) - length
    return merge(histogram for hour, histogram in hours if start <= hour <= now)


def samples(histogram: Sequence[Sequence[int]]) -> int:
    return sum(int(count) for _, count in histogram)


def quantile(histogram: Sequence[Sequence[int]], percent: float) -> float | None:
    """Return the nearest-rank ``percent``-th percentile as its bucket's upper edge, or None for no samples.

    The ceil(percent·n/100)-th smallest time lies in the bucket returned: the figure is at least
    the exact one and less than one bucket width above it.
    """
    total = samples(histogram)
    if total == 0:
        return None
    rank = max(1, math.ceil(percent * total / 100))
    seen = 0
    for bucket, count in histogram:
        seen += int(count)
        if seen >= rank:
            return upper_edge(int(bucket))
    return upper_edge(int(histogram[-1][0]))


def width(bucket: int) -> float:
    """Return how wide bucket ``bucket`` is, in ms (the bound of a quantile's error)."""
    if bucket >= OVERFLOW:
        return math.inf
    return EDGES[bucket] - (EDGES[bucket - 1] if bucket else 0.0)
