"""Who is acting right now, for the audit log: an ``Actor`` held in a request-scoped context variable.

The edges set it (the web app's and the API's middleware and authentication, the MCP server's
tools, management commands); ``monitors.services.audit_record`` reads it. So services need no
``actor=`` argument and stay callable from anywhere: a context variable is local to the request
under ASGI (each task and each ``sync_to_async`` call runs in a copy of its context) and to the
thread under WSGI, and :func:`acting_as` puts the previous value back when the request ends. An
event written where nobody set an actor (beat, the worker, a shell) records ``system``.

Pure: no Django, so the MCP server's and uptimyctl's tests can build actors without a database.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Literal

from monitors.access_rules import clean_user_agent, client_address

# anonymous: a request nobody signed in to (a public form); system: no request at all.
ActorKind = Literal["person", "api_key", "oauth_client", "anonymous", "system"]
# How the change arrived: the web app, the REST API (uptimyctl is an API client that names
# itself in its User-Agent), Uptimy's MCP server, or Uptimy itself (beat, commands, the worker).
Via = Literal["web", "api", "uptimyctl", "mcp", "system"]

CTL_AGENT_PREFIX = "uptimyctl/"


@dataclass(frozen=True, slots=True)
class Actor:
    """Say who makes a change: a person, an API key or an OAuth client (with the person it acts for), or the system."""

    kind: ActorKind
    via: Via
    user_id: int | None = None
    api_key_id: int | None = None
    oauth_client_id: str = ""
    oauth_client_name: str = ""
    address: str | None = None
    user_agent: str = ""

    def seen_from(self, *, address: str | None, user_agent: str) -> Actor:
        """Return this actor with the request's client address and User-Agent, cleaned as sessions' are.

        Both arrive from the client or the server in front: an address that is not an IP (a Unix
        socket's peer) would not fit PostgreSQL's inet column, nor a NUL its text, and a failed
        audit write rolls the change back. So the event keeps what ``monitors.access_rules`` keeps.
        """
        return replace(self, address=client_address(address), user_agent=clean_user_agent(user_agent))


SYSTEM = Actor(kind="system", via="system")

_current: ContextVar[Actor | None] = ContextVar("uptimy_audit_actor", default=None)


def current_actor() -> Actor:
    """Return who is acting in this context; ``SYSTEM`` where no edge said."""
    return _current.get() or SYSTEM


@contextmanager
def acting_as(actor: Actor) -> Iterator[Actor]:
    """Hold ``actor`` as the current one for the block, and put the previous one back after it."""
    token = _current.set(actor)
    try:
        yield actor
    finally:
        _current.reset(token)


def replace_actor(actor: Actor) -> None:
    """Make ``actor`` current until the enclosing :func:`acting_as` block ends.

    For an edge that learns who is asking in the middle of a request (DRF authenticates inside
    the view): the request's middleware opened the block, whose end undoes this too.
    """
    _current.set(actor)


def api_via(user_agent: str) -> Via:
    """Return how an API request came: ``uptimyctl`` when the client names itself so, else ``api``."""
    return "uptimyctl" if user_agent.startswith(CTL_AGENT_PREFIX) else "api"
