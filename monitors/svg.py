"""Make customer text safe inside SVG: characters XML forbids removed, length capped, markup escaped.

A component's name is the customer's, and a name copied from a target can hold anything: a
``<script>``, quotes, a NUL, ten thousand characters. Every text an SVG here shows goes
through :func:`clean` once and :func:`escape` when written, so no name can end an attribute,
open an element, or make the document unparsable.
"""

from __future__ import annotations

import re

ELLIPSIS = "…"

# XML 1.0's Char production: C0 controls other than tab, newline and carriage return, the
# surrogates, and U+FFFE/U+FFFF may not appear in a document at all, not even escaped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_SPACES = re.compile(r"\s+")
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"})


def clean(text: str, limit: int) -> str:
    """Return ``text`` on one line, without characters XML forbids, cut to ``limit`` characters with an ellipsis."""
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    # Cut generously before the regexes, so a megabyte of name costs a few kilobytes of work.
    text = text[: limit * 4 + 16]
    text = _SPACES.sub(" ", _NOT_XML.sub("", text)).strip()
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + ELLIPSIS
    return text


def escape(text: str) -> str:
    """Return ``text`` escaped for an XML text node or a quoted attribute value."""
    return text.translate(_ESCAPES)


def number(value: float) -> str:
    """Return a coordinate with at most two decimals and no trailing zeros ("12", "12.5")."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text
