#!/usr/bin/env python3
"""Run README.md's commands in a fresh clone, as a new user would: the README commands test.

Usage: ``python3 tests/readme/run_readme.py [--keep]``. Standard library only: it runs before
any venv exists, and builds the clone's own.

Every fenced block that follows the marker comment (MARKER) runs in the README's order, in a
``git clone`` of this checkout's HEAD in a temporary directory, with an environment holding
only PATH and HOME: no DEBUG, no keys, no DATABASE_URL, nothing a new user would not have.
`make run` serves until Ctrl-C, so it starts in the background, on a free port (PORT, the knob
the README names; the blocks' 127.0.0.1:8000 become that port: other engineers' servers may
hold 8000), the later blocks run while it serves, as in another shell, and at the end it gets a
Ctrl-C (SIGINT to its process group), after which nothing of it may still run.

Each step is held to what the README says of it (CHECKS). A marked block without a check, or a
check whose command no marked block runs any more, fails too: the test breaks when the README
drifts. Exit 0 when every step passed, 1 otherwise, with each failure's reason.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[2]
# The fence parser the docs examples test shares (tests/markdown_blocks.py, standard library only).
sys.path.insert(0, str(ROOT / "tests"))
from markdown_blocks import marked_blocks  # noqa: E402

README = ROOT / "README.md"
MARKER = "<!-- checked by tests/readme/run_readme.py"
README_ADDRESS = "127.0.0.1:8000"
# A venv built from a warm pip cache takes about a minute; a cold one, or a busy machine, longer.
SERVE_SECONDS = 600
# The whole suite, beside CI's own on the same two cores: 1,500 s was passed on 2026-12-07.
MAKE_TEST_SECONDS = 3000
STEP_SECONDS = 180
STOP_SECONDS = 30
MASK = "********"
# What the README lets `make test` skip on a machine without services: "Tests that need
# PostgreSQL or Redis skip when DATABASE_URL/REDIS_URL are not set".
SERVICE_SKIP = re.compile(r"DATABASE_URL|REDIS_URL")
SKIPPED = re.compile(r"^SKIPPED \[\d+\] \S+?:\d+: (.*)$", re.M)
PYTEST_SUMMARY = re.compile(r"^=+ (.*\d+ passed.*) =+$", re.M)


def say(message: str) -> None:
    print(f"[readme {time.strftime('%H:%M:%S')}] {message}", flush=True)


# --- reading the README ---------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One thing a user types: `make run` (a server), or the other lines of a block as one script."""

    line: int  # README line of the step's first command
    text: str
    serves: bool = False

    @property
    def title(self) -> str:
        return next(line for line in self.text.splitlines() if line.strip()).strip()


def readme_steps(text: str) -> list[Step]:
    """Return the steps of every marked block, in the README's order.

    A block is split at its `make run` lines: the server starts there, and the lines before and
    after it run as scripts of their own (a script waits for its commands; a server never ends).
    """
    lines = text.splitlines()
    steps: list[Step] = []
    for _, block in marked_blocks(lines, lambda line: line.startswith(MARKER), "README.md"):
        pending: list[tuple[int, str]] = []
        for number in range(block.start + 1, block.end):
            if lines[number].split("#", 1)[0].split() == ["make", "run"]:
                steps += _script(pending)
                steps.append(Step(number + 1, lines[number], serves=True))
                pending = []
            else:
                pending.append((number + 1, lines[number]))
        steps += _script(pending)
    return steps


def _script(lines: list[tuple[int, str]]) -> list[Step]:
    commands = [
        (number, line) for number, line in lines if line.strip() and not line.lstrip().startswith("#")
    ]
    if not commands:
        return []
    first = commands[0][0]
    return [Step(first, "\n".join(line for number, line in lines if number >= first) + "\n")]


def header_values(step: Step) -> list[str]:
    """Return the header values a step sends (`--header "Name: value"`, or a JSON "headers" object)."""
    values = [value.strip() for value in re.findall(r'--header\s+"[^":]+:([^"]+)"', step.text)]
    for headers in re.findall(r'"headers":\s*(\{[^{}]*\})', step.text):
        values += [str(value) for value in json.loads(headers).values()]
    # The credential without its scheme too ("Bearer your-key": "your-key").
    return sorted({part for value in values for part in (value, value.split(None, 1)[-1])})


