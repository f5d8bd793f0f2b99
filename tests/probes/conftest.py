"""Fixtures for the check engine: fixed DNS, and a respx router that polices what checks send."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

import pytest
import respx
from probe_support import PUBLIC_IP, URL, FakeMcp, RespxStream, respx_network, sent_messages

from probes import connection
from probes.checks import register, unregister
from probes.checks.mcp import MCP
from probes.jsonrpc import ALLOWED_METHODS
from probes.netguard import IPAddress, parse_ip

# --- DNS -------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str] | Exception]:
    """Answer every name with a public address unless a test maps it (to addresses or an error)."""
    answers: dict[str, list[str] | Exception] = {}

    async def resolve(host: str, port: int, nameservers: tuple[str, ...] = ()) -> list[IPAddress]:
        answer = answers.get(host, [PUBLIC_IP])
        if isinstance(answer, Exception):
            raise answer
        return [address for address in (parse_ip(text) for text in answer) if address is not None]

    monkeypatch.setattr(connection, "resolve_name", resolve)
    return answers


@pytest.fixture
def connections() -> list[RespxStream]:
    """Return the in-memory connections the checks of a respx test opened, in order."""
    return []


@pytest.fixture
def mock(monkeypatch: pytest.MonkeyPatch, connections: list[RespxStream]) -> Iterable[respx.MockRouter]:
    """Yield a respx router; afterwards prove the check sent only allowlisted JSON-RPC messages.

    The check's connections go to an in-memory server that answers from the router, so its
    whole HTTP/1.1 client runs (see probe_support.RespxStream). Every respx scenario in this
    folder goes through here, so "a check never sends tools/call" is checked against every
    request of every scenario, not one hand-picked test.
    """
    with respx.mock(assert_all_called=False, assert_all_mocked=True) as router:
        monkeypatch.setattr(connection, "open_stream", respx_network(router, connections))
        yield router
    for message in sent_messages(router):
        method = message.get("method")
        if method is None:
            assert message.get("result") == {}, f"a check sent a response other than a ping answer: {message}"
        else:
            assert method in ALLOWED_METHODS, f"a check sent {method}"


@pytest.fixture
def server(mock: respx.MockRouter) -> FakeMcp:
    """Route URL to a FakeMcp; tests change its knobs before running the check."""
    fake = FakeMcp()
    mock.route(url=URL).mock(side_effect=fake)
    return fake


@pytest.fixture
def mcp_run() -> Iterable[Callable[[Callable], None]]:
    """Swap the MCP check's run function in the registry for one test, and put the real one back."""
    swapped = []

    def swap(run: Callable) -> None:
        unregister(MCP)
        swapped.append(register(replace(MCP, run=run)))

    yield swap
    for kind in swapped:
        unregister(kind)
    register(MCP)
