"""Run the docs' marked REST API examples against a live Uptimy and hold each to what it shows.

The convention (docs/rest-api.md, "More examples"): a line ``<!-- example: api STATUS -->`` is
followed by a ```sh block of curl calls and then a block showing what it prints: a ```json block
holds the answer of its last call; any other block (```xml, ```csv, ```text) holds the whole text
the block prints. The test runs a page's examples in the page's order in one bash, so a block
may use the variables an earlier block of its page set (``$API``, ``$PAGE``), with ``$KEY`` a
read-write key of an organization of its own, ``127.0.0.1:8000`` the live server's address and
the docs' webhook receiver ``https://hooks.example.com`` a loopback one; the last call's status
must be STATUS. In the shown answer, ``…`` stands for what must differ from run to run: a string
``"…"`` matches any value, ``…`` inside a string (or a text block) matches any text, an object
key ``"…"`` lets the answer hold more keys, and a list ending in ``"…"`` lets it hold more items.

A line ``<!-- example: command EXIT -->`` marks a command a user runs in the repository's root
(``manage.py mcpcheck``): it runs alone there, with PATH and HOME only, and must exit EXIT and
print what the block after it shows.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.live_uptimy import LiveUptimy
from tests.markdown_blocks import marked_blocks, next_fence

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
MARKER = re.compile(r"^<!-- example: (api|command) (\d{1,3}) -->$")
DOCS_ADDRESS = "127.0.0.1:8000"
DOCS_RECEIVER = "https://hooks.example.com"  # the docs' webhook receiver: a loopback one here
ELIDED = "…"
ORGANIZATION = "demo"  # as the docs: `manage.py createapikey demo`; its plan allows 30 s intervals
SEPARATOR = "@@ end of an example @@"
PAGE_SECONDS = 120
# Each call prints its status on stderr, on a line of its own: an example's last such line is its status.
CURL = "curl() { command curl -w '%{stderr}\\n%{http_code}\\n' \"$@\"; }\n"


@dataclass(frozen=True)
class Example:
    """One marked example: where it is, the commands it shows, the status and answer it promises."""

    page: str
    line: int
    commands: str
    status: int
    answer: Any  # the JSON shown, or the text when the shown block is not ```json
    json: bool = True
    kind: str = "api"  # or "command": run alone from the repository's root, STATUS its exit code

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
        if block.info != "sh" or not answer.info:
            raise ValueError(
                f"{page}:{index + 1}: an example is a ```sh block then a block of what it prints"
            )
        is_json = answer.info == "json"
        shown = json.loads(answer.body) if is_json else answer.body.strip()
        examples.append(
            Example(
                page, index + 1, block.body, int(marked.group(2)), shown, json=is_json, kind=marked.group(1)
            )
        )
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


@dataclass(frozen=True)
class Outcome:
    """What one example printed on stdout, and its last call's status (None: it did not run)."""

    status: int | None
    printed: str


def local(text: str, substitutions: dict[str, str]) -> str:
    for shown, live in substitutions.items():
        text = text.replace(shown, live)
    return text


def run_page(examples: list[Example], substitutions: dict[str, str], key: str, cwd: Path) -> list[Outcome]:
    """Run a page's examples as shown, in order, in one bash; return what each printed and its status."""
    end = f"printf '\\n%s\\n' '{SEPARATOR}' | tee /dev/stderr\n"
    script = CURL + "".join(local(example.commands, substitutions) + "\n" + end for example in examples)
    try:
        done = subprocess.run(
            ["bash", "-euc", script],
            env={"PATH": "/usr/bin:/bin", "KEY": key},
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=PAGE_SECONDS,
            check=False,
        )
        stdout, stderr, ended = done.stdout, done.stderr, f"bash exited {done.returncode}"
    except subprocess.TimeoutExpired as late:  # a wait that never ends (an incident never opened)
        stdout, stderr = (_text(late.stdout), _text(late.stderr))
        ended = f"still running after {PAGE_SECONDS} s"
    # A terminal shows a CSV's CRLF as a line break, as the page does.
    printed = stdout.replace("\r\n", "\n").split(f"\n{SEPARATOR}\n")
    statuses = stderr.split(f"\n{SEPARATOR}\n")
    outcomes = []
    for index in range(len(examples)):
        if index >= len(printed) - 1:
            outcomes.append(Outcome(None, f"did not run ({ended}):\n{stderr}"))
            continue
        codes = re.findall(r"^(\d{3})$", statuses[index], re.M)
        outcomes.append(Outcome(int(codes[-1]) if codes else None, printed[index].strip()))
    return outcomes