# --- what the README promises of each step ---------------------------------------------------


@dataclass
class Ran:
    """What a script step did."""

    returncode: int | None  # None: killed at its time limit
    stdout: str
    stderr: str
    seconds: float


def check_make_test(step: Step, ran: Ran, env: dict[str, str]) -> list[str]:
    problems = []
    if ran.returncode != 0:
        problems.append(f"make test exited {ran.returncode}")
    summary = PYTEST_SUMMARY.findall(ran.stdout)
    if not summary:
        problems.append("no pytest summary line with passed tests in its output")
    # The README: without npm the peer tests skip; with it they are installed and run.
    allowed = SERVICE_SKIP.pattern + ("" if shutil.which("npm", path=env["PATH"]) else "|npm")
    others = sorted({reason for reason in SKIPPED.findall(ran.stdout) if not re.search(allowed, reason)})
    if others:
        problems.append("skipped for reasons the README does not give: " + "; ".join(others))
    return problems


def check_api_create(step: Step, ran: Ran, env: dict[str, str]) -> list[str]:
    if ran.returncode != 0:
        return [f"exited {ran.returncode}"]
    try:
        answer = json.loads(ran.stdout)
    except ValueError:
        return [f"the API's answer is not JSON: {ran.stdout[:300]!r}"]
    if not isinstance(answer, dict) or "id" not in answer:
        return [f"no healthcheck was created (README: the answer is 201): {ran.stdout[:300]!r}"]
    headers = (answer.get("config") or {}).get("headers") or {}
    if not headers or set(headers.values()) != {MASK}:
        return [f"the header values are not masked (README: {MASK}): {headers!r}"]
    return []


def check_mcpcheck(step: Step, ran: Ran, env: dict[str, str]) -> list[str]:
    try:
        outcome = json.loads(ran.stdout)
        status = outcome["status"]
    except (ValueError, KeyError, TypeError):
        return [f"exited {ran.returncode} without the check's outcome as JSON: {ran.stderr[-600:]!r}"]
    # The README: exits 0 when up, 1 when down (no network, or no such server, is down).
    if ran.returncode != (0 if status == "up" else 1):
        return [f"exited {ran.returncode} with status {status!r}"]
    return []


@dataclass(frozen=True)
class Check:
    command: str  # a step runs this (found in its text)
    promise: str
    run: Callable[[Step, Ran, dict[str, str]], list[str]]
    seconds: float = STEP_SECONDS


CHECKS = (
    Check(
        "make test",
        "passes, skipping only the PostgreSQL and Redis tests",
        check_make_test,
        MAKE_TEST_SECONDS,
    ),
    Check("manage.py mcpcheck", "prints the outcome as JSON, exits 0 up / 1 down", check_mcpcheck),
    Check("curl", "creates a healthcheck (201) with its header values masked", check_api_create),
)


def check_for(step: Step) -> Check | None:
    return next((check for check in CHECKS if check.command in step.text), None)


# --- processes ---------------------------------------------------------------------------------


