"""No test mixes a fixed instant with the running clock (tests/clock_guard.py), and the guard sees the pattern."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from tests.clock_guard import module_findings, tree_findings

ROOT = Path(__file__).resolve().parents[1]
CONFTEST_INSTANTS = {"tests.conftest": {"NOW"}}


def findings(source: str) -> list[str]:
    tree = ast.parse(textwrap.dedent(source))
    return [finding.function for finding in module_findings("t.py", tree, CONFTEST_INSTANTS)]


def test_no_test_module_mixes_a_fixed_instant_with_the_running_clock():
    modules = [path for path in (ROOT / "tests").rglob("*.py") if "node_modules" not in path.parts]
    assert [str(finding) for finding in tree_findings(ROOT, modules)] == []


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        # The pattern: a literal instant beside the clock.
        (
            """
            SLOT = datetime(2026, 11, 29, 12, tzinfo=UTC)
            def test_a():
                record(slot=SLOT)
                send(now=timezone.now())
            """,
            ["test_a"],
        ),
        # The conftest's NOW, imported, and a constant derived from it.
        (
            """
            from tests.conftest import NOW
            LATER = NOW + timedelta(hours=1)
            def test_a():
                assert due(LATER, now=datetime.now(UTC))
            """,
            ["test_a"],
        ),
        # Every clock reader counts: time.time(), date.today(), and now() imported by name.
        (
            """
            from django.utils.timezone import now
            DAY = date(2026, 11, 1)
            def test_a():
                assert DAY < date.today()
            def test_b():
                assert DAY.year and time.time()
            def test_c():
                assert DAY and now()
            """,
            ["test_a", "test_b", "test_c"],
        ),
        # Fixtures and test methods are functions like any other.
        (
            """
            T0 = datetime(2026, 1, 1, tzinfo=UTC)
            @pytest.fixture
            def made():
                return make(created=timezone.now(), first=T0)
            class TestIt:
                def test_a(self):
                    assert T0 < timezone.now()
            """,
            ["made", "test_a"],
        ),
        # Held clocks: the now fixture, frozen_at, time_machine.travel as a block or decorator.
        (
            """
            SLOT = datetime(2026, 11, 29, 12, tzinfo=UTC)
            def test_a(now):
                send(SLOT, now=timezone.now())
            def test_b():
                with frozen_at(SLOT):
                    send(SLOT, now=timezone.now())
            @time_machine.travel(SLOT, tick=False)
            def test_c():
                send(SLOT, now=timezone.now())
            """,
            [],
        ),
        # Only the mix: the real clock alone, a fixed instant alone, and a helper's `now` argument.
        (
            """
            SLOT = datetime(2026, 11, 29, 12, tzinfo=UTC)
            def test_a():
                send(now=timezone.now())
            def test_b():
                assert rule(SLOT, now=SLOT)
            def helper(now):
                return SLOT, timezone.now()
            """,
            ["helper"],
        ),
    ],
    ids=["literal", "imported-and-derived", "every-reader", "fixtures-and-methods", "held", "only-the-mix"],
)
def test_the_guard_flags_a_fixed_instant_beside_the_running_clock(source, flagged):
    assert findings(source) == flagged
