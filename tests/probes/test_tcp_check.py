"""The TCP port check (type 3) against real loopback servers: accept, refuse, hang, banners, echo, TLS.

Servers are asyncio servers started in each test; the hang runs on a ControlledClockLoop
frozen once the check can only wait, so it ends exactly at its deadline without sleeping.
"""

from __future__ import annotations

import asyncio

import pytest
from probe_support import (
    ControlledClockLoop,
    free_port,
    freeze_clock,
    loopback,
    make_certs,
    unless_hung,
    until_closed,
)

from probes.checks import check_kind
from probes.checks.tcp import (
    MAX_REPLY_BYTES,
    SHOWN_REPLY,
    TCP,
    TcpConfig,
    parse_tcp_config,
    tcp_config_to_api,
)
from probes.config import ConfigError
from probes.regex import compile_regex
from probes.runner import ProbeEnv, run_check
from probes.types import FailureKind, Status

OPEN = ProbeEnv(allow_private=True)
# The server's certificate names localhost; the check connects to 127.0.0.1 and checks that name.
TLS_TO_LOCALHOST = {"tls": True, "serverName": "localhost"}


def tcp(port: int, **raw: object) -> TcpConfig:
    return parse_tcp_config({"host": "127.0.0.1", "port": port, "timeout": 5, **raw})


def check(handler, *, env=OPEN, server_tls=None, **raw):
    async def main():
        async with loopback(handler, tls=server_tls) as port:
            return await unless_hung(run_check(tcp(port, **raw), env)), port

    return asyncio.run(main())


async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await until_closed(reader)
    writer.close()


def banner(text: bytes):
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(text)
        await writer.drain()
        await until_closed(reader)
        writer.close()

    return handler


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    line = await reader.readline()
    writer.write(b"+" + line.upper())
    await writer.drain()
    await until_closed(reader)
    writer.close()


# --- the registry ----------------------------------------------------------------------------


def test_it_is_type_3_named_tcp():
    assert check_kind(3) is TCP
    assert check_kind("tcp") is TCP
    assert TCP.active


# --- runs ------------------------------------------------------------------------------------


def test_an_accepted_connection_is_up_with_its_connect_time():
    outcome, port = check(silent)

    assert outcome.status is Status.UP
    assert outcome.timings.tcp_ms is not None
    assert outcome.timings.tls_ms is None
    assert outcome.timings.total_ms >= outcome.timings.tcp_ms
    assert outcome.details == {"address": f"127.0.0.1:{port}"}


def test_a_closed_port_is_connect_in_the_connections_words():
    port = free_port()

    outcome = asyncio.run(run_check(tcp(port), OPEN))

    assert (outcome.status, outcome.kind) == (Status.DOWN, FailureKind.CONNECT)
    assert outcome.reason == f"Connection to 127.0.0.1 port {port} failed: connection refused"


def check_on_clock(handler, **raw):
    """Run a check on a ControlledClockLoop the handler freezes; return the outcome and the seconds it waited."""

    async def main():
        async with loopback(handler) as port:
            loop = asyncio.get_running_loop()
            started = loop.time()
            outcome = await unless_hung(run_check(tcp(port, **raw), OPEN))
            return outcome, loop.time() - started

    with asyncio.Runner(loop_factory=ControlledClockLoop) as runner:
        return runner.run(main())


def test_a_server_that_never_replies_times_out_at_the_checks_deadline_naming_the_reply():
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        freeze_clock()  # the check can only wait for a reply now: the clock jumps to its deadline
        await until_closed(reader)
        writer.close()

    outcome, waited = check_on_clock(handler, expect="^220 ", timeout=5)

    assert (outcome.status, outcome.kind) == (Status.DOWN, FailureKind.TIMEOUT)
    assert outcome.reason == "No reply within 5 s (expected /^220 /)"
    assert 5 <= waited < 5.5
    assert outcome.timings.tcp_ms is not None


