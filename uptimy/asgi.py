"""Expose the ASGI callable that gunicorn's uvicorn workers serve: /mcp to the MCP server, the rest to Django.

Uptimy's MCP server (mcpserver/) runs on the official SDK, which is an ASGI (Starlette) app, so
the web app is served as ASGI: one host and port for both. The lifespan goes to the SDK's app
(its session manager's task group); Django answers every other HTTP request.
"""

import os

from django.core.asgi import get_asgi_application
from starlette.types import Receive, Scope, Send

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "uptimy.settings")
# Django under ASGI runs each request's sync code on a thread of its own, so a persistent
# connection would stay with a thread that is gone (Django's docs: disable persistent connections
# under ASGI); on PostgreSQL requests borrow from a pool instead (uptimy/settings.py). Only this
# process: Celery's workers and the embedded worker keep their own persistent connections.
os.environ.setdefault("CONN_MAX_AGE", "0")
os.environ.setdefault("UPTIMY_DB_POOL", "1")
django_application = get_asgi_application()

# After Django's set-up: the MCP server's tools import the apps' models.
from mcpserver.server import mcp_app  # noqa: E402
from monitors.ping_asgi import PREFIX as PING_PREFIX  # noqa: E402
from monitors.ping_asgi import ping_application  # noqa: E402

mcp_application = mcp_app()
MCP_PATHS = frozenset({"/mcp", "/mcp/"})


async def application(scope: Scope, receive: Receive, send: Send) -> None:
    """Route one ASGI connection: the lifespan and /mcp to the MCP server, everything else to Django."""
    if scope["type"] == "lifespan" or (scope["type"] == "http" and scope["path"] in MCP_PATHS):
        await mcp_application(scope, receive, send)
        return
    if scope["type"] == "http" and scope["path"].startswith(PING_PREFIX):
        # Heartbeat pings skip Django's middleware and resolver (monitors/ping_asgi.py).
        await ping_application(scope, receive, send)
        return
    # django-stubs types the handler with dict and Mapping where the ASGI spec (and Starlette) has mutable ones.
    await django_application(scope, receive, send)  # type: ignore[arg-type]
