"""Serve one official-SDK server from tests/peers/servers/sdk_servers.py on a fixed loopback port.

Usage: ``python tests/e2e/mcp_peer.py NAME PORT [--slow SECONDS]``. The end-to-end test stops
and starts the server behind a healthcheck, so it must come back on the same port, which
sdk_servers.py (a free port per run) does not do; the app itself is that script's, unchanged.

``--slow`` holds every ``tools/list`` request that long before the SDK answers it, so a check
takes seconds and a worker can be killed in the middle of its batch. ``GET /_e2e/held`` answers
how many requests are being held right now.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers" / "servers"))

from sdk_servers import BUILDERS, CURRENT


class Slow:
    """Wrap an ASGI app: hold each tools/list request ``delay`` seconds, count those held."""

    def __init__(self, app: Any, delay: float) -> None:
        self.app = app
        self.delay = delay
        self.held = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] == "/_e2e/held":
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": json.dumps(self.held).encode()})
            return
        if scope["method"] != "POST" or not self.delay:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if b'"tools/list"' in body:
            self.held += 1
            try:
                await asyncio.sleep(self.delay)
            finally:
                self.held -= 1
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("name", choices=sorted(BUILDERS))
    parser.add_argument("port", type=int)
    parser.add_argument("--slow", type=float, default=0.0)
    args = parser.parse_args()
    url = f"http://127.0.0.1:{args.port}"
    app = Slow(BUILDERS[args.name]({args.name: url, CURRENT: url}), args.slow)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", timeout_graceful_shutdown=1)


if __name__ == "__main__":
    main()
