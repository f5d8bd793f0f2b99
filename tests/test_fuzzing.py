"""UPTIMY_FUZZ_SCALE turns the API fuzzers' example counts up or down; a bad value names itself."""

from __future__ import annotations

import pytest

from tests.fuzzing import SCALE_VARIABLE, fuzz_settings


@pytest.mark.parametrize(("scale", "examples"), [(None, 25), ("10", 250), ("0.5", 12), ("0.001", 1)])
def test_the_scale_multiplies_the_examples(monkeypatch, scale, examples):
    if scale is None:
        monkeypatch.delenv(SCALE_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(SCALE_VARIABLE, scale)

    assert fuzz_settings(25).max_examples == examples


@pytest.mark.parametrize("scale", ["lots", "0", "-2", "nan"])
def test_a_scale_that_is_not_a_positive_number_is_refused_by_name(monkeypatch, scale):
    monkeypatch.setenv(SCALE_VARIABLE, scale)

    with pytest.raises(ValueError, match=f"UPTIMY_FUZZ_SCALE must be a positive number, not '{scale}'"):
        fuzz_settings(25)
