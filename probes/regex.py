"""Compile the regular expressions customers write (HTTP assertions, TCP ``expect``) with RE2.

A customer's pattern runs against text a target sends, inside a worker's event loop, so its
matching time must not depend on how the two are shaped. Python's ``re`` backtracks: ``(a|a)*b``
or ``(x+x+)+y`` against a long run of ``a`` or ``x`` takes exponential time, and no length cap or
shape check catches every such pattern. RE2 (``google-re2``) matches in time linear in the text,
whatever the pattern, and bounds the memory a compiled pattern may use. Its syntax is Perl's
without backreferences (``\\1``), lookaround (``(?=``, ``(?!``, ``(?<=``, ``(?<!``), possessive
repeats and atomic groups: those are refused when the check is saved, with a sentence saying so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import re2

# What a compiled pattern may take (RE2's default is 8 MiB): a few hundred characters never need more.
MAX_PROGRAM_BYTES = 8 << 20
UNSUPPORTED = (
    "Uptimy matches with RE2, which runs in linear time and has no backreferences (\\1), "
    "lookahead or lookbehind ((?=…), (?!…), (?<=…), (?<!…)), possessive repeats or atomic groups"
)


# RE2's words for the Perl features it leaves out (\1, (?=…), a++): the refusal says why.
_UNSUPPORTED_ERRORS = ("invalid escape sequence", "invalid perl operator", "bad repetition operator")


class RegexRefused(ValueError):
    """Say why a pattern is no regular expression Uptimy runs; the message is a sentence for the API."""


@dataclass(frozen=True, slots=True)
class Regex:
    """One compiled pattern: equal to another by its text, searched in linear time."""

    pattern: str
    _compiled: Any = field(compare=False, repr=False)

    def search(self, text: str) -> bool:
        """Return whether the pattern matches somewhere in ``text`` (``^`` anchors its start)."""
        return self._compiled.search(text) is not None


def _options() -> Any:
    options = re2.Options()
    # A refused pattern is the customer's 400, not a line on the server's stderr.
    options.log_errors = False
    options.max_mem = MAX_PROGRAM_BYTES
    return options


_OPTIONS = _options()


def compile_regex(pattern: str) -> Regex:
    """Return ``pattern`` compiled; raise RegexRefused naming what is wrong with it."""
    try:
        compiled = re2.compile(pattern, options=_OPTIONS)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else ""
        words = detail.decode("utf-8", errors="replace") if isinstance(detail, bytes) else str(detail)
        if words.startswith(_UNSUPPORTED_ERRORS):
            raise RegexRefused(f"Not a regular expression Uptimy can run ({words}). {UNSUPPORTED}.") from None
        raise RegexRefused(f"Not a valid regular expression ({words}).") from None
    return Regex(pattern, compiled)
