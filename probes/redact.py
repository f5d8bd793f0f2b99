"""Keep a check's secrets (its header values) out of every text the check produces.

A server may echo what it was sent: in an error body, a JSON-RPC error message, its name, a tool
name. Texts are redacted *before* they are cut to length, so a key that straddles the cut is
never left in part; matching ignores case and also finds each secret's base64 and URL-encoded
forms (and, for a base64 token such as Basic credentials, its decoded text).

The check's :class:`Redactor` is installed for the duration of the check with
:func:`redacting` (a context variable, so concurrent checks on one event loop each see their
own); :func:`clip`, which every truncation of server text goes through, applies it.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Iterator
from contextvars import ContextVar
from urllib.parse import quote, quote_plus

from probes.types import Headers

REDACTED = "[redacted]"
# Shorter fragments ("on", "1") would redact ordinary words; a real key is longer than this.
MIN_SECRET = 4
_SCHEMES = frozenset({"bearer", "basic", "token", "apikey", "api-key", "key"})
_ELLIPSIS = "…"


class Redactor:
    """Replace every form of the given secrets in a text with ``[redacted]``."""

    def __init__(self, secrets: Iterator[str] | list[str]) -> None:
        forms = sorted({form for secret in secrets for form in _forms(secret)}, key=len, reverse=True)
        self._pattern = (
            re.compile("|".join(re.escape(form) for form in forms), re.IGNORECASE) if forms else None
        )

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __call__(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(REDACTED, text)

    def finds(self, text: str) -> bool:
        """Return whether ``text`` holds any form of a secret (what a call would replace)."""
        return self._pattern is not None and self._pattern.search(text) is not None


_NO_SECRETS = Redactor([])
_current: ContextVar[Redactor] = ContextVar("uptimy_redactor", default=_NO_SECRETS)


def redactor_for(headers: Headers) -> Redactor:
    """Return the redactor of a check's headers: each whole value and each word of it."""
    # Most checks have no headers: they share the one redactor that changes nothing.
    return _redactor_of(tuple(headers)) if headers else _NO_SECRETS


# A Redactor never changes, and building one (every form of every secret, then the pattern)
# costs tens of microseconds, several percent of a whole check: each distinct set of headers
# gets one per process, not one per run. The cache holds header values as the configs do.
@functools.lru_cache(maxsize=4096)
def _redactor_of(headers: Headers) -> Redactor:
    secrets: list[str] = []
    for _name, value in headers:
        for candidate in (value.strip(), *value.split()):
            if len(candidate) >= MIN_SECRET and candidate.lower() not in _SCHEMES:
                secrets.append(candidate)
    return Redactor(secrets) if secrets else _NO_SECRETS


def redacting(redactor: Redactor) -> _Redacting:
    """Apply ``redactor`` to every :func:`clip` and :func:`redact` in this context until the block ends."""
    return _Redacting(redactor)


class _Redacting:
    # A class rather than a contextlib.contextmanager generator: it is entered once per
    # check, and the generator-based one costs several times more.
    __slots__ = ("_redactor", "_token")

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor

    def __enter__(self) -> Redactor:
        self._token = _current.set(self._redactor)
        return self._redactor

    def __exit__(self, *exc_info: object) -> None:
        _current.reset(self._token)


def redact(text: str) -> str:
    """Return ``text`` with the current check's secrets replaced."""
    return _current.get()(text)


def clip(text: str, limit: int) -> str:
    """Return ``text`` redacted, then cut to ``limit`` characters (the last one an ellipsis when cut)."""
    # Redact a generous window, not the whole text: a 5 MiB body is never shown in full, and
    # a secret straddling the window's end is cut off by the limit below anyway.
    text = redact(text[: limit * 4 + 256])
    if len(text) > limit:
        return text[: limit - 1].rstrip() + _ELLIPSIS
    return text


def _forms(secret: str) -> set[str]:
    """Return the ways a server could echo ``secret``: as is, base64, URL-encoded, base64-decoded."""
    raw = secret.encode("utf-8", errors="surrogatepass")
    forms = {secret, quote(secret, safe=""), quote_plus(secret, safe="")}
    for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
        text = encoded.decode("ascii")
        forms.update((text, text.rstrip("=")))
    decoded = _base64_text(secret)
    if decoded is not None:
        forms.add(decoded)
        # Basic credentials: the password alone is as secret as the pair.
        forms.update(part for part in decoded.split(":", 1) if len(part) >= MIN_SECRET)
    return {form for form in forms if len(form) >= MIN_SECRET}


def _base64_text(token: str) -> str | None:
    """Return what a base64 token decodes to when that is printable text, else None."""
    try:
        data = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
        text = data.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return text if text.isprintable() and len(text) >= MIN_SECRET else None
