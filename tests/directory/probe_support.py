"""Loopback web servers for directory probing: scripted answers per path, requests held at a gate, counted per host."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import select
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from directory.probing import HostPacer, ProbeDone, ProbeTarget, probe_round
from directory.robots import RobotsCache, fetch_robots
from probes.runner import ProbeEnv
from tests.peers.peer_support import SERVERS

ENV = ProbeEnv(allow_private=True, user_agent="Uptimy/test (+https://uptimy.example; MCP directory)")
WAIT = 30.0


@dataclass(frozen=True)
class Seen:
    host: str
    method: str
    path: str
    user_agent: str


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()


@dataclass
class Gate:
    """Hold every POST until opened, counting the requests in flight per host and their peak."""

    closed: bool = False
    cond: threading.Condition = field(default_factory=threading.Condition)
    in_flight: dict[str, int] = field(default_factory=dict)
    peak: dict[str, int] = field(default_factory=dict)
    arrived: dict[str, int] = field(default_factory=dict)
    total_peak: int = 0

    def enter(self, host: str) -> None:
        with self.cond:
            self.in_flight[host] = self.in_flight.get(host, 0) + 1
            self.arrived[host] = self.arrived.get(host, 0) + 1
            self.peak[host] = max(self.peak.get(host, 0), self.in_flight[host])
            self.total_peak = max(self.total_peak, sum(self.in_flight.values()))
            self.cond.notify_all()
            self.cond.wait_for(lambda: not self.closed, timeout=WAIT)

    def leave(self, host: str) -> None:
        with self.cond:
            self.in_flight[host] -= 1

    def wait_for(self, predicate: Callable[[Gate], bool]) -> None:
        with self.cond:
            assert self.cond.wait_for(lambda: predicate(self), timeout=WAIT), "the requests never arrived"

    def open(self) -> None:
        with self.cond:
            self.closed = False
            self.cond.notify_all()


@dataclass
class Site:
    """What every loopback server answers: replies by "METHOD /path" or "/path" (else 404; 500 to a POST), POSTs through the gate."""

    replies: dict[str, Reply] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    gate: Gate = field(default_factory=Gate)
    hung: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reply(self, method: str, path: str, default: Reply) -> Reply:
        """Return the reply to "METHOD /path", else to "/path" (any method), else ``default``."""
        return self.replies.get(f"{method} {path}") or self.replies.get(path) or default

    def posts(self, host: str | None = None) -> list[Seen]:
        with self.lock:
            return [s for s in self.seen if s.method == "POST" and (host is None or s.host == host)]


@contextlib.contextmanager
def serve(site: Site, *addresses: str) -> Iterator[list[str]]:
    """Serve ``site`` on each loopback address (a port each); yield their base URLs."""

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            host = self.headers.get("Host", "")
            path = self.path
            with site.lock:
                site.seen.append(Seen(host, self.command, path, self.headers.get("User-Agent", "")))
            if path == "/hang":
                # Never answers while the test runs: the probe's own timeout ends it.
                site.hung.wait(WAIT)
                return
            if self.command == "POST":
                site.gate.enter(host.rsplit(":", 1)[0])
                try:
                    self._reply(site.reply(self.command, path, Reply(500, b"held and failed")))
                finally:
                    site.gate.leave(host.rsplit(":", 1)[0])
                return
            self._reply(site.reply(self.command, path, Reply(404)))

        def _reply(self, reply: Reply) -> None:
            self.send_response(reply.status)
            for name, value in reply.headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)

        do_GET = do_POST = do_DELETE = _answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    servers = [ThreadingHTTPServer((address, 0), Handler) for address in addresses]
    threads = [
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        for server in servers
    ]
    for thread in threads:
        thread.start()
    try:
        yield [
            f"http://{address}:{server.server_address[1]}"
            for address, server in zip(addresses, servers, strict=True)
        ]
    finally:
        site.gate.open()
        site.hung.set()
        for server in servers:
            server.shutdown()
            server.server_close()
        for thread in threads:
            thread.join()


def robots() -> RobotsCache:
    """Return a robots.txt cache reading through the engine's guard (loopback allowed)."""
    return RobotsCache(
        functools.partial(fetch_robots, allow_private=True, user_agent=ENV.user_agent, timeout=5.0), ttl=3600
    )


def run_round(
    targets: Sequence[ProbeTarget],
    *,
    cache: RobotsCache | None = None,
    pacer: HostPacer | None = None,
    max_in_flight: int = 8,
    per_host: int = 2,
    timeout: float = 10.0,
) -> list[ProbeDone]:
    """Run one probe round on a fresh loop; return its probes in the order they ended."""

    async def main() -> list[ProbeDone]:
        stream = probe_round(
            targets,
            ENV,
            robots=cache or robots(),
            timeout=timeout,
            max_in_flight=max_in_flight,
            per_host=per_host,
            pacer=pacer,
        )
        async with contextlib.aclosing(stream):
            done = [probe async for probe in stream]
        await asyncio.sleep(0)
        return done

    return asyncio.run(main())


@contextlib.contextmanager
def round_in_thread(targets: Sequence[ProbeTarget], **options: Any) -> Iterator[list[ProbeDone]]:
    """Run a round on a thread of its own for the block; the list holds its probes once the block ends."""
    done: list[ProbeDone] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            done.extend(run_round(targets, **options))
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield done
    finally:
        thread.join(WAIT)
    assert not thread.is_alive(), "the round did not end"
    if failure:
        raise failure[0]


@contextlib.contextmanager
def sdk_servers(*names: str) -> Iterator[dict[str, str]]:
    """Serve the official SDK's servers ``names`` (tests/peers/servers/sdk_servers.py); yield their base URLs once each answers."""
    process = subprocess.Popen(
        [sys.executable, str(SERVERS / "sdk_servers.py"), *names], stdout=subprocess.PIPE
    )
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], 60)
    line = process.stdout.readline().decode().strip() if ready else ""
    try:
        urls: dict[str, str] = json.loads(line)
        for url in urls.values():
            for _ in range(600):
                try:
                    httpx.get(url + "/_peer/log", timeout=1.0)
                    break
                except httpx.HTTPError:
                    select.select([], [], [], 0.05)
        yield urls
    finally:
        process.terminate()
        process.wait(timeout=10)
