"""The front door: run_check, run_batch's caps and isolation, the JSON shape, the SSL context."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace

import pytest
from probe_support import URL, mcp

from probes import runner
from probes.checks.mcp import MCP
from probes.redact import redactor_for
from probes.runner import (
    ProbeEnv,
    default_ssl_context,
    finish_outcome,
    outcome_to_json,
    run_batch,
    run_check_sync,
)
from probes.text import is_storable
from probes.types import Access, FailureKind, ProbeOutcome, ServerInfo, Status, Timings, ToolInfo, Transport


def test_default_ssl_context_is_built_once():
    assert default_ssl_context() is default_ssl_context()


def test_user_agent_names_uptimy_version_and_what_it_sends():
    assert runner.USER_AGENT.startswith("Uptimy/0.1.0 ")
    assert "only initialize and tools/list" in runner.USER_AGENT


def test_run_check_sync_runs_one_check(server):
    assert run_check_sync(mcp(), ProbeEnv()).status is Status.UP


def test_outcome_to_json_has_the_documented_shape():
    outcome = ProbeOutcome(
        status=Status.UP,
        server=ServerInfo("acme", "1.0"),
        protocol="2025-11-25",
        access=Access.OPEN,
        tools=(ToolInfo("a"), ToolInfo("b")),
        tool_count=2,
        transport=Transport.STREAMABLE_HTTP,
        timings=Timings(dns_ms=1.0, tcp_ms=2.0, tls_ms=3.0, ttfb_ms=4.0, total_ms=10.0),
    )
    assert outcome_to_json(outcome) == {
        "status": "up",
        "kind": None,
        "reason": "",
        "server": {"name": "acme", "version": "1.0"},
        "protocol": "2025-11-25",
        "access": "open",
        "signin_server": None,
        "signin_discovery": None,
        "tools": 2,
        "tool_names": ["a", "b"],
        "missing_tools": [],
        "transport": "streamable-http",
        "details": {},
        "timings": {"dns_ms": 1.0, "tcp_ms": 2.0, "tls_ms": 3.0, "ttfb_ms": 4.0, "total_ms": 10.0},
    }


def test_outcome_to_json_of_a_failure():
    data = outcome_to_json(
        ProbeOutcome(status=Status.DOWN, kind=FailureKind.DNS, reason="DNS lookup of x failed: y")
    )
    assert (data["status"], data["kind"], data["server"], data["tools"]) == ("down", "dns", None, None)


def test_batch_keeps_input_order(server):
    items = [(index, mcp()) for index in range(5)]
    results = asyncio.run(run_batch(items, ProbeEnv()))
    assert [key for key, _ in results] == [0, 1, 2, 3, 4]
    assert all(outcome.status is Status.UP for _, outcome in results)


def test_one_crashing_check_does_not_kill_the_batch(server, mcp_run, caplog):
    real = MCP.run

    async def flaky(config, conn, *, deadline):
        if config.min_tools == 1:
            raise KeyError("boom")
        return await real(config, conn, deadline=deadline)

    mcp_run(flaky)
    with caplog.at_level(logging.ERROR, logger="probes.runner"):
        results = dict(asyncio.run(run_batch([("ok", mcp()), ("bad", mcp(min_tools=1))], ProbeEnv())))
    assert results["ok"].status is Status.UP
    assert results["bad"].kind is FailureKind.PROTOCOL
    assert "KeyError" in results["bad"].reason
    assert "KeyError" in caplog.text


def test_run_check_lets_a_bug_raise(server, mcp_run):
    async def broken(config, conn, *, deadline):
        raise ZeroDivisionError

    mcp_run(broken)
    with pytest.raises(ZeroDivisionError):
        run_check_sync(mcp(), ProbeEnv())


@pytest.mark.parametrize(("max_in_flight", "per_host", "expected"), [(3, 20, 3), (20, 2, 2)])
def test_batch_caps_checks_in_flight_and_per_host(monkeypatch, max_in_flight, per_host, expected):
    running = 0
    peak = 0

    async def fake_check(config, env):
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return ProbeOutcome(status=Status.UP)

    monkeypatch.setattr(runner, "run_check", fake_check)
    items = [(index, mcp()) for index in range(12)]
    asyncio.run(run_batch(items, ProbeEnv(), max_in_flight=max_in_flight, per_host=per_host))
    assert peak == expected


def test_per_host_cap_does_not_hold_back_other_hosts(monkeypatch):
    running: dict[str, int] = {}
    peak = 0

    async def fake_check(config, env):
        nonlocal peak
        running[config.uri] = running.get(config.uri, 0) + 1
        peak = max(peak, sum(running.values()))
        await asyncio.sleep(0.01)
        running[config.uri] -= 1
        return ProbeOutcome(status=Status.UP)

    monkeypatch.setattr(runner, "run_check", fake_check)
    items = [(i, mcp(URL if i % 2 else "https://other.example.com/mcp")) for i in range(8)]
    asyncio.run(run_batch(items, ProbeEnv(), max_in_flight=10, per_host=1))
    assert peak == 2


POISON = "evil\u0000\ud800"


def test_every_text_of_an_outcome_is_made_storable_as_the_check_ends():
    outcome = ProbeOutcome(
        status=Status.DOWN,
        kind=FailureKind.MISSING_TOOLS,
        reason=f"missing {POISON}",
        server=ServerInfo(POISON, POISON),
        protocol=POISON,
        signin_server=POISON,
        tools=(ToolInfo(POISON, (POISON,)),),
        missing_tools=(POISON,),
        warnings=(POISON,),
    )

    finished = finish_outcome(outcome, redactor_for(()))

    texts = [finished.reason, *finished.warnings, finished.server.name, finished.server.version]
    texts += [finished.protocol, finished.signin_server, *finished.missing_tools]
    texts += [name for tool in finished.tools for name in (tool.name, *tool.required_inputs)]
    assert all(is_storable(text) for text in texts)
    assert finished.tool_names == ("evil\ufffd",)


def test_a_type_s_details_are_cleaned_and_redacted_keys_and_values_alike():
    redactor = redactor_for((("X-Key", "sk-live-0123456789"),))
    outcome = ProbeOutcome(
        status=Status.UP,
        details={"reply": "a\x00b\ud800 sk-live-0123456789", "names": ["ok", "\ud800"], "k\x00ey": {"n": 1}},
    )

    finished = finish_outcome(outcome, redactor)

    assert finished.details == {
        "reply": "ab\ufffd [redacted]",
        "names": ["ok", "\ufffd"],
        "key": {"n": 1},
    }


def test_an_outcome_with_nothing_to_clean_is_returned_as_it_is():
    outcome = ProbeOutcome(status=Status.UP, server=ServerInfo("acme", "1.0"), tools=(ToolInfo("a", ("q",)),))

    assert finish_outcome(outcome, redactor_for(())) is outcome


def test_an_outcome_that_echoes_no_key_is_returned_as_it_is_and_one_that_does_is_redacted():
    redactor = redactor_for((("Authorization", "Bearer sk-live-0123456789"),))
    quiet = ProbeOutcome(status=Status.UP, server=ServerInfo("acme", "1.0"), tools=(ToolInfo("a", ("q",)),))
    echoing = replace(quiet, tools=(ToolInfo("a", ("q",)), ToolInfo("b", ("SK-LIVE-0123456789",))))

    assert finish_outcome(quiet, redactor) is quiet
    assert finish_outcome(echoing, redactor).tools[1].required_inputs == ("[redacted]",)


@pytest.mark.parametrize(
    ("region", "named"),
    [
        (None, None),
        ("", None),
        ("eu-west", "region eu-west;"),
        ("ap south\r\nX-Injected: 1", "region apsouthX-Injected1;"),
        ("été", "region t;"),
        ("!!!", "region unnamed;"),
    ],
)
def test_the_user_agent_names_the_region_a_check_runs_from_as_one_safe_token(region, named):
    agent = runner.user_agent(region)

    assert agent.startswith("Uptimy/0.1.0 ")
    assert all(" " <= char <= "~" for char in agent)  # printable ASCII: no CR, LF or other controls
    if named is None:
        assert agent == runner.USER_AGENT
    else:
        assert named in agent
