"""Run the docs' marked REST API examples against a live Uptimy and hold each to the answer it shows.

The convention (docs/rest-api.md, "Examples in these pages"): a line ``<!-- example: api STATUS -->``
is followed by a ```sh block of curl calls and then a ```json block holding the answer of its last
call. The test runs the block's own text in bash, with ``$KEY`` a read-write key of an organization
of its own and ``127.0.0.1:8000`` the live server's address, and compares status and body. In the
shown answer, ``…`` stands for what must differ from run to run: a string ``"…"`` matches any
value, ``…`` inside a string matches any text, an object key ``"…"`` lets the answer hold more
keys, and a list ending in ``"…"`` lets it hold more items.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.live_uptimy import LiveUptimy
from tests.markdown_blocks import marked_blocks, next_fence

DOCS = Path(__file__).resolve().parents[1] / "docs"
MARKER = re.compile(r"^<!-- example: api (\d{3}) -->$")
DOCS_ADDRESS = "127.0.0.1:8000"
ELIDED = "…"
ORGANIZATION = "demo"  # as the docs: `manage.py createapikey demo`; its plan allows 30 s intervals


@dataclass(frozen=True)
class Example:
    """One marked example: where it is, the commands it shows, the status and answer it promises."""

    page: str
    line: int
    commands: str
    status: int
    answer: Any

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"


def page_examples(page: str, text: str) -> list[Example]:
    """Return the marked examples of one page, in its order."""
    lines = text.splitlines()
    examples = []
    for index, block in marked_blocks(lines, lambda line: MARKER.match(line) is not None, page):
        marked = MARKER.match(lines[index])
        assert marked is not None
        answer = next_fence(lines, block.end, page)
        if block.info != "sh" or answer.info != "json":
            raise ValueError(f"{page}:{index + 1}: an example is a ```sh block then a ```json block")
        examples.append(Example(page, index + 1, block.body, int(marked.group(1)), json.loads(answer.body)))
    return examples


def all_examples() -> list[Example]:
    return [
        example
        for path in sorted(DOCS.rglob("*.md"))
        for example in page_examples(str(path.relative_to(DOCS)), path.read_text())
    ]


def matches(shown: Any, got: Any) -> bool:
    """Say whether an answer matches the shown one, ``…`` standing for what must differ."""
    if shown == ELIDED:
        return True
    if isinstance(shown, str) and ELIDED in shown:
        pattern = ".*".join(re.escape(part) for part in shown.split(ELIDED))
        return isinstance(got, str) and re.fullmatch(pattern, got, re.S) is not None
    if isinstance(shown, dict):
        keys = set(shown) - {ELIDED}
        if not isinstance(got, dict) or not keys <= set(got):
            return False
        if ELIDED not in shown and set(got) != keys:
            return False
        return all(matches(shown[key], got[key]) for key in keys)
    if isinstance(shown, list):
        open_ended = bool(shown) and shown[-1] == ELIDED
        items = shown[:-1] if open_ended else shown
        if not isinstance(got, list) or len(got) < len(items):
            return False
        if not open_ended and len(got) != len(items):
            return False
        return all(matches(a, b) for a, b in zip(items, got, strict=False))
    return bool(shown == got)


def run(example: Example, uptimy: LiveUptimy, key: str) -> tuple[int, Any]:
    """Run an example's commands as shown, against ``uptimy``; return its last call's status and body."""
    address = uptimy.base.removeprefix("http://")
    # Each call prints its status on a line of its own after its body, so the last two lines are the answer.
    script = "curl() { command curl -w '\\n%{http_code}\\n' \"$@\"; }\n" + example.commands.replace(
        DOCS_ADDRESS, address
    )
    done = subprocess.run(
        ["bash", "-euc", script],
        env={"PATH": "/usr/bin:/bin", "KEY": key},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = done.stdout.rstrip("\n").splitlines()
    return int(lines[-1]), json.loads(lines[-2])


def _local(value: Any, address: str) -> Any:
    return json.loads(json.dumps(value).replace(DOCS_ADDRESS, address))


EXAMPLES = all_examples()


def test_the_docs_hold_marked_api_examples() -> None:
    assert len(EXAMPLES) >= 7, [example.name for example in EXAMPLES]


@pytest.fixture(scope="module")
def docs_key(loopback_uptimy: LiveUptimy) -> str:
    return loopback_uptimy.create_key(read_only=False, organization=ORGANIZATION)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda example: example.name)
def test_an_api_example_answers_what_its_page_shows(
    example: Example, loopback_uptimy: LiveUptimy, docs_key: str
) -> None:
    status, body = run(example, loopback_uptimy, docs_key)
    shown = _local(example.answer, loopback_uptimy.base.removeprefix("http://"))
    assert status == example.status, body
    assert matches(shown, body), json.dumps(body, indent=2)


@pytest.mark.parametrize(
    ("shown", "got", "expected"),
    [
        ("…", {"any": 1}, True),
        ("API key upt_… (demo)", "API key upt_ab12… (demo)", True),
        ({"a": 1, "…": "…"}, {"a": 1, "b": 2}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ([1, "…"], [1, 2, 3], True),
        ([1], [1, 2], False),
        ({"a": "x"}, {"a": "y"}, False),
    ],
)
def test_an_elided_value_matches_only_where_the_page_says(shown: Any, got: Any, expected: bool) -> None:
    assert matches(shown, got) is expected
