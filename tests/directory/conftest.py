"""Loopback stand-ins for the Official MCP Registry and GitHub serving recorded answers, and clients that never sleep."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from directory.github import GitHubClient
from directory.registry import RegistryClient
from tests.conftest import NOW
from tests.directory.support import RegistryServer, Request, Sleeps


@contextlib.contextmanager
def loopback() -> Iterator[RegistryServer]:
    """Serve a RegistryServer's answers on 127.0.0.1 for the duration of the block."""
    state = RegistryServer()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
            request = Request(
                parts.path, query, self.headers.get("User-Agent", ""), self.headers.get("Authorization", "")
            )
            answer = state.next_answer(request)
            self.send_response(answer.status)
            for name, value in answer.headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # A short poll interval: shutdown() waits for the next poll.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def registry() -> Iterator[RegistryServer]:
    with loopback() as server:
        yield server


@pytest.fixture
def github() -> Iterator[RegistryServer]:
    with loopback() as server:
        yield server


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def client(registry: RegistryServer, sleeps: Sleeps) -> RegistryClient:
    return RegistryClient(
        base_url=registry.url, user_agent="Uptimy-test (directory import)", sleep=sleeps, clock=lambda: NOW
    )


@pytest.fixture
def github_client(github: RegistryServer) -> GitHubClient:
    return GitHubClient(base_url=github.url, user_agent="Uptimy-test (licence lookup)")


@pytest.fixture
def client_anonymous():
    """A browser with no session: the directory is public."""
    from django.test import Client

    return Client()


@pytest.fixture
def sync_client(registry: RegistryServer, sleeps: Sleeps) -> RegistryClient:
    """The registry client under a name that leaves ``client`` to the tests' other clients."""
    return RegistryClient(
        base_url=registry.url, user_agent="Uptimy-test (directory import)", sleep=sleeps, clock=lambda: NOW
    )
