"""Serialise a JSON answer canonically and name it with a strong ETag.

A strong ETag promises byte-for-byte equality (RFC 9110 §8.8.1), so it is a digest of the exact
body, and the body is written canonically (compact separators, UTF-8, keys in the order built) so the
same content always makes the same bytes and the same tag: a poller's ``If-None-Match`` then
gets a 304 until something on the page changes.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def json_body(payload: Any) -> bytes:
    """Return ``payload`` as compact UTF-8 JSON, the same bytes for the same content."""
    # Key order is the shapes' own (Statuspage's field order), kept as built, not sorted.
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode()
    except UnicodeEncodeError:
        # A lone surrogate has no UTF-8: escaped as \ud800 the body is still JSON, never a 500.
        return json.dumps(payload, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode()


def strong_etag(body: bytes) -> str:
    """Return a strong ETag for ``body``: a quoted SHA-256 digest of its bytes (128 bits kept)."""
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    """Return whether an ``If-None-Match`` header names ``etag`` (weak comparison, as RFC 9110 §13.1.2 asks)."""
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    wanted = etag.removeprefix("W/")
    return any(tag.strip().removeprefix("W/") == wanted for tag in if_none_match.split(","))
