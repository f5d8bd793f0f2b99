"""RFC 6238 TOTP written from the RFC's text for the tests, independent of pyotp (which the server uses).

HOTP (RFC 4226 section 5.3): HMAC-SHA-1 over the 8-byte big-endian counter, dynamic truncation
to 31 bits, modulo 10^digits; TOTP (RFC 6238 section 4): the counter is floor(unix time / 30).
Checked against the RFC's own test vectors in tests/monitors/test_two_factor.py.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import struct


def hotp(key: bytes, counter: int, *, digits: int = 6) -> str:
    """Return RFC 4226's HOTP value of ``counter`` under ``key``, zero-padded to ``digits``."""
    mac = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    binary = int.from_bytes(mac[offset : offset + 4], "big") & 0x7FFFFFFF
    return str(binary % 10**digits).zfill(digits)


def totp(secret_base32: str, timestamp: float, *, digits: int = 6, step: int = 30) -> str:
    """Return the TOTP code of a base32 secret (as an authenticator app is given it) at ``timestamp``."""
    cleaned = secret_base32.replace(" ", "").upper()
    key = base64.b32decode(cleaned + "=" * (-len(cleaned) % 8))
    return hotp(key, int(timestamp // step), digits=digits)
