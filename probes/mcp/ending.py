"""End the session once the verdict is decided: close the legacy stream or DELETE the session.

Kept apart from the steps that decide the check because nothing here may change the outcome:
the goodbye is best effort and bounded by what is left of the deadline.
"""

from __future__ import annotations

import asyncio
import contextlib

from probes.connection import CheckFailed
from probes.mcp.exchange import Exchange
from probes.mcp.transport import request_headers


async def end_session(ex: Exchange, deadline: float) -> None:
    """Close the legacy stream or DELETE the session, within what is left of the deadline.

    Best effort: the result is already decided, and 404 or 405 (or no answer) is fine.
    """
    if ex.legacy is not None:
        with contextlib.suppress(Exception):
            await ex.legacy.events.aclose()
        return
    if ex.session_id is None:
        return
    headers = request_headers(ex, initialize=False)
    with contextlib.suppress(CheckFailed, OSError, TimeoutError):
        async with asyncio.timeout_at(deadline):
            response = await ex.conn.send("DELETE", ex.url, headers=headers)
            await response.aclose()
