"""Say how many requests the API fuzzers send per operation: a dial, turned up for a deeper run.

Every run draws new examples (no fixed seed), so runs add up; `make test` keeps each operation
to a few dozen. ``UPTIMY_FUZZ_SCALE=10 make test PYTEST_ARGS="tests/monitors/test_api_schema_fuzz.py
tests/monitors/test_api_fuzz_hostile.py"`` sends ten times as many.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

SCALE_VARIABLE = "UPTIMY_FUZZ_SCALE"


def fuzz_scale() -> float:
    """Return the multiplier of every fuzzer's example count (UPTIMY_FUZZ_SCALE, default 1)."""
    raw = os.environ.get(SCALE_VARIABLE, "1")
    try:
        scale = float(raw)
    except ValueError:
        raise ValueError(f"{SCALE_VARIABLE} must be a positive number, not {raw!r}") from None
    if not scale > 0:
        raise ValueError(f"{SCALE_VARIABLE} must be a positive number, not {raw!r}")
    return scale


def fuzz_settings(examples: int) -> settings:
    """Return Hypothesis settings for a fuzzer of ``examples`` requests per operation, scaled."""
    return settings(
        max_examples=max(1, round(examples * fuzz_scale())),
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
