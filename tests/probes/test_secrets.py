"""Header values never show: not in an outcome, its JSON, its repr, a warning or a log line."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from urllib.parse import quote

import httpx
import pytest
from probe_support import URL, FakeMcp, mcp, rpc_error, run

from probes.redact import redact, redacting, redactor_for
from probes.runner import ProbeEnv, outcome_to_json, run_batch

SECRET = "sk-live-4f9a8b7c6d5e"
HEADERS = (("Authorization", f"Bearer {SECRET}"), ("X-Api-Key", "key-0123456789"))


def leaks(outcome, *texts: str) -> list[str]:
    shown = [repr(outcome), json.dumps(outcome_to_json(outcome)), *outcome.warnings, *texts]
    return [text for text in shown if SECRET in text or "key-0123456789" in text]


def echo(request: httpx.Request) -> str:
    return request.headers.get("authorization", "") + " " + request.headers.get("x-api-key", "")


@pytest.mark.parametrize(
    "answer",
    [
        lambda r: httpx.Response(500, text=f"bad token {echo(r)}"),
        lambda r: httpx.Response(400, json=rpc_error(-32000, f"rejected {echo(r)}")),
        lambda r: httpx.Response(200, json=rpc_error(-32603, f"nope {echo(r)}", 1)),
        lambda r: httpx.Response(200, html=f"<title>{echo(r)}</title>"),
        lambda r: httpx.Response(403, text=echo(r)),
    ],
)
def test_a_server_echoing_the_key_into_its_answer_does_not_leak_it(mock, answer):
    mock.post(URL).mock(side_effect=answer)
    mock.get(URL).respond(405)
    outcome = run(mcp(headers=HEADERS))
    assert outcome.reason
    assert leaks(outcome) == []


def test_a_server_echoing_the_key_into_its_name_does_not_leak_it(mock):
    fake = FakeMcp(server_info={"name": f"srv {SECRET}", "version": SECRET})
    mock.route(url=URL).mock(side_effect=fake)
    outcome = run(mcp(headers=HEADERS, required_tools=(SECRET[:3],)))
    assert leaks(outcome) == []


def test_a_crashing_check_logs_no_header_value(mcp_run, caplog, server):
    async def broken(config, conn, *, deadline):
        raise RuntimeError(f"boom with {dict(config.headers)}")

    mcp_run(broken)
    with caplog.at_level(logging.DEBUG):
        [(_, outcome)] = asyncio.run(run_batch([(1, mcp(headers=HEADERS))], ProbeEnv()))
    assert "RuntimeError" in caplog.text
    assert SECRET not in caplog.text
    assert "key-0123456789" not in caplog.text
    assert leaks(outcome) == []


def test_no_log_line_of_a_normal_check_holds_a_header_value(server, caplog):
    with caplog.at_level(logging.DEBUG):
        outcome = run(mcp(headers=HEADERS))
    assert SECRET not in caplog.text
    assert leaks(outcome) == []


def key_forms(request: httpx.Request) -> dict[str, str]:
    """Return what a server could echo of the key it was sent, by the name of the form."""
    key = request.headers.get("authorization", "").removeprefix("Bearer ")
    return {
        "upper-cased": key.upper(),
        "base64": base64.b64encode(key.encode()).decode(),
        "base64 without padding": base64.urlsafe_b64encode(key.encode()).decode().rstrip("="),
        "URL-encoded": quote(f"{key}/?", safe=""),
        "straddling the cut": "x" * 190 + key,
        "straddling a short cut": "y" * 70 + key,
    }


@pytest.mark.parametrize(
    "form",
    [
        "upper-cased",
        "base64",
        "base64 without padding",
        "URL-encoded",
        "straddling the cut",
        "straddling a short cut",
    ],
)
def test_no_form_of_the_key_and_no_part_of_it_survives_in_the_reason(mock, form):
    mock.post(URL).mock(side_effect=lambda r: httpx.Response(500, text=key_forms(r)[form]))
    mock.get(URL).respond(405)

    outcome = run(mcp(headers=HEADERS))

    assert outcome.reason
    assert leaked_parts(outcome.reason) == []


def leaked_parts(text: str) -> list[str]:
    """Return every 6-character run of the key (in any case or encoding) that shows in ``text``."""
    forms = [SECRET, base64.b64encode(SECRET.encode()).decode(), quote(SECRET, safe="")]
    runs = {form[i : i + 6].lower() for form in forms for i in range(len(form) - 5)}
    return sorted(part for part in runs if part in text.lower())


def test_tool_names_echoing_the_key_are_redacted(mock):
    fake = FakeMcp(tools=[{"name": f"search_{SECRET}", "inputSchema": {"type": "object"}}])
    mock.route(url=URL).mock(side_effect=fake)

    outcome = run(mcp(headers=HEADERS))

    assert outcome.tool_names == ("search_[redacted]",)
    assert leaks(outcome) == []


def test_the_password_of_basic_credentials_is_redacted_when_echoed_decoded(mock):
    token = base64.b64encode(b"monitor:hunter2-password").decode()
    mock.post(URL).mock(side_effect=lambda r: httpx.Response(401, text="wrong password hunter2-password"))
    mock.get(URL).respond(405)

    outcome = run(mcp(headers=(("Authorization", f"Basic {token}"),)))

    assert "hunter2-password" not in outcome.reason


def test_a_checks_redactor_applies_within_its_block_and_the_outer_one_returns_after():
    outer, inner = redactor_for((("X-Key", "outer-secret"),)), redactor_for((("X-Key", "inner-secret"),))
    text = "outer-secret inner-secret"
    seen_inside: list[str] = []

    def check_that_crashes() -> None:
        with redacting(inner):
            seen_inside.append(redact(text))
            raise RuntimeError

    with redacting(outer):
        with pytest.raises(RuntimeError):
            check_that_crashes()
        assert seen_inside == ["outer-secret [redacted]"]
        assert redact(text) == "[redacted] inner-secret"
    assert redact(text) == text


def test_headers_without_a_secret_give_a_redactor_that_changes_nothing():
    redactor = redactor_for((("Accept", "*/*"), ("X-Flag", "on"), ("Authorization", "Bearer")))

    assert not redactor
    assert redactor("Bearer */* on") == "Bearer */* on"


def test_equal_headers_share_one_redactor_and_other_headers_get_their_own():
    headers = (("Authorization", "Bearer sk-first-1234"),)
    equal = tuple((name, value) for name, value in headers)
    other = (("Authorization", "Bearer sk-other-5678"),)

    assert redactor_for(equal) is redactor_for(headers)
    assert redactor_for(other)("sk-first-1234 sk-other-5678") == "sk-first-1234 [redacted]"
