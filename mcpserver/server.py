"""Uptimy's MCP server on the official SDK: the tools' names, descriptions, input schemas and annotations.

Each tool takes the grant :mod:`mcpserver.endpoint` put in the request's scope and calls
:mod:`mcpserver.tools`; a refusal becomes the tool's error result (``isError``) with its sentence.
The SDK runs these sync functions on worker threads, where Django's ORM may be used.
"""

from collections.abc import Callable
from functools import wraps
from typing import Annotated, Any, ParamSpec, TypeVar

from django.db import close_old_connections
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field
from rest_framework.exceptions import ParseError
from starlette.types import ASGIApp

from mcpserver import tools
from mcpserver.auth import Grant
from mcpserver.endpoint import GRANT_KEY, PATH, McpEndpoint
from monitors.api.parsers import body_errors
from monitors.audit import SYSTEM, Actor, acting_as
from signin.discovery import public_base_for

INSTRUCTIONS = (
    "Uptimy monitors MCP servers (and websites) from several regions and alerts when they go down. "
    "Use add_monitors to start monitoring MCP server URLs, list_monitors and get_monitor to see their "
    "status, get_incidents for outages, run_check for a one-off check. Keys for servers that need one "
    "are never given here: the user adds them in the Uptimy app."
)

_P = ParamSpec("_P")
_R = TypeVar("_R")


class MonitorEntry(BaseModel):
    """One MCP server to monitor."""

    # Unknown keys reach add_monitors, which names them; `headers` gets its own answer (keys go in the app).
    model_config = ConfigDict(extra="allow")

    url: str = Field(
        description="The MCP server's endpoint URL, e.g. https://mcp.example.com/mcp (no key in it)."
    )
    name: str | None = Field(
        default=None, description="A name for the monitor; default the URL's host and path."
    )
    requiredTools: list[str] | None = Field(  # the API's and the product text's spelling
        default=None,
        description="Tool names the server must list, or the check is down naming the missing ones.",
    )
    minTools: int | None = Field(
        default=None, description="The server must list at least this many tools, or the check is down."
    )
    regions: list[str] | None = Field(
        default=None, description="Region slugs to check from; default every region the plan allows."
    )
    interval: int | None = Field(
        default=None, description="Seconds between checks; default 60 or the plan's minimum."
    )


MonitorRef = Annotated[str, Field(description="The monitor's id (from list_monitors) or its exact name.")]


def _grant_and_base(ctx: Context) -> tuple[Grant, str]:
    request = ctx.request_context.request
    scope = getattr(request, "scope", None)
    grant = scope.get(GRANT_KEY) if isinstance(scope, dict) else None
    if not isinstance(grant, Grant):  # the endpoint lets no request through without one
        raise ToolError("Not signed in.")
    headers = dict(getattr(request, "headers", {}))
    return grant, public_base_for(scope.get("scheme", "http"), headers.get("host", ""))  # type: ignore[union-attr]


def _actor(ctx: object) -> Actor:
    """Return who calls the tool, for the audit log: the grant's key or OAuth client, from the request's address."""
    request = ctx.request_context.request if isinstance(ctx, Context) else None
    scope = getattr(request, "scope", None)
    grant = scope.get(GRANT_KEY) if isinstance(scope, dict) else None
    if not isinstance(grant, Grant):
        return SYSTEM
    client = scope.get("client") if isinstance(scope, dict) else None
    headers = dict(getattr(request, "headers", {}))
    return grant.actor(address=client[0] if client else None, user_agent=str(headers.get("user-agent", "")))


