"""Measure badge text as shields.io does: advance widths of Verdana at 11 px, per character.

shields.io (badge-maker) sizes a badge from a table of Verdana 11 px widths rather than from a
font on the server, so a badge has the same size everywhere. The widths below are Verdana's
advance widths at 11 px for printable ASCII and the ellipsis the badges cut with; any other
character counts as wide as an ``m``, as badge-maker guesses for a character it has no width
for, so an unusual name makes a badge a little wider, never clipped. Control characters
weigh nothing. tests/statuspages/test_badges_peer.py compares the results with badge-maker's.
"""

from __future__ import annotations

# Grouped by width: every character of a string has that width in pixels.
_GROUPS = {
    2.95: "'",
    3.02: "il",
    3.79: "j",
    3.87: " f",
    4.0: ",.",
    4.33: "!t",
    4.63: "I",
    4.69: "r",
    5.0: "()-/:;J[\\]|",
    5.05: '"',
    5.73: "cs",
    5.78: "z",
    6.0: "?",
    6.12: "L",
    6.32: "F",
    6.51: "kvxy",
    6.55: "e",
    6.61: "a",
    6.63: "P",
    6.68: "o",
    6.77: "Y",
    6.78: "T",
    6.85: "bdgpq",
    6.96: "Ehnu",
    6.98: "{}",
    6.99: "$*0123456789_`",
    7.52: "ASV",
    7.54: "BXZ",
    7.62: "K",
    7.65: "R",
    7.68: "C",
    7.99: "&",
    8.05: "U",
    8.23: "N",
    8.27: "H",
    8.48: "D",
    8.53: "G",
    8.66: "OQ",
    9.0: "#+<=>^w~…",
    9.27: "M",
    10.7: "m",
    10.88: "W",
    11.0: "@",
    11.84: "%",
}
VERDANA_11 = {char: width for width, chars in _GROUPS.items() for char in chars}
EM_WIDTH = VERDANA_11["m"]


def text_width(text: str) -> float:
    """Return the width of ``text`` in Verdana 11 px, in pixels."""
    total = 0.0
    for char in text:
        code = ord(char)
        if code <= 31 or code == 127:
            continue
        total += VERDANA_11.get(char, EM_WIDTH)
    return total


def preferred_width(text: str) -> int:
    """Return the whole-pixel width badge-maker gives ``text``: cut to an integer, then made odd.

    An odd width centres the text on a pixel (badge-maker: "increase chances of pixel grid alignment").
    """
    # The same float sum in the same order as badge-maker's, truncated as its `| 0` does.
    width = int(text_width(text))
    return width + 1 if width % 2 == 0 else width
