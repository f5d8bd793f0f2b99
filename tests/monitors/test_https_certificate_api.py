"""HTTPS checks' certificates through the API and the worker, against a real HTTPS server on loopback.

The server's certificate is made in the test (tests/probes/tls_support.py) and can be swapped
between runs; the check's clock is the certificates' own instant, so the days left are exact.
"""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from monitors.models import CertificateChange
from probes import certificates, runner
from tests.probes.tls_support import DAY, Pki, server_context

URL = "/api/v1/healthchecks/"
ADDRESS = "127.0.0.1"


@dataclass
class HttpsServer:
    """Answer 200 over TLS on loopback with whatever certificate ``context`` holds now."""

    pki: Pki
    context: ssl.SSLContext
    port: int = 0

    def serve(self, listener: socket.socket, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                sock, _ = listener.accept()
            except OSError:
                return
            try:
                with self.context.wrap_socket(sock, server_side=True) as tls:
                    request = b""
                    while b"\r\n\r\n" not in request:
                        chunk = tls.recv(4096)
                        if not chunk:
                            break
                        request += chunk
                    tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            except (OSError, ssl.SSLError):
                pass


def _leaf(pki: Pki, days: int) -> ssl.SSLContext:
    return server_context(pki.leaf(names=(ADDRESS,), not_after=days * DAY))


@pytest.fixture
def https(settings, monkeypatch) -> Iterator[HttpsServer]:
    pki = Pki()
    settings.REDIS_URL = ""  # the embedded mode: run-now runs the batch in this process
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    monkeypatch.setattr(runner, "default_ssl_context", pki.client)
    monkeypatch.setattr(certificates, "utc_now", lambda: pki.now)
    server = HttpsServer(pki, _leaf(pki, 3))
    listener = socket.create_server((ADDRESS, 0))
    server.port = listener.getsockname()[1]
    stop = threading.Event()
    thread = threading.Thread(target=server.serve, args=(listener, stop), daemon=True)
    thread.start()
    yield server
    stop.set()
    listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept() (close alone does not)
    listener.close()
    thread.join(5)


def _create(client, server: HttpsServer, type_: str = "http", **config: object) -> str:
    body = {"uri": f"https://{ADDRESS}:{server.port}/", "timeout": 5, **config}
    response = client.post(URL, {"name": "site", "type": type_, "config": body}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def test_an_https_check_whose_certificate_expires_in_3_days_is_degraded_with_the_days(client, https):
    check_id = _create(client, https)

    results = client.post(f"{URL}{check_id}/run/").json()

    expires = (https.pki.now + 3 * DAY).strftime("%Y-%m-%d %H:%M UTC")
    assert results
    assert {result["status"] for result in results} == {"degraded"}
    assert {result["reason"] for result in results} == {f"Certificate expires in 3 days ({expires})"}
    assert {result["kind"] for result in results} == {"certificate_expiring"}
    healthcheck = client.get(f"{URL}{check_id}/").json()
    assert healthcheck["status"] == "degraded", healthcheck


def test_certificate_warn_days_0_keeps_it_up(client, https):
    check_id = _create(client, https, certificateWarnDays=0)

    results = client.post(f"{URL}{check_id}/run/").json()

    assert {result["status"] for result in results} == {"up"}
    assert client.get(f"{URL}{check_id}/").json()["config"]["certificateWarnDays"] == 0


@pytest.mark.parametrize("type_", ["http", "mcp"])
@pytest.mark.parametrize("days", [-1, 3651, 1.5, "14", True])
def test_a_bad_certificate_warn_days_is_a_400_naming_it(client, type_, days):
    config = {"uri": "https://example.com/", "certificateWarnDays": days}
    response = client.post(URL, {"name": "site", "type": type_, "config": config}, format="json")

    assert response.status_code == 400
    assert "config.certificateWarnDays" in str(response.json())


def test_a_config_without_the_option_keeps_the_shape_it_had(client):
    config = {"uri": "https://example.com/"}
    body = client.post(URL, {"name": "site", "type": "http", "config": config}, format="json").json()

    assert "certificateWarnDays" not in body["config"]


def test_a_swapped_certificate_records_one_change_per_region(client, https):
    check_id = _create(client, https)
    first = client.post(f"{URL}{check_id}/run/").json()
    client.post(f"{URL}{check_id}/run/")  # the same certificate again: no change
    old = first[0]["details"]["certificate"]
    https.context = _leaf(https.pki, 60)

    second = client.post(f"{URL}{check_id}/run/").json()

    new = second[0]["details"]["certificate"]
    assert new["serial"] != old["serial"]
    assert {result["status"] for result in second} == {"up"}
    page = client.get(f"{URL}{check_id}/certificate-changes/").json()
    changes = page["results"]
    assert len(changes) == len(second) == CertificateChange.objects.count()
    change = changes[0]
    assert (change["previous_serial"], change["serial"]) == (old["serial"], new["serial"])
    assert (change["previous_sha256"], change["sha256"]) == (old["sha256"], new["sha256"])
    assert change["issuer"] == change["previous_issuer"] == "CN=Uptimy Test Root CA"
    assert change["not_after"].startswith((https.pki.now + 60 * DAY).date().isoformat())
