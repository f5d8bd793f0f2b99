"""Find a customer's free-tier quote in their pricing page (scorecard check 12), and the rules of a listing's fields.

Pure: bytes and strings in, plain values out; no Django, no network. The fetcher
(:mod:`monitors.pagefetch`) hands over a page; :func:`find_quote` says whether the page's
visible text states the quote.

What counts as the page stating the quote:

- Visible text only: the HTML is parsed as a browser does (selectolax's Lexbor, HTML5), and
  ``<script>``, ``<style>``, ``<template>`` and elements with the ``hidden`` attribute are left
  out; entities are decoded by the parser. Plain text pages are read as they are; any other
  media type (PDF, images, JSON) is refused.
- Both sides are normalised alike (:func:`normalised`): Unicode NFKC, case folded, typographic
  quotes, apostrophes, dashes and ellipses as their ASCII forms, and whitespace ignored, since
  an element boundary (``<td>Free</td><td>tier</td>``, ``<b>$0</b>/month``) may or may not be
  a space on screen.

What counts as a quote stating free access (:func:`free_access_problem`, checked when the
customer saves it): it mentions "free" or "freemium" as a word of its own; "free" as the end
of a compound ("risk-free", "hands-free") and a free trial ("free trial", "free 14-day trial")
do not count, since a trial is time-limited access, not a free tier.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser

# What a page may weigh: pricing pages with their inline data are a few hundred KiB.
MAX_PAGE_BYTES = 2 * 1024 * 1024
MAX_PAGE_WORDS = "2 MiB"
# Lexbor builds the tree by the HTML standard, whose scope checks walk the stack of open
# elements: a page nesting 20,000 elements took it 1.8 s, 200,000 minutes. Browsers cap the depth
# (Chromium at 512); a page nesting deeper than this is refused before it is parsed.
MAX_NESTING = 1_000
QUOTE_MAX = 500
QUOTE_MIN = 4

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain"})
HIDDEN_SELECTOR = "[hidden]"
INVISIBLE_TAGS = ["script", "style", "template"]

# Typographic forms mapped to what a person types. NFKC already folds the ellipsis and the
# full-width forms; these have no compatibility decomposition.
_TYPOGRAPHIC = str.maketrans(
    {
        "\u2018": "'",  # left single quotation mark
        "\u2019": "'",  # right single quotation mark, the typographic apostrophe
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",  # prime
        "\u00b4": "'",
        "\u0060": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u2039": "'",
        "\u203a": "'",
        "\u2010": "-",  # hyphen
        "\u2011": "-",  # non-breaking hyphen
        "\u2012": "-",  # figure dash
        "\u2013": "-",  # en dash
        "\u2014": "-",  # em dash
        "\u2015": "-",
        "\u2212": "-",  # minus sign
        "\u00ad": None,  # soft hyphen: invisible
        "\u200b": None,  # zero-width space
        "\u200c": None,
        "\u200d": None,
        "\u2060": None,
        "\ufeff": None,
    }
)
_SPACE = re.compile(r"\s+")
_FREE = re.compile(r"(?<![\w-])free(?:mium)?(?!\w)")
_TRIAL = re.compile(r"[ -](?:\d+[- ]?(?:day|week|month)s?[- ])?trials?\b")


def normalised(text: str) -> str:
    """Return ``text`` as quotes are compared: NFKC, case folded, typographic marks plain, no whitespace."""
    plain = unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHIC).casefold()
    return _SPACE.sub("", plain)


def _words(text: str) -> str:
    """Return ``text`` normalised but with single spaces kept: for the free-access rule, which reads words."""
    plain = unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHIC).casefold()
    return _SPACE.sub(" ", plain).strip()


def free_access_problem(quote: str) -> str | None:
    """Return why the quote does not state free or freemium access, or None when it does.

    A "free" counts unless a trial follows it ("free trial", "free 14-day trial"); "freemium"
    always counts; "free" ending a compound ("risk-free") never does.
    """
    text = _words(quote)
    for match in _FREE.finditer(text):
        if match.group(0) == "freemium":
            return None
        if not _TRIAL.match(text, match.end()):
            return None
    if _FREE.search(text):
        return "A free trial is not free access: quote the page where it states a free tier or plan."
    return 'The quote must state free or freemium access (it should say "free" or "freemium").'


@dataclass(frozen=True, slots=True)
class Finding:
    """Whether the page states the quote; ``problem`` says why not (the page could not be read, or lacks it)."""

    found: bool
    problem: str = ""


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _charset(content_type: str) -> str | None:
    for part in content_type.split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            return value.strip().strip('"').lower()
    return None


def nesting_depth(html: str, *, limit: int = MAX_NESTING) -> int:
    """Return how deep the markup nests elements, counting at most past ``limit`` (linear in the text).

    An upper bound, read from the tags alone: a start tag opens, an end tag closes; void
    elements, self-closed ones and those the parser closes by itself (``p``, ``li``, table
    parts, …) are not counted; comments and the text of raw-text elements are skipped.
    """
    depth = deepest = 0
    position = 0
    lowered = html.lower()
    while True:
        start = lowered.find("<", position)
        if start < 0:
            return deepest
        if lowered.startswith("<!--", start):
            end = lowered.find("-->", start + 4)
            if end < 0:
                return deepest
            position = end + 3
            continue
        match = _TAG.match(lowered, start)
        if match is None:
            position = start + 1
            continue
        closing, name = match.group(1), match.group(2)
        end = lowered.find(">", match.end())
        if end < 0:
            return deepest
        position = end + 1
        if name in _RAW_TEXT and not closing:
            close = lowered.find(f"</{name}", position)
            position = len(lowered) if close < 0 else close
            continue
        if name in _UNCOUNTED:
            continue
        if closing:
            depth = max(0, depth - 1)
        elif lowered[end - 1] != "/":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest


_TAG = re.compile(r"<(/?)([a-z][a-z0-9-]*)")
_RAW_TEXT = frozenset({"script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes"})
_UNCOUNTED = frozenset(
    {
        # void elements
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr", "param", "keygen",
        # closed by the parser when a sibling starts
        "p", "li", "dd", "dt", "option", "optgroup", "tr", "td", "th", "tbody", "thead", "tfoot",
        "rb", "rt", "rp", "rtc", "colgroup", "caption", "html", "head", "body",
    }
)  # fmt: skip


def visible_text(body: bytes, content_type: str) -> str | Finding:
    """Return the page's visible text, or a Finding saying why it cannot be read."""
    if len(body) > MAX_PAGE_BYTES:
        return Finding(False, f"The page is larger than the {MAX_PAGE_WORDS} cap")
    media = _media_type(content_type)
    charset = _charset(content_type)
    if media in TEXT_TYPES:
        return _decoded(body, charset)
    if media not in HTML_TYPES:
        shown = media or "no media type"
        return Finding(False, f"The page is {shown}, not HTML or plain text")
    text = _decoded(body, charset) if charset else None
    sample = text if text is not None else body.decode("utf-8", "replace")
    if nesting_depth(sample) > MAX_NESTING:
        return Finding(False, f"The page nests its markup deeper than {MAX_NESTING:,} elements")
    # Without a charset in the header, the parser finds it as browsers do (BOM, <meta charset>).
    tree = LexborHTMLParser(text) if text is not None else LexborHTMLParser(body, encoding=True)
    tree.strip_tags(INVISIBLE_TAGS)
    for hidden in tree.css(HIDDEN_SELECTOR):
        hidden.decompose()
    root = tree.body
    return root.text(separator=" ") if root is not None else ""


def _decoded(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", "replace")
    except LookupError:  # a charset Python does not know: read it as UTF-8
        return body.decode("utf-8", "replace")


def find_quote(*, body: bytes, content_type: str, quote: str) -> Finding:
    """Return whether the page (its bytes and Content-Type) states ``quote`` in its visible text."""
    text = visible_text(body, content_type)
    if isinstance(text, Finding):
        return text
    wanted = normalised(quote)
    if wanted and wanted in normalised(text):
        return Finding(True)
    return Finding(False, "The page does not state the quote")