def _refusals_as_errors(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Answer a Refused with the tool's error result, and keep this worker thread's database connection sound."""

    @wraps(fn)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        _refuse_unstorable_text({name: _plain(value) for name, value in kwargs.items() if name != "ctx"})
        close_old_connections()
        try:
            with acting_as(_actor(kwargs.get("ctx"))):
                return fn(*args, **kwargs)
        except tools.Refused as refused:
            raise ToolError(str(refused)) from None
        finally:
            close_old_connections()

    return call


def _plain(value: Any) -> Any:
    """Return a tool argument as plain JSON values (the SDK hands typed arguments over as pydantic models)."""
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _refuse_unstorable_text(arguments: dict[str, Any]) -> None:
    """Refuse arguments holding text no column can store (NUL, lone surrogates), as the REST API's bodies are.

    The REST API refuses them in its body parser; tool arguments come through the SDK, not that
    parser, so the same check (``body_errors``) runs here before any tool reads the database.
    """
    try:
        errors = body_errors(arguments)
    except ParseError as too_deep:
        raise ToolError(str(too_deep.detail)) from None
    if errors:
        raise ToolError(" ".join(f"{path}: {' '.join(messages)}" for path, messages in errors.items()))


# The methods MCPServer answers whether or not anything stands behind them; the SDK derives the
# initialize answer's capabilities from the methods served, so these would advertise prompts and
# resources Uptimy does not have.
UNSERVED_METHODS = (
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
)


def _serve_tools_only(server: MCPServer) -> None:
    """Drop the SDK's prompt and resource methods, so initialize advertises tools only and they answer -32601.

    The SDK offers no public way to leave them out (MCPServer registers them in its constructor),
    so the low-level server's table is edited; tests/mcpserver pin the capabilities an SDK client sees.
    """
    handlers = server._lowlevel_server._request_handlers
    for method in UNSERVED_METHODS:
        handlers.pop(method, None)


def build_server() -> MCPServer:
    """Return the MCP server with every tool registered."""
    # subscriptions=False: the tool list never changes while a process runs, so no listChanged.
    server: MCPServer = MCPServer("Uptimy", version="1.0.0", instructions=INSTRUCTIONS, subscriptions=False)
    _serve_tools_only(server)

    @server.tool(
        description=(
            "Add MCP servers to monitor (type mcp), all or none: each entry's url is checked from every "
            "region the plan allows. Never pass keys or headers: a server that needs a key gets it in the "
            f"Uptimy app (each added monitor's settings_url). At most {tools.MAX_MONITORS_PER_CALL} a call."
        ),
        annotations=ToolAnnotations(
            title="Add monitors",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    )
    @_refusals_as_errors
    def add_monitors(
        monitors: Annotated[
            list[MonitorEntry], Field(description="The MCP servers to monitor, one entry each.")
        ],
        ctx: Context,
    ) -> dict[str, Any]:
        grant, base = _grant_and_base(ctx)
        arguments = ctx.request_context.params or {}
        raw = arguments.get("arguments") if isinstance(arguments.get("arguments"), dict) else {}
        if isinstance(raw, dict) and "headers" in raw:
            raise tools.Refused(
                "Nothing was added: headers are not taken here, so keys never pass through a chat. Add the "
                f"monitors without them, then add the key in the app, under each monitor's Advanced settings "
                f"({base}/app/)."
            )
        entries = [{**entry.model_dump(exclude_none=True), **(entry.model_extra or {})} for entry in monitors]
        return tools.add_monitors(grant, entries, base_url=base)

    @server.tool(
        description="List the organization's monitors, newest first: id, name, URL, status and why it fails.",
        annotations=ToolAnnotations(
            title="List monitors", read_only_hint=True, destructive_hint=False, open_world_hint=False
        ),
    )
    @_refusals_as_errors
    def list_monitors(
        ctx: Context,
        status: Annotated[
            str | None,
            Field(description="Only monitors with this status: up, degraded, down, paused or pending."),
        ] = None,
        limit: Annotated[int, Field(description=f"At most this many (1 to {tools.MAX_LISTED}).")] = 100,
    ) -> dict[str, Any]:
        grant, base = _grant_and_base(ctx)
        return tools.list_monitors(grant, status=status, limit=limit, base_url=base)

    @server.tool(
        description=(
            "Show one monitor: its settings, its status overall and in each region, and each region's newest "
            "result (server, protocol, access, sign-in server, tools, missing tools, timing breakdown)."
        ),
        annotations=ToolAnnotations(
            title="Get a monitor", read_only_hint=True, destructive_hint=False, open_world_hint=False
        ),
    )
    @_refusals_as_errors
    def get_monitor(monitor: MonitorRef, ctx: Context) -> dict[str, Any]:
        grant, base = _grant_and_base(ctx)
        return tools.get_monitor(grant, monitor, base_url=base)

    @server.tool(
        description="List incidents (outages Uptimy opened and resolved), newest first, with their timelines.",
        annotations=ToolAnnotations(
            title="Get incidents", read_only_hint=True, destructive_hint=False, open_world_hint=False
        ),
    )
    @_refusals_as_errors
    def get_incidents(
        ctx: Context,
        monitor: Annotated[
            str | None, Field(description="Only this monitor's incidents: its id or exact name.")
        ] = None,
        open_only: Annotated[bool, Field(description="Only incidents that are still open.")] = False,
        limit: Annotated[int, Field(description=f"At most this many (1 to {tools.MAX_INCIDENTS}).")] = 20,
    ) -> dict[str, Any]:
        grant, _ = _grant_and_base(ctx)
        return tools.get_incidents(grant, monitor=monitor, open_only=open_only, limit=limit)

    @server.tool(
        description="Pause a monitor: it is not checked and raises no alerts until resumed.",
        annotations=ToolAnnotations(
            title="Pause a monitor",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )
    @_refusals_as_errors
    def pause_monitor(monitor: MonitorRef, ctx: Context) -> dict[str, Any]:
        grant, base = _grant_and_base(ctx)
        return tools.pause_monitor(grant, monitor, base_url=base)

    @server.tool(
        description="Resume a paused monitor: it is checked again from its next slot, pending until then.",
        annotations=ToolAnnotations(
            title="Resume a monitor",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )
    @_refusals_as_errors
    def resume_monitor(monitor: MonitorRef, ctx: Context) -> dict[str, Any]:
        grant, base = _grant_and_base(ctx)
        return tools.resume_monitor(grant, monitor, base_url=base)

    @server.tool(
        description=(
            "Check an MCP server URL once, now, from Uptimy's server, as a monitor would (initialize, list "
            "tools, never call one); nothing is stored. Answers up or down with the reason, server, protocol, "
            "access, sign-in server, tools and timings."
        ),
        annotations=ToolAnnotations(
            title="Run a check", read_only_hint=True, destructive_hint=False, open_world_hint=True
        ),
    )
    @_refusals_as_errors
    def run_check(
        url: Annotated[
            str, Field(description="The MCP server's endpoint URL, e.g. https://mcp.example.com/mcp.")
        ],
        ctx: Context,
        requiredTools: Annotated[  # the API's spelling
            list[str] | None, Field(description="Tool names the server must list.")
        ] = None,
        minTools: Annotated[
            int | None, Field(description="The server must list at least this many tools.")
        ] = None,
        timeout: Annotated[
            float | None, Field(description="Seconds the whole check may take (1 to 60; default 10).")
        ] = None,
    ) -> dict[str, Any]:
        grant, _ = _grant_and_base(ctx)
        return tools.run_check(
            grant, url=url, required_tools=requiredTools, min_tools=minTools, timeout=timeout
        )

    return server


def mcp_app() -> ASGIApp:
    """Return /mcp's ASGI app: the SDK's stateless Streamable HTTP app behind Uptimy's authentication.

    Stateless: any web process may answer any request (no session to find), JSON answers.
    The SDK's own DNS-rebinding guard is off: McpEndpoint checks the Host against ALLOWED_HOSTS,
    as Django does for every other path, and every request needs a bearer credential.
    """
    sdk_app = build_server().streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return McpEndpoint(sdk_app)
