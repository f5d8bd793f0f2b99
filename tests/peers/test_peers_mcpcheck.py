"""Run ``manage.py mcpcheck`` against every kind of peer server and check its answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from peer_support import GOOD_TOKEN, ROOT, free_port

pytestmark = pytest.mark.peers

UP, DOWN = 0, 1
BEARER = f"Authorization: Bearer {GOOD_TOKEN}"

# (peer, server, path, extra arguments, exit code, fields expected in the --json output)
CASES: list[Any] = [
    pytest.param(
        "sdk", "stateful", "/mcp", [], UP, {"transport": "streamable-http", "tools": 3}, id="sdk-stateful"
    ),
    pytest.param("sdk", "json", "/mcp", [], UP, {"access": "open", "tools": 3}, id="sdk-json"),
    pytest.param("sdk", "stateless", "/mcp", [], UP, {"tools": 3}, id="sdk-stateless"),
    pytest.param("sdk", "paginated", "/mcp", ["--min-tools", "25"], UP, {"tools": 25}, id="sdk-paginated"),
    pytest.param("sdk", "legacy", "/sse", [], UP, {"transport": "sse", "tools": 3}, id="sdk-legacy-sse"),
    pytest.param("sdk", "oauth-root", "/mcp", [], UP, {"access": "oauth"}, id="sdk-oauth-keyless"),
    pytest.param("sdk", "oauth-path", "/mcp", [], UP, {"access": "oauth"}, id="sdk-oauth-issuer-path"),
    pytest.param("sdk", "oauth-oidc", "/mcp", [], UP, {"access": "oauth"}, id="sdk-oauth-oidc"),
    pytest.param(
        "sdk",
        "oauth-root",
        "/mcp",
        ["--header", BEARER],
        UP,
        {"access": "key", "tools": 3},
        id="sdk-oauth-key",
    ),
    pytest.param(
        "sdk",
        "oauth-root",
        "/mcp",
        ["--header", "Authorization: Bearer wrong"],
        DOWN,
        {"kind": "key_refused"},
        id="sdk-oauth-refused-key",
    ),
    pytest.param(
        "sdk",
        "json",
        "/mcp",
        ["--required-tool", "echo", "--required-tool", "nope"],
        DOWN,
        {"kind": "missing_tools", "missing_tools": ["nope"]},
        id="sdk-missing-tool",
    ),
    pytest.param(
        "sdk", "json", "/mcp", ["--min-tools", "4"], DOWN, {"kind": "too_few_tools"}, id="sdk-too-few"
    ),
    pytest.param("sdk", "json", "/nothing-here", [], DOWN, {"kind": "no_endpoint"}, id="sdk-wrong-path"),
    pytest.param(
        "everything", "streamableHttp", "/mcp", ["--required-tool", "echo"], UP, {}, id="everything-http"
    ),
    pytest.param(
        "everything",
        "sse",
        "/sse",
        ["--required-tool", "echo"],
        UP,
        {"transport": "sse"},
        id="everything-sse",
    ),
]


def base_url(peers, peer: str, server: str) -> str:
    return peers.sdk(server) if peer == "sdk" else peers.everything(server)


def run_command(*args: str) -> tuple[int, str]:
    out = StringIO()
    try:
        call_command("mcpcheck", *args, stdout=out)
    except SystemExit as exc:
        return int(exc.code or 0), out.getvalue()
    return 0, out.getvalue()


@pytest.fixture(autouse=True)
def allow_loopback(settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True


@pytest.mark.parametrize(("peer", "server", "path", "extra", "code", "expected"), CASES)
def test_mcpcheck_json_gives_the_right_answer(peers, peer, server, path, extra, code, expected):
    url = base_url(peers, peer, server) + path

    exit_code, output = run_command(url, "--json", *extra)

    data = json.loads(output)
    assert exit_code == code, data
    assert data["status"] == ("up" if code == UP else "down")
    assert set(data) >= {
        "status",
        "kind",
        "reason",
        "server",
        "protocol",
        "access",
        "signin_server",
        "signin_discovery",
        "tools",
        "tool_names",
        "missing_tools",
        "transport",
        "timings",
    }
    assert set(data["timings"]) == {"dns_ms", "tcp_ms", "tls_ms", "ttfb_ms", "total_ms"}
    for key, value in expected.items():
        assert data[key] == value, (key, data)
    assert GOOD_TOKEN not in output


@pytest.mark.parametrize(("peer", "server", "path", "extra", "code", "expected"), CASES)
def test_mcpcheck_summary_gives_the_right_answer(peers, peer, server, path, extra, code, expected):
    url = base_url(peers, peer, server) + path

    exit_code, output = run_command(url, *extra)

    assert exit_code == code, output
    first = output.splitlines()[0]
    assert first.startswith("UP" if code == UP else "DOWN"), output
    assert url in first
    if "kind" in expected:
        assert expected["kind"] in output
    assert "timings:" in output
    assert GOOD_TOKEN not in output


def test_keyless_summary_names_the_sign_in_server(peers):
    _, output = run_command(peers.sdk("oauth-path") + "/mcp")

    assert f"sign-in server: {peers.sdk('as-path')}/tenant1" in output


def test_closed_port_is_down_with_connect(peers):
    exit_code, output = run_command(f"http://127.0.0.1:{free_port()}/mcp", "--json", "--timeout", "3")

    assert exit_code == DOWN
    assert json.loads(output)["kind"] == "connect"


def test_loopback_is_blocked_unless_settings_allow_it(peers, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = False
    peers.clear_sdk_log("json")

    exit_code, output = run_command(peers.sdk("json") + "/mcp", "--json")

    assert exit_code == DOWN
    assert json.loads(output)["kind"] == "blocked_address"
    assert peers.sdk_log("json") == [], "the guard must refuse before connecting"


def test_real_command_line_exit_codes_and_no_secret_printed(peers):
    """Run manage.py as an operator would: the exit code is the verdict; header values never show."""
    env = {**os.environ, "UPTIMY_ALLOW_PRIVATE_TARGETS": "1"}
    command = [sys.executable, "manage.py", "mcpcheck"]
    url = peers.sdk("oauth-root") + "/mcp"

    up = subprocess.run(
        [*command, url, "--header", BEARER], cwd=ROOT, env=env, capture_output=True, timeout=60
    )
    down = subprocess.run(
        [*command, url, "--json", "--header", "Authorization: Bearer wrong-secret-value"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=60,
    )
    usage = subprocess.run(
        [*command, url, "--min-tools", "-1"], cwd=ROOT, env=env, capture_output=True, timeout=60
    )

    assert up.returncode == UP, up.stdout + up.stderr
    assert up.stdout.startswith(b"UP")
    assert GOOD_TOKEN.encode() not in up.stdout + up.stderr
    assert down.returncode == DOWN, down.stdout + down.stderr
    assert json.loads(down.stdout)["kind"] == "key_refused"
    assert b"wrong-secret-value" not in down.stdout + down.stderr
    assert usage.returncode == 2
    assert b"--min-tools" in usage.stderr
