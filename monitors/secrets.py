"""Encrypt and decrypt stored secrets (header values, alert channels' configs) with UPTIMY_SECRETS_KEY.

Fernet (AES-128-CBC + HMAC) from ``cryptography``; the configured passphrase is stretched to a
Fernet key with SHA-256 so operators may set any string. Several comma-separated keys rotate:
the first encrypts, all decrypt.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

MASK = "********"


class SecretUnreadable(Exception):
    """Stored secret can't be decrypted with any configured key (rotated away or corrupt)."""


@lru_cache(maxsize=4)
def _cipher(keys: str) -> MultiFernet:
    fernets = [
        Fernet(base64.urlsafe_b64encode(hashlib.sha256(key.strip().encode()).digest()))
        for key in keys.split(",")
        if key.strip()
    ]
    return MultiFernet(fernets)


def encrypt_document(document: object) -> str:
    """Return the ciphertext of a JSON-serializable ``document``."""
    plain = json.dumps(document, separators=(",", ":")).encode()
    return _cipher(settings.UPTIMY_SECRETS_KEY).encrypt(plain).decode()


def decrypt_document(token: str, *, what: str, max_age: int | None = None) -> Any:
    """Return the JSON document stored in ``token``; raise SecretUnreadable (naming ``what``) if no key opens it.

    With ``max_age`` (seconds), a token encrypted longer ago than that is refused too.
    """
    try:
        # A token is ASCII (URL-safe base64); anything else, a lone surrogate from a form field
        # included, is no token rather than an encoding error.
        plain = _cipher(settings.UPTIMY_SECRETS_KEY).decrypt(token.encode("ascii"), ttl=max_age)
    except (InvalidToken, UnicodeEncodeError):
        raise SecretUnreadable(f"stored {what} can't be decrypted with UPTIMY_SECRETS_KEY") from None
    return json.loads(plain)


def encrypt_headers(headers: dict[str, str]) -> str:
    """Return the ciphertext of ``headers`` (empty string for none, so nothing is stored)."""
    if not headers:
        return ""
    return encrypt_document(list(headers.items()))


def decrypt_headers(token: str) -> dict[str, str]:
    """Return the headers stored in ``token``; raise SecretUnreadable if no key opens it."""
    if not token:
        return {}
    return dict(decrypt_document(token, what="header values"))


def with_secret_headers(config: Mapping[str, Any], token: str) -> dict[str, Any]:
    """Return a stored config with its header values decrypted into ``headers``, ready to parse.

    A check type without headers (TLS, TCP, DNS, ping, domain, heartbeat) stores no ``headers``
    key and gets none, which its parser would refuse as an unknown field. Raises SecretUnreadable as decrypt_headers does.
    """
    if "headers" not in config and not token:
        return dict(config)
    return {**config, "headers": decrypt_headers(token)}


def masked(headers: dict[str, str]) -> dict[str, str]:
    """Return the header names with every value replaced by the mask."""
    return {name: MASK for name in headers}
