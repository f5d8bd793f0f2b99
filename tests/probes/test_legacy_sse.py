"""The legacy HTTP+SSE transport (2024-11-05): detection after 400/404/405, and a check over it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from probe_support import mcp, run, sse_event, tool

from probes.types import Access, FailureKind, Status, Transport

SSE_URL = "https://legacy.example.com/sse"


class LegacyServer:
    """Answer POSTs with 202 and put the JSON-RPC answers on the open GET stream, as SDK servers do."""

    def __init__(self, endpoint: str = "/messages/?session_id=abc123") -> None:
        self.endpoint = endpoint
        self.queue: asyncio.Queue[str | None] | None = None
        self.posts: list[dict[str, Any]] = []

    def get(self, request: httpx.Request) -> httpx.Response:
        self.queue = asyncio.Queue()
        self.queue.put_nowait(sse_event(self.endpoint, event="endpoint"))
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=self._stream())

    async def _stream(self) -> AsyncIterator[bytes]:
        assert self.queue is not None
        while (text := await self.queue.get()) is not None:
            yield text.encode()

    def post(self, request: httpx.Request) -> httpx.Response:
        assert self.queue is not None
        message = json.loads(request.content)
        self.posts.append(message)
        if message.get("method") == "initialize":
            self.queue.put_nowait(
                sse_event({"jsonrpc": "2.0", "method": "notifications/message", "params": {}})
            )
            result = {
                "protocolVersion": "2024-11-05",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "old-server", "version": "0.9"},
            }
            self.queue.put_nowait(sse_event({"jsonrpc": "2.0", "id": message["id"], "result": result}))
        elif message.get("method") == "tools/list":
            self.queue.put_nowait(sse_event({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}))
            result = {"tools": [tool("legacy_tool")]}
            self.queue.put_nowait(sse_event({"jsonrpc": "2.0", "id": message["id"], "result": result}))
        return httpx.Response(202, text="Accepted")


@pytest.fixture
def legacy(mock) -> LegacyServer:
    server = LegacyServer()
    mock.post(SSE_URL).mock(return_value=httpx.Response(405))
    mock.get(SSE_URL).mock(side_effect=server.get)
    mock.post(url__startswith="https://legacy.example.com/messages/").mock(side_effect=server.post)
    return server


def test_legacy_server_is_detected_and_checked_over_sse(legacy):
    outcome = run(mcp(SSE_URL))
    assert outcome.status is Status.UP
    assert outcome.transport is Transport.SSE
    assert outcome.protocol == "2024-11-05"
    assert outcome.tool_names == ("legacy_tool",)
    assert outcome.access is Access.OPEN


def test_legacy_posts_go_to_the_endpoint_and_answer_the_ping(legacy):
    run(mcp(SSE_URL))
    methods = [post.get("method", "answer") for post in legacy.posts]
    assert methods == ["initialize", "notifications/initialized", "tools/list", "answer"]
    assert legacy.posts[-1] == {"jsonrpc": "2.0", "id": "srv-1", "result": {}}


@pytest.mark.parametrize("status", [400, 404])
def test_legacy_detection_also_follows_400_and_404(mock, legacy, status):
    mock.post(SSE_URL).mock(return_value=httpx.Response(status))
    assert run(mcp(SSE_URL)).transport is Transport.SSE


def test_endpoint_on_another_origin_is_refused(mock):
    server = LegacyServer(endpoint="https://evil.example/messages/?session_id=abc123")
    mock.post(SSE_URL).mock(return_value=httpx.Response(405))
    mock.get(SSE_URL).mock(side_effect=server.get)
    outcome = run(mcp(SSE_URL))
    assert outcome.kind is FailureKind.REDIRECT_REFUSED
    assert "https://evil.example/messages/" in outcome.reason
    assert "session_id" not in outcome.reason


def test_a_stream_whose_first_event_is_not_endpoint_is_not_legacy(mock):
    mock.post(SSE_URL).mock(return_value=httpx.Response(404))
    body = sse_event({"jsonrpc": "2.0", "method": "notifications/message"})
    mock.get(SSE_URL).mock(
        return_value=httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})
    )
    assert run(mcp(SSE_URL)).kind is FailureKind.NO_ENDPOINT


def test_legacy_stream_that_closes_before_the_answer_is_a_protocol_failure(mock):
    mock.post(SSE_URL).mock(return_value=httpx.Response(405))
    body = sse_event("/messages/?session_id=1", event="endpoint")
    mock.get(SSE_URL).mock(
        return_value=httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})
    )
    mock.post(url__startswith="https://legacy.example.com/messages/").mock(return_value=httpx.Response(202))
    outcome = run(mcp(SSE_URL))
    assert outcome.kind is FailureKind.PROTOCOL
    assert "ended without the answer to initialize" in outcome.reason


@pytest.mark.parametrize("status", [401, 403, 406, 415, 500])
def test_no_legacy_probe_after_other_statuses(mock, status):
    mock.post(SSE_URL).mock(return_value=httpx.Response(status))
    legacy_get = mock.get(SSE_URL).mock(return_value=httpx.Response(200))
    mock.get(url__startswith="https://legacy.example.com/.well-known/").mock(return_value=httpx.Response(404))
    run(mcp(SSE_URL))
    assert not legacy_get.called
