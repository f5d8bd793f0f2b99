"""Say what a server's directory badge shows: "MCP checks 19/22", coloured by the share passed."""

from __future__ import annotations

from monitors.badges import Badge, Color

LABEL = "MCP checks"
NOT_FOUND = Badge("MCP checks", "not found", Color.LIGHTGREY)
# The colours by the share of checks passed, best first: the lowest share (in %) each colour takes.
SHARE_COLORS = (
    (100, Color.BRIGHTGREEN),
    (75, Color.GREEN),
    (50, Color.YELLOW),
    (25, Color.ORANGE),
)


def checks_badge(passed: int | None, total: int | None) -> Badge:
    """Return the badge of ``passed`` of ``total`` checks; "not checked yet" before the first scorecard."""
    if passed is None or not total:
        return Badge(LABEL, "not checked yet", Color.LIGHTGREY)
    color = next((color for floor, color in SHARE_COLORS if passed * 100 >= floor * total), Color.RED)
    return Badge(LABEL, f"{passed}/{total}", color)
