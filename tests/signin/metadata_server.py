"""Serve Client ID Metadata Documents over real TLS on loopback, as an assistant's vendor does on its site.

A throwaway certificate authority (trustme) signs the server's certificate for 127.0.0.1; Uptimy's
fetcher trusts it only through its CA setting (``UPTIMY_OAUTH_CLIENT_METADATA_CA_FILE``) or the
SSL context a test passes. Each path answers as a test sets it (status, headers, body, or hang
until released), and every request is recorded, so a test can count fetches and read what was sent.
"""

from __future__ import annotations

import json
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import trustme


@dataclass
class Answer:
    """What one path answers."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})
    # When set, the answer waits for ``release`` (a slow host), never for a fixed time.
    hang: bool = False
    # Sent in 1 KiB chunks with no Content-Length: the size is known only by reading.
    chunked: bool = False


@dataclass(frozen=True)
class Seen:
    """One request the server received: its path and headers (names lower-cased)."""

    path: str
    headers: dict[str, str]


class MetadataServer:
    """An https server on 127.0.0.1 serving documents at paths a test chooses."""

    def __init__(self, directory: Path) -> None:
        self.ca = trustme.CA()
        self.ca_file = directory / "metadata-ca.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_file))
        server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert("127.0.0.1").configure_cert(server_context)
        self.answers: dict[str, Answer] = {}
        self.seen: list[Seen] = []
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                server.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}))
                answer = server.answers.get(self.path, Answer(status=404, body=b"not here"))
                if answer.hang:
                    server.release.wait(30)
                    return
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                if answer.chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for start in range(0, len(answer.body), 1024):
                        piece = answer.body[start : start + 1024]
                        self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.write(b"0\r\n\r\n")
                    return
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.socket = server_context.wrap_socket(self.httpd.socket, server_side=True)
        self.base = f"https://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def client_context(self) -> ssl.SSLContext:
        """Return a client context trusting this server's CA alone."""
        context = ssl.create_default_context()
        self.ca.configure_trust(context)
        return context

    def url(self, path: str) -> str:
        return self.base + path

    def serve(self, path: str, answer: Answer) -> str:
        """Answer ``path`` with ``answer``; return its URL."""
        self.answers[path] = answer
        return self.url(path)

    def serve_document(self, path: str, *, cache_control: str | None = None, **fields: Any) -> str:
        """Serve a valid public client's document at ``path`` (``fields`` override or add); return its URL."""
        url = self.url(path)
        document: dict[str, Any] = {
            "client_id": url,
            "client_name": "Document Assistant",
            "redirect_uris": ["http://127.0.0.1:33418/callback"],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        }
        document.update(fields)
        headers = {"Content-Type": "application/json"}
        if cache_control is not None:
            headers["Cache-Control"] = cache_control
        return self.serve(path, Answer(body=json.dumps(document).encode(), headers=headers))

    def fetches_of(self, path: str) -> int:
        return sum(1 for seen in self.seen if seen.path == path)

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
