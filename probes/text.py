"""Make text that came from outside storable and printable: a target's answers, a request's strings.

A NUL can't be stored in a PostgreSQL text column and a lone UTF-16 surrogate can be stored
nowhere (SQLite and jsonb refuse to encode it), so one such character from one target would fail
a whole batch's statement, and printing one fails a command. The engine's runner passes every
text of an outcome through :func:`storable` as the check ends (``probes.runner.finish_outcome``),
recording cuts each to its column with it, and the API refuses such text instead
(:func:`text_fault`), naming the field.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable

# Every surrogate code point: in a Python str a surrogate is always "lone", since a pair
# decoded from JSON or UTF-16 is one astral character.
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def storable(text: str, limit: int | None = None) -> str:
    """Return ``text`` without NUL, each lone surrogate replaced by U+FFFD, cut to ``limit`` characters."""
    # isascii() is a C scan of the whole string: most text skips the regex entirely.
    if not text.isascii():
        text = _SURROGATE.sub(REPLACEMENT, text)
    if "\x00" in text:
        text = text.replace("\x00", "")
    if limit is not None and len(text) > limit:
        text = text[:limit]
    return text


def is_storable(text: str) -> bool:
    """Return whether ``text`` holds neither NUL nor a lone surrogate (a cut aside, storable() keeps it)."""
    return "\x00" not in text and (text.isascii() or _SURROGATE.search(text) is None)


def text_fault(text: str) -> str | None:
    """Return what makes ``text`` unstorable, as the end of a sentence ("a NUL character"), or None."""
    if "\x00" in text:
        return "a NUL character (\\u0000)"
    if not text.isascii():
        found = _SURROGATE.search(text)
        if found is not None:
            return f"an unpaired surrogate (\\u{ord(found.group()):04x})"
    return None


def storable_json(value: object, clean: Callable[[str], str] = storable) -> object:
    """Return a JSON value with ``clean`` applied to every string and key, and non-finite numbers as null.

    A target's JSON (a tool's inputSchema) reaches a jsonb column, which refuses NUL and lone
    surrogates even as ``\\u`` escapes, and JSON text, which has no NaN or Infinity (Python's
    parser accepts them). The engine reads JSON at most MAX_JSON_DEPTH deep, so the recursion is
    bounded.
    """
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {clean(str(key)): storable_json(item, clean) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [storable_json(item, clean) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, bool | int | float):
        return value
    return clean(str(value))


def json_text(value: object) -> str:
    """Return the compact JSON text of a value :func:`storable_json` made: key order kept, non-ASCII as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
