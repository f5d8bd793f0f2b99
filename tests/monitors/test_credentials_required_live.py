"""A keyless check of a server that wants a plain key, as its user meets it: the REST API, the web page, mcpcheck.

The server is real (an HTTP server on loopback): 401 to every POST of /mcp with a challenge that
names no ``resource_metadata``, 404 everywhere else, so no RFC 9728 or RFC 8414 document exists.
Uptimy runs as `make run` does (``manage.py serve``, loopback targets allowed) and is reached over
HTTP only; mcpcheck runs as a subprocess.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urljoin

import httpx
import pytest

from tests.live_uptimy import ROOT, LiveUptimy
from tests.oauth_person import form_fields

SAYS = "The server asks for credentials (HTTP 401) and publishes no OAuth sign-in"
ADVICE = "If it uses a key, add it as a request header (the monitor's Advanced settings; config.headers in the API)"


class KeyOnlyServer:
    """Answer 401 to /mcp (``WWW-Authenticate: Bearer realm="api"``) and 404 to every other path."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        seen = self.paths

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

            def _answer(self, status: int, headers: dict[str, str]) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                seen.append(self.path)
                body = b'{"error": "missing api key"}' if status == 401 else b"Not Found"
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                if self.path == "/mcp":
                    self._answer(
                        401, {"www-authenticate": 'Bearer realm="api"', "content-type": "application/json"}
                    )
                else:
                    self._answer(404, {"content-type": "text/plain"})

            def do_GET(self) -> None:
                self._answer(404, {"content-type": "text/plain"})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/mcp"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope="module")
def key_only() -> Iterator[KeyOnlyServer]:
    server = KeyOnlyServer()
    yield server
    server.close()


def test_a_one_off_check_says_the_server_wants_credentials_not_a_sign_in(loopback_uptimy, key_only):
    with loopback_uptimy.api() as client:
        answer = client.post("/api/v1/checks/run/", json={"type": "mcp", "config": {"uri": key_only.url}})

    body = answer.json()
    assert answer.status_code == 200, body
    assert (body["status"], body["kind"], body["access"], body["http_status"]) == (
        "down",
        "credentials_required",
        "",  # the API's "no access": the check found no way in
        401,
    )
    assert body["reason"].startswith(SAYS)
    assert body["reason"].endswith(ADVICE)
    assert body["signin_server"] in (None, "")
    assert "/.well-known/oauth-protected-resource/mcp" in key_only.paths


def test_a_monitor_run_now_shows_the_same_on_the_api_and_its_web_page(loopback_uptimy, key_only):
    with loopback_uptimy.api() as client:
        created = client.post(
            "/api/v1/healthchecks/", json={"name": "key only", "type": "mcp", "config": {"uri": key_only.url}}
        )
        assert created.status_code == 201, created.text
        public_id = created.json()["id"]
        results = client.post(f"/api/v1/healthchecks/{public_id}/run/")
        assert results.status_code == 200, results.text

    assert {(r["kind"], r["access"]) for r in results.json()} == {("credentials_required", "")}
    assert all(r["reason"].startswith(SAYS) for r in results.json())

    page = signed_in(loopback_uptimy).get(f"/app/healthchecks/{public_id}/").text
    access = re.search(r"<dt>Access</dt><dd>(.*?)</dd>", page)
    assert access is not None, page[:2000]
    assert access.group(1) == "Credentials required (no OAuth sign-in published)"
    assert "OAuth sign-in</dd>" not in page
    assert SAYS in page
    assert "(credentials_required)" in page


def test_mcpcheck_says_so_and_how_to_give_it_the_key(loopback_uptimy, key_only):
    done = subprocess.run(
        [sys.executable, "manage.py", "mcpcheck", key_only.url],
        cwd=ROOT,
        env=loopback_uptimy.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"DOWN  {key_only.url}")
    assert "oauth" not in lines[0]
    assert lines[1].startswith(f"  credentials_required: {SAYS}")
    assert (
        lines[2]
        == '  hint: give mcpcheck the key with --header "Authorization: Bearer …" (or the header the server names)'
    )


def test_mcpcheck_json_has_no_access_for_it(loopback_uptimy, key_only):
    done = subprocess.run(
        [sys.executable, "manage.py", "mcpcheck", key_only.url, "--json"],
        cwd=ROOT,
        env=loopback_uptimy.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    result = json.loads(done.stdout)
    assert (result["status"], result["kind"], result.get("access")) == ("down", "credentials_required", None)


def signed_in(live: LiveUptimy) -> httpx.Client:
    """Return a browser-like client signed in to the web app as the demo owner `make run` printed."""
    found = re.search(r"^Admin login: (\S+) / (\S+)", live.output(), re.M)
    assert found, live.output()
    browser = httpx.Client(base_url=live.base, follow_redirects=False, timeout=60)
    login_url = urljoin(live.base, "/app/login/")
    fields = form_fields(browser.get(login_url).text)
    fields.update(username=found.group(1), password=found.group(2))
    answer = browser.post(login_url, data=fields)
    assert answer.status_code == 302, answer.text[:500]
    return browser
