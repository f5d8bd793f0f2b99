"""Serve one official-SDK server from tests/peers/servers/sdk_servers.py on a fixed loopback port.

Usage: ``python tests/e2e/mcp_peer.py NAME PORT [--slow SECONDS] [--refuse-regions-file PATH]``. The end-to-end test stops
and starts the server behind a healthcheck, so it must come back on the same port, which
sdk_servers.py (a free port per run) does not do; the app itself is that script's, unchanged.

``--slow`` holds every ``tools/list`` request that long before the SDK answers it, so a check
takes seconds and a worker can be killed in the middle of its batch. ``GET /_e2e/held`` answers
how many requests are being held right now.

``--refuse-regions-file`` cuts some of Uptimy's regions off: while PATH exists, a request whose
User-Agent names a region listed in it (``region eu-west;``, as probes.runner.user_agent writes
it; slugs separated by whitespace) gets a 503 instead of the SDK's answer, as from a load
balancer whose path from that region broke. The test writes and deletes the file.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers" / "servers"))

from sdk_servers import BUILDERS, CURRENT, read_body, send_json


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
            await send_json(send, self.held)
            return
        if scope["method"] != "POST" or not self.delay:
            await self.app(scope, receive, send)
            return
        body, replay = await read_body(receive)
        if b'"tools/list"' in body:
            self.held += 1
            try:
                await asyncio.sleep(self.delay)
            finally:
                self.held -= 1
        await self.app(scope, replay, send)


class RegionFault:
    """Wrap an ASGI app: answer 503 to the regions named in ``path`` while that file exists."""

    def __init__(self, app: Any, path: Path | None) -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and self._refused(scope):
            await send({"type": "http.response.start", "status": 503, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        await self.app(scope, receive, send)

    def _refused(self, scope: dict[str, Any]) -> bool:
        if self.path is None:
            return False
        try:
            regions = self.path.read_text().split()
        except FileNotFoundError:
            return False
        agent = dict(scope["headers"]).get(b"user-agent", b"").decode("latin-1")
        return any(f"region {region};" in agent for region in regions)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("name", choices=sorted(BUILDERS))
    parser.add_argument("port", type=int)
    parser.add_argument("--slow", type=float, default=0.0)
    parser.add_argument("--refuse-regions-file", type=Path)
    args = parser.parse_args()
    url = f"http://127.0.0.1:{args.port}"
    sdk = BUILDERS[args.name]({args.name: url, CURRENT: url})
    app = RegionFault(Slow(sdk, args.slow), args.refuse_regions_file)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", timeout_graceful_shutdown=1)


if __name__ == "__main__":
    main()