def test_a_banner_that_does_not_match_while_the_server_holds_on_is_tcp_reply_at_the_deadline():
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"SSH-2.0-OpenSSH_9.6\r\n")
        await writer.drain()
        freeze_clock()  # on loopback the banner is in the client's socket already
        await until_closed(reader)
        writer.close()

    outcome, waited = check_on_clock(handler, expect="^220 ", timeout=3)

    assert (outcome.status, outcome.kind) == (Status.DOWN, FailureKind.TCP_REPLY)
    assert outcome.reason == 'Reply did not match /^220 / within 3 s: got "SSH-2.0-OpenSSH_9.6"'
    assert outcome.details["reply"] == "SSH-2.0-OpenSSH_9.6"
    assert 3 <= waited < 3.5


def test_a_banner_that_matches_is_up_and_kept():
    outcome, port = check(banner(b"SSH-2.0-OpenSSH_9.6\r\n"), expect=r"^SSH-2\.0-")

    assert outcome.status is Status.UP
    assert outcome.details == {"address": f"127.0.0.1:{port}", "reply": "SSH-2.0-OpenSSH_9.6"}
    assert outcome.timings.ttfb_ms is not None


def test_a_reply_that_ends_without_matching_is_tcp_reply():
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"SSH-2.0-OpenSSH_9.6\r\n")
        await writer.drain()
        writer.close()

    outcome, port = check(handler, expect="^220 ")

    assert (outcome.status, outcome.kind) == (Status.DOWN, FailureKind.TCP_REPLY)
    assert outcome.reason == 'Reply did not match /^220 /: got "SSH-2.0-OpenSSH_9.6"'
    assert outcome.details == {"address": f"127.0.0.1:{port}", "reply": "SSH-2.0-OpenSSH_9.6"}


def test_a_server_that_closes_without_a_word_is_tcp_reply():
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    outcome, port = check(handler, expect="^220 ")

    assert outcome.kind is FailureKind.TCP_REPLY
    assert outcome.reason == f"127.0.0.1:{port} closed the connection without a reply (expected /^220 /)"


def test_a_line_sent_gets_its_reply_matched():
    outcome, _ = check(echo, send="ping", expect=r"^\+PING\n")

    assert outcome.status is Status.UP
    assert outcome.details["reply"] == "+PING"


def test_a_line_sent_can_end_with_crlf():
    seen: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await reader.readline())
        writer.write(b"ok\n")
        await writer.drain()
        writer.close()

    outcome, _ = check(handler, send="PING\n", lineEnding="crlf", expect="ok")

    assert outcome.status is Status.UP
    assert seen == [b"PING\r\n"]


def test_a_line_sent_without_expect_is_up_once_sent():
    seen: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await reader.read())
        writer.close()

    async def main():
        async with loopback(handler) as port:
            outcome = await run_check(tcp(port, send="QUIT"), OPEN)
            while not seen:  # the server's read ends when the check closes
                await asyncio.sleep(0)
            return outcome

    outcome = asyncio.run(main())
    assert outcome.status is Status.UP
    assert seen == [b"QUIT\n"]


def test_tls_with_a_trusted_certificate_times_the_handshake(tmp_path):
    certs = make_certs(tmp_path, host="localhost")
    env = ProbeEnv(allow_private=True, ssl_context=certs.client)

    outcome, _ = check(echo, env=env, server_tls=certs.server, send="hi", expect=r"^\+HI", **TLS_TO_LOCALHOST)

    assert outcome.status is Status.UP, outcome.reason
    assert outcome.timings.tls_ms is not None
    assert outcome.timings.tcp_ms is not None


def test_tls_with_a_certificate_for_another_name_is_tls(tmp_path):
    certs = make_certs(tmp_path, host="other.example")
    env = ProbeEnv(allow_private=True, ssl_context=certs.client)

    outcome, _ = check(silent, env=env, server_tls=certs.server, **TLS_TO_LOCALHOST)

    assert (outcome.status, outcome.kind) == (Status.DOWN, FailureKind.TLS)
    assert outcome.reason.startswith("TLS handshake failed: ")
    assert "localhost" in outcome.reason


def test_tls_to_a_server_that_speaks_plain_text_is_tls(tmp_path):
    certs = make_certs(tmp_path)
    env = ProbeEnv(allow_private=True, ssl_context=certs.client)

    outcome, _ = check(banner(b"220 plain smtp\r\n" * 50), env=env, **TLS_TO_LOCALHOST)

    assert outcome.kind is FailureKind.TLS


