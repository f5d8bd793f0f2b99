"""Find tests that mix a fixed instant with the real clock: the pattern that turns the suite red on some later day.

A test function (or fixture) that refers to a fixed instant (``NOW`` of tests/conftest.py, or any
module constant built from a literal ``datetime(2026, …)`` / ``date(2026, …)``, or from another
such constant) and also reads the real clock (``timezone.now()``, ``datetime.now()``,
``date.today()``, ``time.time()``) compares two dates that drift apart a day a day. It passes
the week it was written and fails once the gap crosses a horizon (a retry window, a 90-day
quote, a month). It is allowed only with the clock held: the test asks for the ``now`` fixture
(tests/conftest.py holds every clock at NOW for it) or holds it itself (``frozen_at``,
``time_machine.travel``).

Static and cheap (the tree in well under a second), so it runs in every ``make test``
(tests/test_clock_guard.py); the shifted runs (``make test CLOCK_OFFSET=45d``) find what this
cannot see: a fixed instant passed in and the real clock read deep inside the product.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

# Calls that read the wall clock: (object name, attribute).
_CLOCK_READS = {
    ("timezone", "now"),
    ("datetime", "now"),
    ("datetime", "utcnow"),
    ("datetime", "today"),
    ("date", "today"),
    ("time", "time"),
    ("time", "time_ns"),
}
# Ways a function holds the clock itself.
_HOLDERS = {"frozen_at", "travel"}
_FIXED_BUILDERS = {"datetime", "date"}


@dataclass(frozen=True)
class Finding:
    """A function that refers to a fixed instant and reads the real clock with the clock running."""

    path: str
    line: int
    function: str
    instant: str
    clock: str

    def __str__(self) -> str:
        return (
            f"{self.path}:{self.line}: {self.function} uses the fixed instant {self.instant} and reads "
            f"the real clock ({self.clock}) without holding it: ask for the `now` fixture or hold the "
            "clock with tests.clock.frozen_at (ARCHITECTURE.md, Time in tests)"
        )


def _is_literal_instant(node: ast.AST) -> bool:
    """Say whether ``node`` is ``datetime(2026, …)`` or ``date(2026, …)`` with a literal year."""
    return (
        isinstance(node, ast.Call)
        and _called_name(node.func) in _FIXED_BUILDERS
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, int)
    )


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _names_in(node: ast.AST) -> set[str]:
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}


def fixed_instants(tree: ast.Module, imported: dict[str, set[str]]) -> set[str]:
    """Return the module-level names of ``tree`` that hold a fixed instant.

    ``imported`` maps each test module (``tests.conftest``) to its fixed names, so that
    ``from tests.conftest import NOW`` counts; a constant derived from one (``LATER = NOW + …``)
    is fixed too.
    """
    fixed: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and statement.module in imported:
            fixed |= {
                alias.asname or alias.name
                for alias in statement.names
                if alias.name in imported[statement.module]
            }
        elif isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            value = statement.value
            if any(_is_literal_instant(node) for node in ast.walk(value)) or _names_in(value) & fixed:
                fixed |= {target.id for target in targets if isinstance(target, ast.Name)}
    return fixed


def _clock_reads(function: ast.AST, clock_aliases: set[str]) -> Iterator[tuple[int, str]]:
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if (func.value.id, func.attr) in _CLOCK_READS:
                yield node.lineno, f"{func.value.id}.{func.attr}()"
        elif isinstance(func, ast.Name) and func.id in clock_aliases:
            yield node.lineno, f"{func.id}()"


def _holds_clock(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    parameters = {argument.arg for argument in function.args.args + function.args.kwonlyargs}
    if "now" in parameters and (function.name.startswith("test_") or _is_fixture(function)):
        return True
    decorated = any(_called_name(getattr(d, "func", d)) in _HOLDERS for d in function.decorator_list)
    held = any(
        isinstance(node, ast.With | ast.AsyncWith)
        and any(
            _called_name(getattr(item.context_expr, "func", item.context_expr)) in _HOLDERS
            for item in node.items
        )
        for node in ast.walk(function)
    )
    return decorated or held


def _is_fixture(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any("fixture" in ast.unparse(decorator) for decorator in function.decorator_list)


def _clock_aliases(tree: ast.Module) -> set[str]:
    """Return names bound to a clock reader by import (``from django.utils.timezone import now``)."""
    return {
        alias.asname or alias.name
        for statement in tree.body
        if isinstance(statement, ast.ImportFrom) and statement.module in {"django.utils.timezone", "time"}
        for alias in statement.names
        if alias.name in {"now", "time", "time_ns"}
    }


def module_findings(path: str, tree: ast.Module, imported: dict[str, set[str]]) -> list[Finding]:
    """Return every function of one test module that mixes a fixed instant with the running clock."""
    fixed = fixed_instants(tree, imported)
    if not fixed:
        return []
    aliases = _clock_aliases(tree)
    findings = []
    for function in _top_functions(tree):
        used = sorted(_names_in(function) & fixed)
        reads = sorted(_clock_reads(function, aliases))
        if used and reads and not _holds_clock(function):
            line, clock = reads[0]
            findings.append(Finding(path, line, function.name, used[0], clock))
    return findings


def _top_functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            yield statement
        elif isinstance(statement, ast.ClassDef):
            yield from (s for s in statement.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef))


def _module_name(path: Path, root: Path) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts)


def tree_findings(root: Path, paths: Iterable[Path]) -> list[Finding]:
    """Return the findings of every test module under ``paths`` (``root`` is the checkout)."""
    trees = {path: ast.parse(path.read_text(), filename=str(path)) for path in sorted(paths)}
    imported: dict[str, set[str]] = {}
    # Twice: a module's constants may come from another's, imported in any order.
    for _ in range(2):
        for path, tree in trees.items():
            imported[_module_name(path, root)] = fixed_instants(tree, imported)
    return [
        finding
        for path, tree in trees.items()
        for finding in module_findings(str(path.relative_to(root)), tree, imported)
    ]
