"""Hold what the steps of one check share: the exchange's state and the signals between steps.

Every step reads and writes the same :class:`Exchange` (the URL, which a redirect may move, the
session id, the negotiated version, the warnings), and three conditions travel up through
several steps as exceptions rather than return values: a keyless 401, a session the server
ended, and an initialize that refused our version. They sit near the bottom of the package
(only the config and the event reader are below) so that every other module can import them
without importing one another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import httpx

from probes.connection import CheckFailed, Connection
from probes.jsonrpc import JsonObject, RpcError
from probes.mcp.config import McpConfig
from probes.mcp.events import EventReader
from probes.types import Access, ServerInfo, Transport
from probes.wire import Headers, Response

SESSION_ID = re.compile(r"^[\x21-\x7e]{1,1024}$")


class NeedsSignIn(Exception):
    """Signal a keyless 401: the check turns into sign-in discovery for ``url``."""

    def __init__(self, url: httpx.URL, challenges: list[str]) -> None:
        super().__init__("401")
        self.url = url
        self.challenges = challenges


class SessionExpired(Exception):
    """Signal a 404 to a request that carried the session id: the server ended the session."""

    def __init__(self, method: str, failure: CheckFailed) -> None:
        super().__init__(failure.reason)
        self.method = method
        self.failure = failure


class VersionRejected(Exception):
    """Signal that initialize got an error refusing our protocol version."""

    def __init__(self, error: RpcError) -> None:
        super().__init__(error.message)
        self.error = error


def rejects_version(error: RpcError) -> bool:
    # -32602 alone proves nothing (Python servers send it for anything before initialize);
    # a rejection names the supported versions or says "version".
    if isinstance(error.data, dict) and isinstance(error.data.get("supported"), list):
        return True
    return "version" in error.message.lower()


@dataclass(slots=True)
class Answer:
    """Hold one HTTP answer to a POST: the JSON-RPC response for 2xx, the body otherwise."""

    status: int
    headers: Headers
    message: JsonObject | None = None
    body: bytes = b""
    mtype: str = ""


@dataclass(slots=True)
class Legacy:
    """Hold the open GET stream of a legacy HTTP+SSE session and the URL it told us to POST to."""

    response: Response
    events: EventReader
    endpoint: httpx.URL


@dataclass(slots=True)
class Exchange:
    """Hold the mutable state of one check while it runs."""

    config: McpConfig
    conn: Connection
    url: httpx.URL
    next_id: int = 1
    phase: str = "initialize"
    session_id: str | None = None
    protocol: str | None = None
    server: ServerInfo | None = None
    transport: Transport | None = None
    access: Access | None = None
    signin_server: str | None = None
    legacy: Legacy | None = None
    pings_answered: int = 0
    # The session id on an initialize answer not yet read: a ping inside that stream needs it.
    pending_session: str | None = None
    # Bytes of JSON read from the server's answers so far (events included): the tools/list
    # byte cap across pages is measured on it.
    answer_bytes: int = 0
    warnings: list[str] = field(default_factory=list)

    def take_id(self) -> int:
        request_id = self.next_id
        self.next_id += 1
        return request_id