def test_a_private_address_is_blocked_before_connecting():
    connections: list[int] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        writer.close()

    outcome, _ = check(handler, env=ProbeEnv())

    assert outcome.kind is FailureKind.BLOCKED_ADDRESS
    assert outcome.reason == "127.0.0.1 is a loopback address; Uptimy only checks public addresses"
    assert connections == []
    assert outcome.details == {}


def test_a_hostile_reply_is_capped_and_cleaned():
    huge = b"\x00\x1b[31m" + b"A" * (MAX_REPLY_BYTES * 8) + b"\xff\xfe"

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            writer.write(huge)
            await writer.drain()
        except ConnectionError:
            pass
        await until_closed(reader)
        writer.close()

    outcome, _ = check(handler, expect="^SSH-")

    assert (outcome.status, outcome.kind) == (Status.DOWN, FailureKind.TCP_REPLY)
    assert outcome.reason.startswith('Reply did not match /^SSH-/ in its first 4 KiB or 50 lines: got "')
    assert "\x00" not in outcome.reason
    assert "\x1b" not in outcome.reason
    assert len(outcome.reason) < 300
    reply = outcome.details["reply"]
    assert len(reply) <= SHOWN_REPLY
    assert "\x00" not in reply


def test_a_catastrophic_expect_against_a_long_reply_is_tcp_reply():
    # (x+x+)+y backtracks exponentially in Python's re over 4 KiB of x: the check would never end.
    outcome, _ = check(banner(b"x" * (MAX_REPLY_BYTES * 2)), expect="(x+x+)+y")

    assert (outcome.status, outcome.kind) == (Status.DOWN, FailureKind.TCP_REPLY)
    assert outcome.reason.startswith("Reply did not match /(x+x+)+y/ in its first 4 KiB")


def test_many_short_lines_stop_at_the_line_cap():
    outcome, _ = check(banner(b"x\n" * 1000), expect="never")

    assert outcome.kind is FailureKind.TCP_REPLY
    assert "50 lines" in outcome.reason


def test_invalid_utf8_is_read_with_replacement():
    outcome, _ = check(banner(b"caf\xe9 \xe2\x82\xac ok\n"), expect="ok")

    assert outcome.status is Status.UP
    assert outcome.details["reply"] == "caf\ufffd \u20ac ok"


# --- config ----------------------------------------------------------------------------------


def test_a_config_round_trips_through_its_api_shape():
    config = parse_tcp_config(
        {
            "host": "Mail.Example.com",
            "port": 465,
            "tls": True,
            "serverName": "smtp.example.com",
            "expect": "^220",
        }
    )

    shape = tcp_config_to_api(config)

    assert shape == {
        "host": "mail.example.com",
        "port": 465,
        "tls": True,
        "serverName": "smtp.example.com",
        "send": None,
        "lineEnding": "lf",
        "expect": "^220",
        "timeout": 10.0,
    }
    assert parse_tcp_config(shape) == config
    assert config.target == "mail.example.com:465"
    assert config.host == "mail.example.com"
    assert config.headers == ()


def test_an_ipv6_host_is_shown_in_brackets():
    assert parse_tcp_config({"host": "[2001:DB8::1]", "port": 22}).target == "[2001:db8::1]:22"
    assert parse_tcp_config({"host": "2001:db8::1", "port": 22}).host == "2001:db8::1"


