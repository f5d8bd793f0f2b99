"""Share constants and small helpers between tests/peers' conftest and its test modules."""

from __future__ import annotations

import os
import socket
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SERVERS = HERE / "servers"
PEERS_DIR = Path(os.environ.get("UPTIMY_PEERS_DIR") or ROOT / "var" / "peers")
NODE22 = PEERS_DIR / "node_modules" / ".bin" / "node"
EVERYTHING_JS = (
    PEERS_DIR / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
)
CONFORMANCE_JS = PEERS_DIR / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"

# The bearer token that sdk_servers.py's protected servers accept (same value there).
GOOD_TOKEN = "uptimy-peer-token"


def free_port() -> int:
    """Return a loopback port that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
