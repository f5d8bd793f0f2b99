"""Start third-party MCP peers on loopback for the whole test session, and stop them after.

- The official Python SDK's servers (tests/peers/servers/sdk_servers.py, one process, a port
  each) come from the dev dependency ``mcp``, so they always run.
- server-everything (streamableHttp and sse) and the conformance suite come from npm:
  tests/peers/install puts them in var/peers (or $UPTIMY_PEERS_DIR). Without them the tests
  that need them skip and say so, unless UPTIMY_REQUIRE_PEERS=1 (CI), where they fail.

All processes start together the first time any peer is asked for, and each fixture waits
only for its own peer, so the suite pays for the slowest start, not the sum.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import httpx
import pytest
from peer_support import (
    CONFORMANCE_JS,
    EVERYTHING_JS,
    NODE22,
    PEERS_DIR,
    ROOT,
    SERVERS,
    free_port,
)

from probes.checks.mcp import parse_mcp_config
from probes.types import ProbeOutcome
from tests.conftest import PEERS_SWITCH, unavailable

START_TIMEOUT = 30.0


def peer_missing(what: str) -> NoReturn:
    """Skip (or, under UPTIMY_REQUIRE_PEERS=1, fail) a test whose npm peer isn't installed."""
    unavailable(f"{what} is not installed: run tests/peers/install (needs npm)", switch=PEERS_SWITCH)


def npm_peers_installed() -> bool:
    return NODE22.exists() and EVERYTHING_JS.exists() and CONFORMANCE_JS.exists()


@dataclass
class Peer:
    """One peer process: how it started, where it serves, and its output for failure messages."""

    name: str
    process: subprocess.Popen[bytes]
    ready: Future[dict[str, str]] = field(default_factory=Future)
    log: Path | None = None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)

    def output(self) -> str:
        if self.log is None or not self.log.exists():
            return ""
        return self.log.read_text(errors="replace")[-4000:]


def _wait_http(url: str, deadline: float) -> None:
    """Wait until ``url`` answers anything over HTTP (a 404 or 405 is an answer)."""
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1.0)
            return
        except httpx.HTTPError as exc:
            last = exc
            time.sleep(0.05)
    raise TimeoutError(f"{url} did not answer: {last}")


def _start_script(
    name: str, script: str, tmp: Path, pool: ThreadPoolExecutor, ready: Callable[[str, float], dict[str, str]]
) -> Peer:
    """Start tests/peers/servers/``script``; ``ready(first stdout line, deadline)`` waits for it to serve."""
    log = tmp / f"{Path(script).stem}.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, str(SERVERS / script)], stdout=subprocess.PIPE, stderr=stderr, cwd=ROOT
        )
    peer = Peer(name, process, log=log)

    def wait() -> dict[str, str]:
        deadline = time.monotonic() + START_TIMEOUT
        assert process.stdout is not None
        readable, _, _ = select.select([process.stdout], [], [], START_TIMEOUT)
        line = process.stdout.readline().decode().strip() if readable else ""
        if not line:
            raise RuntimeError(f"{script} printed no URL:\n{peer.output()}")
        return ready(line, deadline)

    peer.ready = pool.submit(wait)
    return peer


def _sdk_ready(line: str, deadline: float) -> dict[str, str]:
    urls: dict[str, str] = json.loads(line)
    for url in urls.values():
        _wait_http(url + "/_peer/log", deadline)
    return urls


def _start_everything(mode: str, tmp: Path, pool: ThreadPoolExecutor) -> Peer:
    port = free_port()
    log = tmp / f"everything-{mode}.log"
    env = {**os.environ, "PORT": str(port)}
    with log.open("wb") as output:
        process = subprocess.Popen(
            [str(NODE22), str(EVERYTHING_JS), mode],
            stdout=output,
            stderr=subprocess.STDOUT,
            cwd=PEERS_DIR,
            env=env,
        )
    peer = Peer(f"everything-{mode}", process, log=log)

    def wait() -> dict[str, str]:
        base = f"http://127.0.0.1:{port}"
        _wait_http(base + "/", time.monotonic() + START_TIMEOUT)
        return {"base": base}

    peer.ready = pool.submit(wait)
    return peer


class Peers:
    """Hold every peer process of the session; ``sdk``, ``everything`` and ``fast`` wait for that one peer."""

    def __init__(self, tmp: Path) -> None:
        self.pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="peers")
        self.peers: dict[str, Peer] = {
            "sdk": _start_script("sdk", "sdk_servers.py", tmp, self.pool, _sdk_ready),
            "fast": _start_script("fast", "fast_mcp.py", tmp, self.pool, lambda line, _: {"url": line}),
        }
        if npm_peers_installed():
            for mode in ("streamableHttp", "sse"):
                self.peers[f"everything-{mode}"] = _start_everything(mode, tmp, self.pool)

    def _ready(self, peer: str) -> dict[str, str]:
        if peer not in self.peers:
            peer_missing("@modelcontextprotocol/server-everything")
        process = self.peers[peer]
        try:
            return process.ready.result(timeout=START_TIMEOUT + 5)
        except Exception as exc:
            raise RuntimeError(f"peer {peer} did not start: {exc}\n{process.output()}") from exc

    def sdk(self, name: str) -> str:
        """Return the base URL ("http://127.0.0.1:PORT") of one SDK server from sdk_servers.py."""
        return self._ready("sdk")[name]

    def everything(self, mode: str) -> str:
        return self._ready(f"everything-{mode}")["base"]

    def fast(self) -> str:
        """Return the MCP URL of tests/peers/servers/fast_mcp.py (the benchmark's server)."""
        return self._ready("fast")["url"]

    def sdk_log(self, name: str) -> list[dict[str, Any]]:
        """Return what the SDK server ``name`` received so far (HTTP and JSON-RPC methods)."""
        log: list[dict[str, Any]] = httpx.get(self.sdk(name) + "/_peer/log", timeout=5).json()
        return [entry for entry in log if entry["path"] != "/_peer/log"]

    def clear_sdk_log(self, name: str) -> None:
        httpx.delete(self.sdk(name) + "/_peer/log", timeout=5)

    def close(self) -> None:
        for peer in self.peers.values():
            peer.stop()
        self.pool.shutdown(wait=False, cancel_futures=True)


@pytest.fixture(scope="session")
def peers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peers]:
    running = Peers(tmp_path_factory.mktemp("peers"))
    try:
        yield running
    finally:
        running.close()


@pytest.fixture(scope="session")
def conformance_cli() -> list[str]:
    """Return the command that runs the conformance suite on Node 22."""
    if not (NODE22.exists() and CONFORMANCE_JS.exists()):
        peer_missing("@modelcontextprotocol/conformance (with node@22)")
    return [str(NODE22), str(CONFORMANCE_JS)]


def run_one_check(url: str, **config: Any) -> ProbeOutcome:
    """Run one Uptimy MCP check against a loopback peer, as the worker would."""
    from probes.runner import ProbeEnv, run_check_sync

    return run_check_sync(parse_mcp_config({"uri": url, **config}), ProbeEnv(allow_private=True))


@pytest.fixture(scope="session")
def mcp_check() -> Callable[..., ProbeOutcome]:
    """Return a function that runs one check: ``mcp_check(url, requiredTools=[...], ...)``."""
    return run_one_check
