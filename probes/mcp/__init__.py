"""Check an MCP server the way an assistant connects to it: initialize, list tools, never call one.

One check is one :class:`~probes.mcp.exchange.Exchange`: POST ``initialize`` (falling back to older protocol
versions when the server rejects ours with an error), POST ``notifications/initialized``,
POST ``tools/list`` page by page when the server declares tools, then DELETE the session.
Answers may be JSON or an event stream. A 401 without a key turns into sign-in discovery
(``probes.oauth``); 400/404/405 on ``initialize`` into a look for the legacy HTTP+SSE
transport, unless the answer shows a server of the stateless 2026-07-28 revision (its error
codes, or "Method not found" for initialize itself). A 404 to a request carrying the session
id means the server ended the session: the check starts one new session, once. Everything
remote becomes a :class:`CheckFailed` with a kind and a sentence.

Each module imports only those before it in this list, so the package has no import cycle:
``config`` (the check's settings), ``events`` (the capped event-stream reader), ``exchange``
(shared state and signals), ``transport`` (one message over HTTP), ``legacy`` (HTTP+SSE),
``calls`` (requests on a session, either transport), ``initialize``, ``tools``, ``ending``
(the DELETE), ``session`` (the check itself).
"""

from probes.mcp.initialize import PROTOCOL_VERSIONS
from probes.mcp.session import check_mcp, tool_details_digest, tool_digest
from probes.mcp.tools import MAX_PAGES

__all__ = ["MAX_PAGES", "PROTOCOL_VERSIONS", "check_mcp", "tool_details_digest", "tool_digest"]
