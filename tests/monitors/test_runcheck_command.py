"""Check ``manage.py runcheck``: any active type's config from the command line, against a real server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

SECRET = "s3cr3t-header-value"


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        status = 200 if self.path == "/ok" else 503
        body = f"seen {self.headers.get('X-Key', '')}".encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def private_targets(settings) -> None:
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True


def run(*args: str) -> tuple[int, str]:
    out = StringIO()
    try:
        call_command("runcheck", *args, stdout=out)
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue()
    return 0, out.getvalue()


def test_an_up_check_exits_0_and_names_its_target(server):
    code, out = run("http", f"uri={server}/ok")

    assert code == 0
    assert out.splitlines()[0] == f"UP  {server}/ok"


def test_a_down_check_exits_1_with_its_kind_and_reason(server):
    code, out = run("1", json.dumps({"uri": f"{server}/broken", "expectedStatus": [200]}))

    assert code == 1
    assert "  http_status: HTTP 503 (expected 200)" in out


def test_the_json_outcome_never_holds_a_header_value(server):
    code, out = run("http", f"uri={server}/broken", "--header", f"X-Key: {SECRET}", "--json")

    assert code == 1
    assert json.loads(out)["status"] == "down"
    assert SECRET not in out


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["gopher", "uri=https://example.com"], "Unknown type 'gopher'"),
        (["http", "uri"], "write 'uri' as KEY=VALUE"),
        (["http", "uri=https://example.com", "uri=https://example.org"], "uri is given twice"),
        (["http", "{not json"], "not a JSON object"),
        (["http", "uri=ftp://example.com"], "uri: "),
        (["http", "uri=https://example.com", "timeout=600"], "timeout: "),
        (["http", "uri=https://example.com", "--header", "Bad Name: x"], "headers.Bad Name"),
    ],
)
def test_usage_and_config_errors_exit_2_and_name_the_field(args, names):
    with pytest.raises(CommandError) as error:
        run(*args)

    assert error.value.returncode == 2
    assert names in str(error.value)
