"""Start a real Uptimy (``manage.py serve``: gunicorn, uvicorn workers, the embedded worker) for MCP clients.

pytest-django's live_server speaks WSGI only, and /mcp is ASGI, so the tests that connect with
the official SDK client or the conformance suite, and uptimyctl's journey against `make run`, start
``make run``'s own command on a free port,
with a SQLite database of its own in a temporary var dir, and talk to it over HTTP only: the
demo organization's API key it prints is their credential.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT = 90.0
# Settings of the test run that must not reach the server: it keeps its own database and no broker.
NOT_PASSED = ("DATABASE_URL", "REDIS_URL", "PROMETHEUS_MULTIPROC_DIR", "DJANGO_SETTINGS_MODULE")


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LiveUptimy:
    """A running ``manage.py serve``: its base URL, the demo organization's read-write key, its output."""

    base: str
    key: str
    process: subprocess.Popen[bytes]
    log: Path
    env: dict[str, str]

    @property
    def mcp_url(self) -> str:
        return f"{self.base}/mcp"

    def api(self) -> httpx.Client:
        """Return an HTTP client of the REST API with the demo organization's key."""
        return httpx.Client(base_url=self.base, headers={"Authorization": f"Bearer {self.key}"}, timeout=60)

    def create_key(self, *, read_only: bool, organization: str = "demo") -> str:
        """Return a new API key of ``organization`` (made when missing), by ``manage.py createapikey``."""
        args = [
            sys.executable,
            "manage.py",
            "createapikey",
            organization,
            "--create-org",
            *(["--read-only"] if read_only else []),
        ]
        done = subprocess.run(
            args, cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=60, check=True
        )
        found = re.search(r"upt_\S+", done.stdout)
        assert found, done.stdout + done.stderr
        return found.group(0)

    def shell(self, code: str) -> str:
        """Run Python in ``manage.py shell`` against this server's own database; return its stdout."""
        done = subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", code],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return done.stdout

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            # Ctrl-C, as a user stops make run: honcho stops every part.
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)


def start_uptimy(var_dir: Path, **extra_env: str) -> LiveUptimy:
    """Start ``manage.py serve`` on a free port and return it once /healthz answers and it printed its key."""
    port = free_port()
    env = {name: value for name, value in os.environ.items() if name not in NOT_PASSED}
    env.update(
        UPTIMY_VAR_DIR=str(var_dir),
        PORT=str(port),
        PYTHONUNBUFFERED="1",
        UPTIMY_PUBLIC_URL=f"http://127.0.0.1:{port}",
        **extra_env,
    )
    log = var_dir / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if process.poll() is not None:
            raise AssertionError(
                f"manage.py serve exited ({process.returncode}):\n{log.read_text(errors='replace')}"
            )
        key = re.search(r"^API key for demo: (upt_\S+)", log.read_text(errors="replace"), re.M)
        if key and _healthy(base):
            return LiveUptimy(base=base, key=key.group(1), process=process, log=log, env=env)
        if time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGKILL)
            raise AssertionError(
                f"manage.py serve did not answer in {START_TIMEOUT:.0f} s:\n{log.read_text()}"
            )
        time.sleep(0.2)


def _healthy(base: str) -> bool:
    try:
        return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


class BearerProxy:
    """Forward every request to ``target`` with ``Authorization: Bearer <key>`` added, on a loopback port.

    The conformance suite has no option for a credential; an assistant sends one with every request.
    """

    HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length", "host"})

    def __init__(self, target: str, key: str) -> None:
        proxy = self
        self.target, self.key = target, key
        self.client = httpx.Client(timeout=60)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                # The Host goes through as the client sent it: the server's Host check is under test too.
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() == "host" or k.lower() not in proxy.HOP_BY_HOP
                }
                headers["Authorization"] = f"Bearer {proxy.key}"
                answer = proxy.client.request(
                    self.command, proxy.target + self.path, headers=headers, content=body
                )
                self.send_response(answer.status_code)
                for name, value in answer.headers.multi_items():
                    if name.lower() not in proxy.HOP_BY_HOP and name.lower() != "content-encoding":
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            do_GET = do_POST = do_DELETE = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.client.close()
