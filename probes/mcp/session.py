"""Run one MCP check from start to verdict; :func:`check_mcp` is what the runner calls.

Own the order of the steps (initialize, ``notifications/initialized``, ``tools/list``), the one
new session started when the server ends the first, the turn to sign-in discovery on a keyless
401, and the translation of whatever happened into a :class:`ProbeOutcome`, so that each step's
module can stay ignorant of the others.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from dataclasses import replace

import httpx

from probes import oauth
from probes.connection import CheckFailed, Connection
from probes.mcp.calls import notify
from probes.mcp.config import McpConfig
from probes.mcp.ending import end_session
from probes.mcp.exchange import Exchange, NeedsSignIn, SessionExpired
from probes.mcp.initialize import initialize
from probes.mcp.tools import list_tools
from probes.types import Access, FailureKind, ProbeOutcome, Status, ToolInfo


async def check_mcp(config: McpConfig, conn: Connection, *, deadline: float) -> ProbeOutcome:
    """Return the outcome of one MCP check; ``deadline`` is the loop time the whole check ends by."""
    ex = Exchange(config=config, conn=conn, url=httpx.URL(config.uri))
    if config.has_key:
        ex.access = Access.KEY
    started = time.perf_counter()
    try:
        async with asyncio.timeout_at(deadline):
            outcome = await _run(ex)
    except CheckFailed as failed:
        outcome = _down(ex, failed.kind, failed.reason, failed.http_status)
    except TimeoutError:
        reason = conn.timeout_words(config.timeout)
        outcome = _down(
            ex,
            FailureKind.TIMEOUT,
            reason or f"No complete answer within {config.timeout:g} s (during {ex.phase})",
        )
    total_ms = (time.perf_counter() - started) * 1000
    await end_session(ex, deadline)
    return _with_timings(outcome, conn, total_ms)


def _with_timings(outcome: ProbeOutcome, conn: Connection, total_ms: float) -> ProbeOutcome:
    return replace(outcome, timings=conn.timings(total_ms))


def _down(ex: Exchange, kind: FailureKind, reason: str, http_status: int | None = None) -> ProbeOutcome:
    return ProbeOutcome(
        status=Status.DOWN,
        kind=kind,
        reason=reason,
        http_status=http_status,
        server=ex.server,
        protocol=ex.protocol,
        access=ex.access,
        signin_server=ex.signin_server,
        transport=ex.transport,
        warnings=tuple(dict.fromkeys(ex.warnings)),
    )


async def _run(ex: Exchange) -> ProbeOutcome:
    try:
        try:
            return await _session(ex)
        except SessionExpired as expired:
            # The protocol's answer to a 404 on a session: start a new one. Once only: a
            # server that ends every session at once cannot be checked.
            ex.warnings.append(
                f"The server ended the session (HTTP 404 on {expired.method}); a new one was started"
            )
            try:
                return await _session(ex)
            except SessionExpired as again:
                raise again.failure from None
    except NeedsSignIn as need:
        return await _signin(ex, need)


async def _session(ex: Exchange) -> ProbeOutcome:
    """Initialize a session, confirm it and list the tools; return the verdict."""
    capabilities = await initialize(ex)
    ex.access = ex.access or Access.OPEN
    ex.phase = "notifications/initialized"
    await notify(ex, "notifications/initialized")
    tools = await list_tools(ex) if "tools" in capabilities else []
    return _verdict(ex, tools)


async def _signin(ex: Exchange, need: NeedsSignIn) -> ProbeOutcome:
    ex.phase = "sign-in discovery"
    ex.access = Access.OAUTH
    try:
        signin = await oauth.discover_signin(ex.conn, need.url, need.challenges)
    except CheckFailed as failed:
        if failed.kind is FailureKind.CREDENTIALS_REQUIRED:
            ex.access = None  # no way in was found: neither open, nor OAuth, nor a key it was given
        raise
    ex.signin_server = signin.issuer
    ex.warnings.extend(signin.warnings)
    return ProbeOutcome(
        status=Status.UP,
        server=ex.server,
        protocol=ex.protocol,
        access=Access.OAUTH,
        signin_server=signin.issuer,
        signin_discovery=signin.discovery,
        transport=ex.transport,
        http_status=401,
        warnings=tuple(dict.fromkeys(ex.warnings)),
    )


def _verdict(ex: Exchange, tools: list[ToolInfo]) -> ProbeOutcome:
    names = {tool.name for tool in tools}
    missing = tuple(name for name in ex.config.required_tools if name not in names)
    kind: FailureKind | None = None
    reason = ""
    if missing:
        kind, reason = FailureKind.MISSING_TOOLS, "Missing tools: " + ", ".join(missing)
    elif len(tools) < ex.config.min_tools:
        kind = FailureKind.TOO_FEW_TOOLS
        reason = f"{len(tools)} {'tool' if len(tools) == 1 else 'tools'} listed; at least {ex.config.min_tools} required"
    return ProbeOutcome(
        status=Status.DOWN if kind else Status.UP,
        kind=kind,
        reason=reason,
        server=ex.server,
        protocol=ex.protocol,
        access=ex.access,
        tools=tuple(tools),
        tool_count=len(tools),
        tool_digest=tool_digest(tools),
        tool_details_digest=tool_details_digest(tools),
        missing_tools=missing,
        transport=ex.transport,
        warnings=tuple(dict.fromkeys(ex.warnings)),
    )


def tool_digest(tools: list[ToolInfo] | tuple[ToolInfo, ...]) -> str:
    """Return a stable sha256 of the sorted (name, required inputs) list, to tell a changed tool list."""
    canonical = sorted((tool.name, sorted(tool.required_inputs)) for tool in tools)
    # surrogatepass: a hostile name may hold a lone surrogate, and still gets a digest of its own.
    return hashlib.sha256(
        json.dumps(canonical, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")
    ).hexdigest()


def tool_details_digest(tools: list[ToolInfo] | tuple[ToolInfo, ...]) -> str:
    """Return a stable sha256 of everything kept of the tools, sorted by name, to tell a new list version."""
    canonical = sorted(
        (
            tool.name,
            sorted(tool.required_inputs),
            tool.description,
            tool.input_schema,
            tool.read_only_hint,
            tool.destructive_hint,
            tool.description_kept,
            tool.schema_kept,
        )
        for tool in tools
    )
    return hashlib.sha256(
        json.dumps(canonical, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")
    ).hexdigest()
