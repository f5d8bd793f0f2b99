"""Check ``manage.py mcpcheck``'s usage and config errors, which need no server.

Its answers against real servers of every kind are in tests/peers/test_peers_mcpcheck.py.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from monitors.management.commands.mcpcheck import summary
from probes.checks.mcp import McpConfig
from probes.types import (
    Access,
    FailureKind,
    ProbeOutcome,
    ServerInfo,
    Status,
    Timings,
    ToolInfo,
    Transport,
)

SECRET = "s3cr3t-header-value"


def run(*args: str) -> str:
    out = StringIO()
    call_command("mcpcheck", *args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["ftp://example.com/mcp"], "URL"),
        (["https://user:pw@example.com/mcp"], "URL"),
        (["https://example.com/mcp", "--timeout", "0.5"], "--timeout"),
        (["https://example.com/mcp", "--timeout", "61"], "--timeout"),
        (["https://example.com/mcp", "--min-tools", "-1"], "--min-tools"),
        (["https://example.com/mcp", "--required-tool", "a", "--required-tool", "a"], "--required-tool"),
        (["https://example.com/mcp", "--required-tool", " "], "--required-tool"),
        (["https://example.com/mcp", "--header", "Bad Name: x"], "--header Bad Name"),
        (["https://example.com/mcp", "--header", "X-Key: a", "--header", "x-key: b"], "--header: x-key"),
        (["https://example.com/mcp", "--header", "Transfer-Encoding: chunked"], "--header Transfer-Encoding"),
        (["https://example.com/mcp", "--header", f"X-Key: {SECRET}\u00e9"], "--header X-Key"),
        (["https://example.com/mcp", "--header", f"X-Key: {SECRET}\x00"], "--header X-Key"),
        (["http://0177.0.0.1/mcp"], "URL"),
        (["http://exa\u00admple.com/mcp"], "URL"),
        (["https://example.com/mcp", "--required-tool", "a\ud800"], "--required-tool"),
    ],
)
def test_config_errors_exit_2_and_name_the_option(args, names):
    with pytest.raises(CommandError) as error:
        run(*args)

    assert error.value.returncode == 2
    assert names in str(error.value)
    assert SECRET not in str(error.value)


def test_a_crash_inside_the_check_exits_1_without_printing_a_header_value(monkeypatch, caplog):
    def crash(config, env):
        raise RuntimeError(f"boom {dict(config.headers)}")

    monkeypatch.setattr("monitors.management.check_commands.run_check_sync", crash)
    out = StringIO()

    with pytest.raises(SystemExit) as exit_:
        call_command("mcpcheck", "https://example.com/mcp", "--header", f"X-Key: {SECRET}", stdout=out)

    assert exit_.value.code == 1
    assert "our bug" in out.getvalue()
    assert SECRET not in out.getvalue() + caplog.text


def test_header_without_colon_is_refused_without_echoing_it():
    with pytest.raises(CommandError) as error:
        run("https://example.com/mcp", "--header", f"Bearer {SECRET}")

    assert error.value.returncode == 2
    assert "Name: value" in str(error.value)
    assert SECRET not in str(error.value)


def test_header_value_with_a_newline_is_refused_without_echoing_it():
    with pytest.raises(CommandError) as error:
        run("https://example.com/mcp", "--header", f"X-Key: {SECRET}\r\nX-Other: 1")

    assert error.value.returncode == 2
    assert SECRET not in str(error.value)


def test_argparse_usage_error_is_a_command_error():
    with pytest.raises(CommandError):
        run("https://example.com/mcp", "--min-tools", "many")


def test_summary_of_an_up_outcome_lists_server_tools_and_timings():
    config = McpConfig(uri="https://mcp.example.com/mcp", headers=(("Authorization", f"Bearer {SECRET}"),))
    outcome = ProbeOutcome(
        status=Status.UP,
        timings=Timings(dns_ms=1.25, tcp_ms=2.5, tls_ms=10.0, ttfb_ms=40.0, total_ms=120.0),
        server=ServerInfo(name="acme", version="3.2.0"),
        protocol="2025-11-25",
        access=Access.KEY,
        tools=(ToolInfo("search_docs", ("q",)), ToolInfo("get_status")),
        tool_count=2,
        tool_digest="abc",
        transport=Transport.STREAMABLE_HTTP,
        warnings=("server pagination loops",),
    )

    text = summary(config, outcome)

    assert text.splitlines()[0] == "UP  https://mcp.example.com/mcp  (streamable-http, 2025-11-25, key)"
    assert "server: acme 3.2.0" in text
    assert "tools: 2 (search_docs, get_status)" in text
    assert "warning: server pagination loops" in text
    assert "tls 10.0 ms" in text
    assert SECRET not in text


def test_summary_of_a_down_outcome_gives_kind_and_reason():
    config = McpConfig(uri="https://mcp.example.com/")
    outcome = ProbeOutcome(
        status=Status.DOWN,
        kind=FailureKind.NO_ENDPOINT,
        reason="No MCP endpoint at this URL (it often ends in /mcp)",
        timings=Timings(dns_ms=1.0, tcp_ms=2.0, ttfb_ms=5.0, total_ms=9.0),
    )

    text = summary(config, outcome)

    assert text.splitlines()[0] == "DOWN  https://mcp.example.com/"
    assert "no_endpoint: No MCP endpoint at this URL" in text
    assert "tls -" in text
