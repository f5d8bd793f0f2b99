"""The TLS check against real TLS servers on loopback, with certificates made in the test.

Each certificate is dated around ``Pki.now``, which is also the check's clock here, so "expires
in 3 days" is exact on any day (tests/probes/tls_support.py).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterator

import pytest
from aiosmtpd.controller import Controller
from probe_support import free_port, http_response, loopback, mcp_handler, read_request, unless_hung

from probes import certificates
from probes.checks.http import HttpConfig
from probes.checks.mcp import McpConfig
from probes.checks.tls import TlsConfig
from probes.runner import ProbeEnv, run_check
from probes.types import FailureKind, ProbeOutcome, Status
from tests.probes.tls_support import (
    DAY,
    HOST,
    Pki,
    imap_dialog,
    pop3_dialog,
    scenarios,
    starttls_server,
    tls_server,
)


@pytest.fixture(scope="module")
def pki() -> Pki:
    return Pki()


@pytest.fixture(scope="module")
def servers(pki: Pki) -> dict[str, ssl.SSLContext]:
    return scenarios(pki)


@pytest.fixture(autouse=True)
def clock(pki: Pki, dns, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(certificates, "utc_now", lambda: pki.now)
    dns[HOST] = ["127.0.0.1"]


def env(pki: Pki) -> ProbeEnv:
    return ProbeEnv(allow_private=True, ssl_context=pki.client())


def check_against(context: ssl.SSLContext, pki: Pki, **config: object) -> ProbeOutcome:
    async def main() -> ProbeOutcome:
        async with tls_server(context) as port:
            return await unless_hung(run_check(TlsConfig(**{"host": HOST, "port": port, **config}), env(pki)))

    return asyncio.run(main())


@pytest.mark.parametrize(
    ("scenario", "status", "kind", "reason"),
    [
        ("valid", Status.UP, None, ""),
        ("full_chain", Status.UP, None, ""),
        ("expiring", Status.DEGRADED, FailureKind.CERTIFICATE_EXPIRING, "Certificate expires in 3 days ("),
        ("expired", Status.DOWN, FailureKind.CERTIFICATE, "Certificate expired 3 days ago (not after "),
        (
            "not_yet_valid",
            Status.DOWN,
            FailureKind.CERTIFICATE,
            "Certificate is not valid yet: it starts in 2 days",
        ),
        ("wrong_name", Status.DOWN, FailureKind.CERTIFICATE, "Certificate is for other.test, not tls.test"),
        ("self_signed", Status.DOWN, FailureKind.CERTIFICATE, "Certificate is self-signed (CN=tls.test)"),
        (
            "incomplete_chain",
            Status.DOWN,
            FailureKind.CERTIFICATE,
            "Certificate chain does not verify: its issuer CN=Uptimy Test Intermediate CA is neither sent",
        ),
    ],
)
def test_each_certificate_gets_its_verdict(pki, servers, scenario, status, kind, reason):
    outcome = check_against(servers[scenario], pki)

    assert (outcome.status, outcome.kind) == (status, kind), outcome.reason
    assert outcome.reason.startswith(reason), outcome.reason
    assert outcome.details["certificate"]["subject"]  # read even when it did not verify
    assert outcome.timings.tcp_ms is not None


def test_the_details_describe_the_leaf(pki, servers):
    outcome = check_against(servers["expiring"], pki)

    cert = outcome.details["certificate"]
    assert cert["subject"] == "CN=tls.test"
    assert cert["common_name"] == "tls.test"
    assert cert["names"] == ["tls.test"]
    assert cert["issuer"] == "CN=Uptimy Test Root CA"
    assert cert["days_left"] == 3
    assert (cert["chain_valid"], cert["name_matches"]) == (True, True)
    assert int(cert["serial"], 16) > 0
    assert len(cert["sha256"].split(":")) == 32
    assert (
        outcome.reason
        == f"Certificate expires in 3 days ({(pki.now + certificates.timedelta(days=3)):%Y-%m-%d %H:%M} UTC)"
    )


def test_a_failed_chain_and_a_wrong_name_say_so_in_the_details(pki, servers):
    chain = check_against(servers["incomplete_chain"], pki).details["certificate"]
    name = check_against(servers["wrong_name"], pki).details["certificate"]

    assert (chain["chain_valid"], chain["name_matches"]) == (False, True)
    assert name["name_matches"] is False


def test_warn_days_decide_when_expiring_degrades(pki, servers):
    assert check_against(servers["expiring"], pki, warn_days=3).status is Status.DEGRADED
    assert check_against(servers["expiring"], pki, warn_days=2).status is Status.UP
    assert check_against(servers["valid"], pki, warn_days=100).status is Status.DEGRADED
    assert check_against(servers["expiring"], pki, warn_days=0).status is Status.UP


def test_server_name_is_sent_and_matched_instead_of_the_host(pki, servers):
    by_address = check_against(servers["valid"], pki, host="127.0.0.1")
    named = check_against(servers["valid"], pki, host="127.0.0.1", server_name=HOST)

    assert by_address.reason == "Certificate is for tls.test, not 127.0.0.1"
    assert named.status is Status.UP


def test_a_server_that_speaks_no_tls_is_tls():
    async def handler(reader, writer):
        writer.write(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        await writer.drain()
        writer.close()

    async def main() -> ProbeOutcome:
        async with loopback(handler) as port:
            return await unless_hung(
                run_check(TlsConfig(host=HOST, port=port, timeout=5), ProbeEnv(allow_private=True))
            )

    outcome = asyncio.run(main())
    assert (outcome.status, outcome.kind) == (Status.DOWN, FailureKind.TLS)
    assert outcome.reason.startswith("TLS handshake failed")


def test_a_refused_port_is_connect_and_loopback_is_guarded():
    port = free_port()
    refused = asyncio.run(run_check(TlsConfig(host=HOST, port=port), ProbeEnv(allow_private=True)))
    guarded = asyncio.run(run_check(TlsConfig(host=HOST, port=port), ProbeEnv()))

    assert refused.kind is FailureKind.CONNECT
    assert guarded.kind is FailureKind.BLOCKED_ADDRESS


# --- STARTTLS ---------------------------------------------------------------------------------


class _Nothing:
    """An aiosmtpd handler that accepts no mail: the check never sends any."""


@pytest.fixture
def smtp(servers) -> Iterator[Controller]:
    controller = Controller(
        _Nothing(), hostname="127.0.0.1", port=free_port(), tls_context=servers["expiring"]
    )
    controller.start()
    yield controller
    controller.stop()


def test_smtp_starttls_reads_the_certificate(pki, smtp):
    outcome = asyncio.run(
        run_check(TlsConfig(host=HOST, port=smtp.port, starttls="smtp", timeout=5), env(pki))
    )

    assert outcome.status is Status.DEGRADED
    assert outcome.reason.startswith("Certificate expires in 3 days")


def test_smtp_without_starttls_is_protocol(pki):
    controller = Controller(_Nothing(), hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        config = TlsConfig(host=HOST, port=controller.port, starttls="smtp", timeout=5)
        outcome = asyncio.run(run_check(config, env(pki)))
    finally:
        controller.stop()

    assert (outcome.kind, outcome.reason) == (FailureKind.PROTOCOL, "The SMTP server does not offer STARTTLS")


@pytest.mark.parametrize(("protocol", "dialog"), [("imap", imap_dialog), ("pop3", pop3_dialog)])
def test_imap_and_pop3_starttls(pki, servers, protocol, dialog):
    async def main() -> ProbeOutcome:
        async with starttls_server(servers["expired"], dialog) as port:
            config = TlsConfig(host=HOST, port=port, starttls=protocol, timeout=5)
            return await unless_hung(run_check(config, env(pki)))

    outcome = asyncio.run(main())
    assert outcome.kind is FailureKind.CERTIFICATE, outcome.reason
    assert outcome.reason.startswith("Certificate expired 3 days ago")


async def _injecting(reader, writer) -> bool:
    writer.write(b"+OK ready\r\n")
    await reader.readline()
    writer.write(b"+OK go ahead\r\n+OK injected\r\n")
    return True


async def _endless(reader, writer) -> bool:
    writer.write(b"220-" + b"x" * 10_000)
    await writer.drain()
    await reader.read()
    return False


async def _many_lines(reader, writer) -> bool:
    writer.write(b"* OK hello\r\n")
    await reader.readline()
    writer.write(b"* chatter\r\n" * 500)
    await writer.drain()
    await reader.read()
    return False


@pytest.mark.parametrize(
    ("protocol", "dialog", "words"),
    [
        (
            "pop3",
            _injecting,
            "POP3 before STARTTLS: the server sent data after its go-ahead (a STARTTLS injection)",
        ),
        ("smtp", _endless, "SMTP before STARTTLS: a line longer than 2048 bytes"),
        ("imap", _many_lines, "IMAP before STARTTLS: more than 100 lines"),
        ("smtp", pop3_dialog, "SMTP before STARTTLS: expected an SMTP reply, got '+OK POP3 ready'"),
    ],
)
def test_hostile_dialogs_are_capped_protocol_failures(pki, servers, protocol, dialog, words):
    async def main() -> ProbeOutcome:
        async with starttls_server(servers["valid"], dialog) as port:
            config = TlsConfig(host=HOST, port=port, starttls=protocol, timeout=5)
            return await unless_hung(run_check(config, env(pki)))

    outcome = asyncio.run(main())
    assert (outcome.kind, outcome.reason) == (FailureKind.PROTOCOL, words)


# --- HTTPS checks record the certificate -------------------------------------------------------------


async def _ok(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await read_request(reader)
    writer.write(http_response(200, b"ok", {"content-type": "text/plain"}))
    await writer.drain()
    writer.close()


def https_check(context: ssl.SSLContext, pki: Pki, kind: str = "http", **config: object) -> ProbeOutcome:
    """Return the outcome of an HTTP (or MCP) check of a loopback HTTPS server serving ``context``."""

    async def main() -> ProbeOutcome:
        handler = _ok if kind == "http" else mcp_handler
        async with loopback(handler, tls=context) as port:
            made = (HttpConfig if kind == "http" else McpConfig)(uri=f"https://{HOST}:{port}/mcp", **config)
            return await unless_hung(run_check(made, env(pki)))

    return asyncio.run(main())


def test_an_https_check_records_its_leaf_certificate(pki, servers):
    outcome = https_check(servers["valid"], pki)

    assert outcome.status is Status.UP
    cert = outcome.details["certificate"]
    assert (cert["subject"], cert["days_left"], cert["chain_valid"], cert["name_matches"]) == (
        "CN=tls.test",
        90,
        True,
        True,
    )


@pytest.mark.parametrize("kind", ["http", "mcp"])
@pytest.mark.parametrize(
    ("scenario", "config", "status", "kind_seen", "reason"),
    [
        ("valid", {}, Status.UP, None, ""),
        (
            "expiring",
            {},
            Status.DEGRADED,
            FailureKind.CERTIFICATE_EXPIRING,
            "Certificate expires in 3 days (",
        ),
        ("expiring", {"certificate_warn_days": 2}, Status.UP, None, ""),
        ("expiring", {"certificate_warn_days": 0}, Status.UP, None, ""),
        ("valid", {"certificate_warn_days": 90}, Status.DEGRADED, None, "Certificate expires in 90 days ("),
        ("expired", {}, Status.DOWN, FailureKind.TLS, "TLS handshake failed: certificate has expired"),
        ("not_yet_valid", {}, Status.DOWN, FailureKind.TLS, "TLS handshake failed: certificate is not yet"),
        ("wrong_name", {}, Status.DOWN, FailureKind.TLS, "TLS handshake failed: Hostname mismatch"),
        ("self_signed", {}, Status.DOWN, FailureKind.TLS, "TLS handshake failed: self-signed certificate"),
        ("incomplete_chain", {}, Status.DOWN, FailureKind.TLS, "TLS handshake failed: unable to get local"),
    ],
)
def test_an_https_check_warns_before_its_certificate_expires(
    pki, servers, kind, scenario, config, status, kind_seen, reason
):
    outcome = https_check(servers[scenario], pki, kind, **config)

    assert outcome.status is status, outcome
    if kind_seen is not None:
        assert outcome.kind is kind_seen
    assert outcome.reason.startswith(reason), outcome.reason


def test_the_warning_names_the_day_it_expires(pki, servers):
    outcome = https_check(servers["expiring"], pki)

    expires = (pki.now + 3 * DAY).strftime("%Y-%m-%d %H:%M UTC")
    assert outcome.reason == f"Certificate expires in 3 days ({expires})"
    assert outcome.http_status == 200
    assert outcome.details["certificate"]["days_left"] == 3


def test_a_down_https_check_stays_down_with_an_expiring_certificate(pki, servers):
    async def failing(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(http_response(503, b"busy"))
        await writer.drain()
        writer.close()

    async def main() -> ProbeOutcome:
        async with loopback(failing, tls=servers["expiring"]) as port:
            return await unless_hung(run_check(HttpConfig(uri=f"https://{HOST}:{port}/"), env(pki)))

    outcome = asyncio.run(main())
    assert (outcome.status, outcome.kind) == (Status.DOWN, FailureKind.HTTP_STATUS)
    assert outcome.details["certificate"]["days_left"] == 3


def test_a_plain_http_check_records_no_certificate():
    async def handler(reader, writer):
        await read_request(reader)
        writer.write(http_response(200, b"ok"))
        await writer.drain()
        writer.close()

    async def main() -> ProbeOutcome:
        async with loopback(handler) as port:
            return await unless_hung(
                run_check(HttpConfig(uri=f"http://{HOST}:{port}/"), ProbeEnv(allow_private=True))
            )

    assert "certificate" not in asyncio.run(main()).details
