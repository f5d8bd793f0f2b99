"""Read the fenced blocks of a Markdown page: the README test and the docs examples test share this.

Standard library only: tests/readme/run_readme.py imports it before any venv exists. A fence is
a line starting with three backticks; the block runs to the next such line (the pages nest no
fences). ``lines`` are a page's ``str.splitlines()``; line indexes are 0-based.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Block:
    """One fenced block: its info string (```sh: "sh"), its lines, where it opens and closes."""

    info: str
    lines: tuple[str, ...]
    start: int  # index of the opening fence
    end: int  # index of the closing fence

    @property
    def body(self) -> str:
        return "\n".join(self.lines)


def fence_at(lines: list[str], start: int, where: str) -> Block:
    """Return the block whose opening fence is ``lines[start]``.

    ``where`` names the page in errors: a missing opening fence or a block never closed is a
    ValueError naming the page and the 1-based line.
    """
    if start >= len(lines) or not lines[start].startswith("```"):
        raise ValueError(f"{where}:{start}: the marker is not followed by a fenced block")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("```")), None)
    if end is None:
        raise ValueError(f"{where}:{start + 1}: the marked block is never closed")
    return Block(lines[start][3:].strip(), tuple(lines[start + 1 : end]), start, end)


def next_fence(lines: list[str], after: int, where: str) -> Block:
    """Return the block opening on the first non-blank line after ``lines[after]``."""
    start = next((i for i in range(after + 1, len(lines)) if lines[i].strip()), len(lines))
    return fence_at(lines, start, where)


def marked_blocks(lines: list[str], is_marker: Callable[[str], bool], where: str) -> list[tuple[int, Block]]:
    """Return (marker index, block) for every line ``is_marker`` accepts, its block right below it."""
    return [(index, fence_at(lines, index + 1, where)) for index, line in enumerate(lines) if is_marker(line)]
