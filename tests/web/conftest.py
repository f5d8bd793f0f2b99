"""Signed-in browsers (Django's test client) for the web app's tests, one per role."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from monitors import services
from monitors.models import Healthcheck, Membership, Organization
from monitors.services import healthcheck_create, membership_add
from probes.checks import check_kind
from tests.alerts.channel_support import receiver  # noqa: F401  (fixture: a loopback HTTP receiver)
from tests.browser_support import chromium  # noqa: F401  (fixture: Chromium through Playwright, per module)
from web.signins import SEEN_AT

PASSWORD = "a-long-test-password-42"


def signed_in(user: Any) -> Client:
    """Return a test client signed in as ``user`` the way the sign-in form leaves it: its session recorded.

    ``force_login`` alone leaves a session with no record, so the first page it opens would
    record one and count queries no later page makes.
    """
    browser = Client()
    browser.force_login(user)
    session = browser.session
    now = timezone.now()
    services.sign_in_session_record(
        user=user, session_key=session.session_key, address="127.0.0.1", user_agent="", now=now
    )
    session[SEEN_AT] = now.timestamp()
    session.save()
    return browser


@pytest.fixture
def make_member(db) -> Callable[..., Client]:
    """Return a factory of signed-in test clients: a new user with ``role`` in ``organization``."""
    counter = iter(range(1, 10_000))

    def make(
        organization: Organization, role: str = Membership.Role.OWNER, *, username: str | None = None
    ) -> Client:
        name = username or f"user{next(counter)}@example.com"
        user = get_user_model().objects.create_user(username=name, email=name, password=PASSWORD)
        membership_add(organization=organization, user=user, role=role)
        browser = signed_in(user)
        browser.user = user  # type: ignore[attr-defined]
        return browser

    return make


@pytest.fixture
def owner(make_member, org) -> Client:
    return make_member(org, Membership.Role.OWNER)


@pytest.fixture
def viewer(make_member, org) -> Client:
    return make_member(org, Membership.Role.VIEWER)


@pytest.fixture
def make_check(now) -> Callable[..., Healthcheck]:
    def make(
        organization: Organization, *, name: str = "Docs MCP", type_name: str = "mcp", **config
    ) -> Healthcheck:
        return healthcheck_create(
            organization=organization,
            name=name,
            check_type=check_kind(type_name),
            config={"uri": "https://mcp.example.com/mcp", **config},
            now=now,
        )

    return make


class _NotFound(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self._answer()

    def do_GET(self) -> None:
        self._answer()

    def _answer(self) -> None:
        self.server.authorizations.append(self.headers.get("Authorization"))  # type: ignore[attr-defined]
        body = b"<h1>Not Found</h1>"
        self.send_response(404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def no_mcp_server() -> Iterator[ThreadingHTTPServer]:
    """Serve a site that answers 404 to every path on loopback; ``authorizations`` lists what each request sent."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    server.authorizations = []  # type: ignore[attr-defined]
    server.url = f"http://127.0.0.1:{server.server_address[1]}/mcp"  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def no_mcp_url(no_mcp_server) -> str:
    """Return a loopback URL with no MCP endpoint (every path answers 404)."""
    return no_mcp_server.url
