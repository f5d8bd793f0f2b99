"""Check ``manage.py refreshrdap`` and how workers pick the refreshed bootstrap up, against a real HTTP server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from monitors import rdap_bootstrap
from probes import rdap

FRESH = {
    "version": "1.0",
    "publication": "2026-12-01T18:00:01Z",
    "description": "RDAP bootstrap file for Domain Name System registrations",
    "services": [[["test", "example"], ["https://rdap.registry.example/"]]],
}


class Iana(BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:
        status = 200 if self.path == "/rdap/dns.json" else 404
        self.send_response(status)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def iana() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Iana)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    Iana.body = json.dumps(FRESH).encode()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def bootstrap_file(settings, tmp_path) -> Iterator[None]:
    settings.UPTIMY_RDAP_BOOTSTRAP_FILE = tmp_path / "rdap_dns.json"
    yield
    rdap.use_bootstrap(None)
    rdap_bootstrap._loaded = None


def refresh(url: str) -> str:
    out = StringIO()
    call_command("refreshrdap", "--url", url, stdout=out)
    return out.getvalue()


def test_a_refresh_writes_the_file_and_the_next_batch_reads_it(iana, settings):
    said = refresh(f"{iana}/rdap/dns.json")

    assert (
        said
        == f"RDAP bootstrap of 2026-12-01T18:00:01Z: 2 TLDs, written to {settings.UPTIMY_RDAP_BOOTSTRAP_FILE}\n"
    )
    rdap_bootstrap.use_refreshed()
    assert rdap.bootstrap().bases_for("shop.test") == ("https://rdap.registry.example/",)


@pytest.mark.parametrize(
    ("path", "body", "problem"),
    [
        ("/missing.json", b"", "answered HTTP 404"),
        ("/rdap/dns.json", b"<html>maintenance</html>", "is not an RDAP bootstrap: not JSON"),
        ("/rdap/dns.json", b'{"services": []}', "is not an RDAP bootstrap: no service"),
    ],
)
def test_a_failed_refresh_says_why_and_keeps_the_file_in_use(iana, settings, path, body, problem):
    refresh(f"{iana}/rdap/dns.json")
    Iana.body = body

    with pytest.raises(CommandError, match=problem) as error:
        refresh(f"{iana}{path}")

    assert "the bootstrap in use is unchanged" in str(error.value)
    assert json.loads(settings.UPTIMY_RDAP_BOOTSTRAP_FILE.read_bytes()) == FRESH


def test_a_file_that_no_longer_parses_leaves_the_engine_s_bootstrap_as_it_was(settings, caplog):
    settings.UPTIMY_RDAP_BOOTSTRAP_FILE.write_text("{broken")

    rdap_bootstrap.use_refreshed()

    assert rdap.bootstrap().bases_for("example.com") == ("https://rdap.verisign.com/com/v1/",)
    assert "is unusable, keeping the one in use" in caplog.text
