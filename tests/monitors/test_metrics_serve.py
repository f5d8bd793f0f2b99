"""/metrics of a real `manage.py serve`: gunicorn with 2 workers sums what every process counted.

The server runs as `make run` runs it on a fresh machine (no environment, a var dir of its
own); other processes count into its metrics directory as the Celery workers and the embedded
worker do, and the scrapes go through gunicorn over loopback.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.clock import clock_environment

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 90.0

COUNT_CHECKS = textwrap.dedent(
    """
    import sys
    import django
    django.setup()
    from monitors import metrics
    from probes.checks import check_kind
    from probes.types import ProbeOutcome, Status

    config = check_kind("mcp").parse({"uri": "https://mcp.example.com/mcp"})
    metrics.observe_checks(sys.argv[1], [(config, ProbeOutcome(status=Status.UP))] * int(sys.argv[2]))
    """
)

HOLD_BATCHES = textwrap.dedent(
    """
    import os, sys
    import django
    django.setup()
    from monitors import metrics

    metrics.observe_embedded_queue({sys.argv[1]: int(sys.argv[2])})
    print(os.getpid())
    """
)


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    metrics_dir: Path
    env: dict[str, str]
    log: Path

    def scrape(self, **headers: str) -> httpx.Response:
        return httpx.get(f"{self.url}/metrics", headers=headers, timeout=30)

    def sample(self, name: str, **labels: str) -> float | None:
        response = self.scrape()
        assert response.status_code == 200, response.text
        for family in text_string_to_metric_families(response.text):
            for found in family.samples:
                if found.name == name and found.labels == labels:
                    return found.value
        return None

    def run(self, code: str, *args: str) -> str:
        """Run ``code`` in another process that counts into this server's metrics directory."""
        env = {**self.env, "PROMETHEUS_MULTIPROC_DIR": str(self.metrics_dir)}
        done = subprocess.run(
            [sys.executable, "-c", code, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def web_workers(self) -> list[int]:
        """Return the gunicorn workers' ids: gunicorn processes whose parent is gunicorn (the arbiter)."""
        gunicorns = {pid for pid in descendants(self.process.pid) if b"\0-m\0gunicorn\0" in cmdline(pid)}
        return sorted(pid for pid in gunicorns if parent(pid) in gunicorns)


def cmdline(pid: int) -> bytes:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    return b""


def parent(pid: int) -> int | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return None


def descendants(root: int) -> set[int]:
    pids = [int(path.name) for path in Path("/proc").iterdir() if path.name.isdigit()]
    children: dict[int, list[int]] = {}
    for pid in pids:
        children.setdefault(parent(pid) or 0, []).append(pid)
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def wait_for(condition, what: str, timeout: float = 60.0) -> None:
    """Wait until ``condition()`` holds; the bound only turns a hang into a failure that says what."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    var_dir = tmp_path_factory.mktemp("serve-metrics")
    keep = {name: os.environ[name] for name in ("PATH", "HOME", "LANG") if name in os.environ}
    env = {
        **keep,
        **clock_environment(),
        "DJANGO_SETTINGS_MODULE": "uptimy.settings",
        "UPTIMY_VAR_DIR": str(var_dir),
    }
    port = free_port()
    log = var_dir / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(port)],
            env=env,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    running = Server(
        f"http://127.0.0.1:{port}", process, var_dir / "metrics" / f"run-{process.pid}", env, log
    )
    try:
        wait_for(lambda: _answers(running), "serve to answer /healthz", START_TIMEOUT)
        wait_for(lambda: len(running.web_workers()) == 2, "gunicorn's 2 workers")
        yield running
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop serve as Ctrl-C would; kill its whole tree if it does not stop (honcho's parts have sessions of their own)."""
    tree = descendants(process.pid)
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        for pid in tree | descendants(process.pid) | {process.pid}:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.wait(timeout=10)


def _answers(running: Server) -> bool:
    assert running.process.poll() is None, f"serve exited:\n{running.log.read_text(errors='replace')[-3000:]}"
    try:
        return httpx.get(f"{running.url}/healthz", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def test_serve_gives_every_part_one_metrics_directory_of_this_run(server):
    assert server.metrics_dir.is_dir()
    assert f"PROMETHEUS_MULTIPROC_DIR={server.metrics_dir}".encode() in Path(
        f"/proc/{server.web_workers()[0]}/environ"
    ).read_bytes().split(b"\0")


def test_a_counter_counted_in_two_processes_is_summed_by_every_web_worker(server):
    region = f"two-{uuid.uuid4().hex[:8]}"

    server.run(COUNT_CHECKS, region, "3")
    server.run(COUNT_CHECKS, region, "4")

    # Either of gunicorn's workers may answer a scrape; each must read every process's files.
    seen = {server.sample("uptimy_checks_total", region=region, type="mcp", kind="ok") for _ in range(8)}
    assert seen == {7}


def test_a_dead_web_workers_live_gauges_leave_the_scrape(server):
    region = f"gone-{uuid.uuid4().hex[:8]}"
    writer = int(server.run(HOLD_BATCHES, region, "5"))
    victim = server.web_workers()[0]
    # Give the web worker the live gauge another process wrote, as if it had written it itself.
    gauge = server.metrics_dir / f"gauge_livesum_{victim}.db"
    (server.metrics_dir / f"gauge_livesum_{writer}.db").rename(gauge)
    assert server.sample("uptimy_embedded_queue_depth", region=region) == 5

    os.kill(victim, signal.SIGKILL)

    wait_for(lambda: not gauge.exists(), "gunicorn's child_exit hook to drop the dead worker's gauge")
    assert server.sample("uptimy_embedded_queue_depth", region=region) is None


def test_serve_answers_a_loopback_scraper_but_not_one_behind_a_proxy(server):
    assert server.scrape().status_code == 200
    assert server.scrape(**{"X-Forwarded-For": "203.0.113.7"}).status_code == 403