def clean_env() -> dict[str, str]:
    """Return PATH and HOME only; PATH without any virtualenv's bin (a new user's has none of ours)."""
    path = [
        part
        for part in os.environ["PATH"].split(os.pathsep)
        if not (Path(part).parent / "pyvenv.cfg").exists()
    ]
    return {"PATH": os.pathsep.join(path), "HOME": os.environ["HOME"]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def process_tree(pid: int) -> set[int]:
    """Return ``pid`` and every process under it (make run's children start sessions of their own)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            parent = int(entry.read_text().rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry.parent.name))
    tree, todo = set(), [pid]
    while todo:
        current = todo.pop()
        tree.add(current)
        todo += children.get(current, [])
    return tree


def alive(pid: int) -> bool:
    """Say whether ``pid`` runs (a zombie whose parent has not reaped it yet does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def command_line(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    return "?"


def _tee(stream: IO[str], into: list[str], prefix: str) -> None:
    for line in stream:
        into.append(line)
        # An answer without a closing newline (curl's JSON) must not swallow the next report line.
        sys.stdout.write(prefix + line + ("" if line.endswith("\n") else "\n"))
        sys.stdout.flush()


@dataclass
class Session:
    """The clone, its environment, and the processes the steps started."""

    clone: Path
    env: dict[str, str]
    port: int
    logs: Path
    server: subprocess.Popen[bytes] | None = None
    server_log: Path | None = None
    serving: bool = False
    server_trouble: bool = False  # make run failed a check: its output goes in the report
    running: subprocess.Popen[str] | None = None
    failures: list[str] = field(default_factory=list)
    rows: list[str] = field(default_factory=list)

    def record(self, where: str, step: Step, seconds: float, problems: list[str], *, done: str) -> None:
        mark = "FAIL" if problems else "ok"
        self.rows.append(
            f"{mark:5} {where:14} {step.title[:48]:48} {seconds:6.0f}s  {'; '.join(problems) or done}"
        )
        self.failures += [f"{where} ({step.title}): {problem}" for problem in problems]
        say(f"{where}: {mark}" + (f": {'; '.join(problems)}" if problems else f" in {seconds:.0f}s"))

    def run_script(self, step: Step, seconds: float) -> Ran:
        text = step.text.replace(README_ADDRESS, f"127.0.0.1:{self.port}")
        started = time.monotonic()
        self.running = subprocess.Popen(
            ["bash", "-e", "-o", "pipefail", "-c", text],
            cwd=self.clone,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        out: list[str] = []
        err: list[str] = []
        assert self.running.stdout is not None
        assert self.running.stderr is not None
        readers = [
            threading.Thread(target=_tee, args=(self.running.stdout, out, "  | "), daemon=True),
            threading.Thread(target=_tee, args=(self.running.stderr, err, "  ! "), daemon=True),
        ]
        for reader in readers:
            reader.start()
        returncode: int | None
        try:
            returncode = self.running.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            self.kill_running()
            returncode = None
        for reader in readers:
            reader.join(timeout=10)
        self.running = None
        return Ran(returncode, "".join(out), "".join(err), time.monotonic() - started)

    def kill_running(self) -> None:
        if self.running is not None and self.running.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.running.pid, signal.SIGKILL)
            self.running.wait()

    def start_server(self, step: Step) -> list[str]:
        """Start `make run` as typed, on this session's port; wait until /healthz answers 200.

        Return what went wrong; when /healthz never answered, the first problem says so and
        ``self.serving`` stays false.
        """
        self.server_log = self.logs / "make-run.log"
        with self.server_log.open("wb") as log:
            self.server = subprocess.Popen(
                ["bash", "-c", step.text],
                cwd=self.clone,
                env={**self.env, "PORT": str(self.port)},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + SERVE_SECONDS
        while not self._healthy():
            if self.server.poll() is not None:
                return [f"make run exited ({self.server.returncode}) before /healthz answered 200"]
            if time.monotonic() > deadline:
                return [f"/healthz did not answer 200 within {SERVE_SECONDS}s"]
            time.sleep(1)
        self.serving = True
        problems = []
        # The README: the first start prints the admin login and an API key for `demo`, and
        # writes the generated keys to var/secrets.env, mode 0600.
        announced = self.server_log.read_text(errors="replace")
        if not re.search(r"^API key for demo: upt_\S+", announced, re.M):
            problems.append("make run printed no API key for the demo organization")
        secrets = self.clone / "var" / "secrets.env"
        if not secrets.exists() or stat.S_IMODE(secrets.stat().st_mode) != 0o600:
            problems.append("make run wrote no var/secrets.env of mode 0600")
        return problems

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=5) as answer:
                return bool(answer.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def stop_server(self) -> list[str]:
        """Press Ctrl-C (SIGINT to make run's process group): the README says it stops everything."""
        if self.server is None or not self.serving:
            return []
        if self.server.poll() is not None:
            return [f"make run exited ({self.server.returncode}) before the Ctrl-C"]
        tree = process_tree(self.server.pid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.server.pid, signal.SIGINT)
        deadline = time.monotonic() + STOP_SECONDS
        while any(alive(pid) for pid in tree) or listening(self.port):
            if time.monotonic() > deadline:
                left = {pid: command_line(pid) for pid in tree if alive(pid)}
                for pid in left:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                self.server.wait()
                return [f"Ctrl-C left running after {STOP_SECONDS}s: {left or f'a listener on {self.port}'}"]
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.server.wait(timeout=0.2)
        return []


def run(session: Session, steps: list[Step]) -> None:
    """Run every step in order, holding each to its check; record what failed."""
    for step in steps:
        where = f"README.md:{step.line}"
        if step.serves:
            say(f"{where}: $ {step.title}  (in the background, PORT={session.port})")
            started = time.monotonic()
            problems = session.start_server(step)
            seconds = time.monotonic() - started
            session.record(where, step, seconds, problems, done="/healthz answered 200")
            session.server_trouble = bool(problems)
            if not session.serving:
                return  # every later step talks to the server
            continue
        check = check_for(step)
        if check is None:
            session.record(where, step, 0, ["a marked block no check in tests/readme/run_readme.py knows"])
            continue
        say(f"{where}: $ {step.title}")
        ran = session.run_script(step, check.seconds)
        problems = (
            [f"still running after {check.seconds:.0f}s: killed"]
            if ran.returncode is None
            else check.run(step, ran, session.env)
        )
        leaked = [value for value in header_values(step) if value in ran.stdout + ran.stderr]
        if leaked:
            problems.append("a header value was printed (the README: never)")
        session.record(where, step, ran.seconds, problems, done=check.promise)


def missing_checks(steps: list[Step]) -> list[str]:
    """Return the checks whose command no marked block runs any more (the README drifted)."""
    used = {check_for(step) for step in steps if not step.serves}
    problems = [
        f"no marked README block runs `{check.command}` any more" for check in CHECKS if check not in used
    ]
    if not any(step.serves for step in steps):
        problems.append("no marked README block runs `make run` any more")
    return problems


@contextlib.contextmanager
def fresh_clone(keep: bool) -> Iterator[Path]:
    tmp = Path(tempfile.mkdtemp(prefix="uptimy-readme-"))
    try:
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(tmp / "clone")], check=True)
        yield tmp
    finally:
        if keep:
            say(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--keep", action="store_true", help="keep the clone and the logs")
    args = parser.parse_args(argv)
    # .ci/run's time limit sends SIGTERM: stop make run and remove the clone on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    steps = readme_steps(README.read_text(encoding="utf-8"))
    drift = missing_checks(steps)
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "log", "-1", "--format=%h %s"], capture_output=True, text=True, check=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    say(f"{len(steps)} steps from README.md, run on a fresh clone of {commit}")
    if dirty:
        say("note: this checkout has uncommitted changes; the clone has only what is committed")

    with fresh_clone(args.keep) as tmp:
        env = clean_env()
        session = Session(clone=tmp / "clone", env=env, port=free_port(), logs=tmp)
        say(f"clone {session.clone}; environment: {sorted(env)} only")
        try:
            run(session, steps)
        finally:
            session.kill_running()
            stopped = time.monotonic()
            problems = session.stop_server()
            session.server_trouble |= bool(problems)
            if session.serving:
                session.record(
                    "Ctrl-C",
                    Step(0, "stop make run"),
                    time.monotonic() - stopped,
                    problems,
                    done="all stopped",
                )
        failures = drift + session.failures
        if session.server_trouble and session.server_log is not None and session.server_log.exists():
            say("make run's output (last 40 lines):")
            print("\n".join(session.server_log.read_text(errors="replace").splitlines()[-40:]), flush=True)

    print()
    say("summary:")
    for row in session.rows:
        print("    " + row)
    for problem in drift:
        print("    FAIL  " + problem)
    if failures:
        say(f"FAILED: {len(failures)} problem(s)")
        for failure in failures:
            print("    " + failure)
        return 1
    say("every README command worked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