@pytest.mark.parametrize(
    ("raw", "field", "words"),
    [
        ({"port": 22}, "host", "required"),
        ({"host": "", "port": 22}, "host", "host name or an IP address"),
        ({"host": "http://example.com", "port": 22}, "host", "without a scheme"),
        ({"host": "example.com:22", "port": 22}, "host", "without a port"),
        ({"host": "0177.1", "port": 22}, "host", "four decimal numbers"),
        ({"host": "bad_label!.com", "port": 22}, "host", "characters DNS names can't hold"),
        ({"host": "[fe80::1%eth0]", "port": 22}, "host", "IPv6 zone"),
        ({"host": "a..b", "port": 22}, "host", "empty label"),
        ({"host": "example.com"}, "port", "required"),
        ({"host": "example.com", "port": 0}, "port", "1 to 65535"),
        ({"host": "example.com", "port": 70000}, "port", "1 to 65535"),
        ({"host": "example.com", "port": "22"}, "port", "whole number"),
        ({"host": "example.com", "port": True}, "port", "whole number"),
        ({"host": "example.com", "port": 22, "tls": "yes"}, "tls", "true or false"),
        ({"host": "example.com", "port": 22, "serverName": "x.example"}, "serverName", "Only a TLS check"),
        ({"host": "example.com", "port": 22, "tls": True, "serverName": "a b"}, "serverName", "spaces"),
        ({"host": "example.com", "port": 22, "send": "a\nb"}, "send", "one line"),
        ({"host": "example.com", "port": 22, "send": "a\x00"}, "send", "control characters"),
        ({"host": "example.com", "port": 22, "send": "x" * 1025}, "send", "1 KiB"),
        ({"host": "example.com", "port": 22, "send": 5}, "send", "line of text"),
        ({"host": "example.com", "port": 22, "lineEnding": "cr"}, "lineEnding", "lf, crlf, none"),
        (
            {"host": "example.com", "port": 22, "expect": "(unclosed"},
            "expect",
            "Not a valid regular expression",
        ),
        ({"host": "example.com", "port": 22, "expect": "a" * 513}, "expect", "512"),
        ({"host": "example.com", "port": 22, "expect": r"^(\w)\1"}, "expect", "no backreferences (\\1)"),
        ({"host": "example.com", "port": 22, "expect": "^(?=220)"}, "expect", "lookahead or lookbehind"),
        ({"host": "example.com", "port": 22, "timeout": 0}, "timeout", "1 to 60"),
        ({"host": "example.com", "port": 22, "headers": {"A": "b"}}, "headers", "Unknown field"),
        ({"host": "example.com", "port": 22, "headers": {}}, "headers", "Unknown field"),
        ({"host": "example.com", "port": 22, "uri": "http://x/"}, "uri", "Unknown field"),
    ],
)
def test_bad_config_names_the_field(raw, field, words):
    with pytest.raises(ConfigError) as caught:
        parse_tcp_config(raw)

    assert field in caught.value.errors, caught.value.errors
    assert words in caught.value.errors[field]


def test_a_non_object_config_is_refused():
    with pytest.raises(ConfigError) as caught:
        parse_tcp_config([])
    assert "config" in caught.value.errors


def test_defaults_and_the_line_sent():
    config = parse_tcp_config({"host": "example.com", "port": 6379, "send": "PING\r\n"})

    assert (config.tls, config.server_name, config.expect, config.timeout) == (False, None, None, 10.0)
    assert config.send == "PING"
    assert config.line == b"PING\n"
    assert (
        parse_tcp_config({"host": "example.com", "port": 1, "send": "x", "lineEnding": "none"}).line == b"x"
    )
    assert parse_tcp_config({"host": "example.com", "port": 1, "expect": "^a"}).expect == compile_regex("^a")


def test_the_form_names_its_fields():
    assert [field.key for field in TCP.form] == ["host", "port", "tls", "send", "expect", "timeout"]


def test_a_tls_handshake_that_gets_no_answer_times_out_naming_it(tmp_path):
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        freeze_clock()  # a plain server: the ClientHello is never answered
        await until_closed(reader)
        writer.close()

    outcome, waited = check_on_clock(handler, timeout=4, **TLS_TO_LOCALHOST)

    assert outcome.kind is FailureKind.TIMEOUT
    assert outcome.reason == "TLS handshake with 127.0.0.1:{port} got no answer within 4 s".format(
        port=outcome.details["address"].rsplit(":", 1)[1]
    )
    assert 4 <= waited < 4.5


def test_a_name_that_resolves_to_a_private_address_is_blocked(dns):
    dns["sneaky.example"] = ["10.0.0.7"]

    outcome = asyncio.run(run_check(parse_tcp_config({"host": "sneaky.example", "port": 25}), ProbeEnv()))

    assert outcome.kind is FailureKind.BLOCKED_ADDRESS
    assert "10.0.0.7" in outcome.reason