def _text(output: bytes | str | None) -> str:
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


def answered(example: Example, outcome: Outcome) -> Any:
    """Return the answer an outcome holds: its last line as JSON (a ```json example), or all its text."""
    if not example.json:
        return outcome.printed
    for text in (outcome.printed, outcome.printed.splitlines()[-1] if outcome.printed else ""):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return outcome.printed


def run_command(example: Example) -> Outcome:
    """Run a command example as a user types it in the repository's root; its output and exit code."""
    done = subprocess.run(
        ["bash", "-uc", example.commands],
        env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home())},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return Outcome(done.returncode, done.stdout.strip())


EXAMPLES = [example for example in all_examples() if example.kind == "api"]
COMMANDS = [example for example in all_examples() if example.kind == "command"]


def test_the_docs_hold_marked_api_examples() -> None:
    assert len(EXAMPLES) >= 35, [example.name for example in EXAMPLES]
    assert COMMANDS, "no <!-- example: command EXIT --> in the docs"


class _Receiver(BaseHTTPRequestHandler):
    """The docs' webhook receiver: every POST gets a 200."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


@pytest.fixture(scope="module")
def receiver() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def page_outcomes(
    loopback_uptimy: LiveUptimy, receiver: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, str], dict[str, Outcome]]:
    """Run every page's examples once; return the substitutions and each example's outcome by name."""
    key = loopback_uptimy.create_key(read_only=False, organization=ORGANIZATION)
    substitutions = {DOCS_ADDRESS: loopback_uptimy.base.removeprefix("http://"), DOCS_RECEIVER: receiver}
    cwd = tmp_path_factory.mktemp("docs-examples")
    outcomes: dict[str, Outcome] = {}
    for page in sorted({example.page for example in EXAMPLES}):
        examples = [example for example in EXAMPLES if example.page == page]
        for example, outcome in zip(examples, run_page(examples, substitutions, key, cwd), strict=True):
            outcomes[example.name] = outcome
    return substitutions, outcomes


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda example: example.name)
def test_an_api_example_answers_what_its_page_shows(
    example: Example, page_outcomes: tuple[dict[str, str], dict[str, Outcome]]
) -> None:
    substitutions, outcomes = page_outcomes
    outcome = outcomes[example.name]
    got = answered(example, outcome)
    if example.json:
        shown = json.loads(local(json.dumps(example.answer), substitutions))
    else:
        shown = local(example.answer, substitutions)

    assert outcome.status == example.status, outcome.printed
    assert matches(shown, got), json.dumps(got, indent=2) if example.json else got


@pytest.mark.parametrize("example", COMMANDS, ids=lambda example: example.name)
def test_a_command_example_prints_what_its_page_shows(example: Example) -> None:
    outcome = run_command(example)
    got = answered(example, outcome)

    assert outcome.status == example.status, outcome.printed
    assert matches(example.answer, got), json.dumps(got, indent=2) if example.json else got


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
        ("<rss>…<title>Slow answers</title>…</rss>", "<rss><a/>\n<title>Slow answers</title></rss>", True),
        ("<rss>…<title>Slow answers</title>…</rss>", "<rss><title>Fast answers</title></rss>", False),
    ],
)
def test_an_elided_value_matches_only_where_the_page_says(shown: Any, got: Any, expected: bool) -> None:
    assert matches(shown, got) is expected


def test_a_page_runs_in_one_shell_and_each_example_gets_its_own_output_and_status(tmp_path: Path) -> None:
    page = """<!-- example: api 200 -->
```sh
NAME=first; echo "$NAME"
```

```text
first
```
<!-- example: api 200 -->
```sh
echo "again $NAME"; echo '{"a": 1}'
```

```json
{"a": 1}
```
"""
    examples = page_examples("page.md", page)
    outcomes = run_page(examples, {}, "key", tmp_path)

    assert [example.json for example in examples] == [False, True]
    assert [outcome.printed for outcome in outcomes] == ["first", 'again first\n{"a": 1}']
    assert answered(examples[1], outcomes[1]) == {"a": 1}


def test_a_page_whose_example_fails_marks_it_and_the_rest_not_run(tmp_path: Path) -> None:
    page = "<!-- example: api 200 -->\n```sh\nfalse\n```\n\n```text\nx\n```\n"

    (outcome,) = run_page(page_examples("page.md", page), {}, "key", tmp_path)

    assert outcome.status is None
    assert outcome.printed.startswith("did not run (bash exited 1)")
