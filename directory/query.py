"""Read a directory request's query (``q``, ``kind``, ``page``, ``page_size``): one rule set for the page and the API.

Pure: a mapping of strings in, a :class:`DirectoryQuery` out, or :class:`QueryInvalid` naming the
parameter and the problem (the page answers it as a 400 page, the API as its field error).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

QUERY_MAX = 200
PAGE_SIZE = 50
PAGE_SIZE_MAX = 200
PAGE_MAX = 1_000_000


class Kind(StrEnum):
    """Which listings a directory page ranks: remote servers, or local-only packages (never ranked together)."""

    REMOTE = "remote"
    LOCAL = "local"


class QueryInvalid(ValueError):
    """A query parameter the directory can't use: ``field`` names it, the message says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True, slots=True)
class DirectoryQuery:
    q: str = ""
    kind: Kind = Kind.REMOTE
    page: int = 1
    page_size: int = PAGE_SIZE


def _whole(params: Mapping[str, str], field: str, default: int, maximum: int) -> int:
    raw = params.get(field)
    if raw is None or raw == "":
        return default
    if not (raw.isascii() and raw.isdigit()) or len(raw) > len(str(maximum)):
        raise QueryInvalid(field, f"{field} must be a whole number from 1 to {maximum}, not {raw[:20]!r}.")
    value = int(raw)
    if not 1 <= value <= maximum:
        raise QueryInvalid(field, f"{field} must be a whole number from 1 to {maximum}, not {value}.")
    return value


def directory_query(params: Mapping[str, str]) -> DirectoryQuery:
    """Return the directory query ``params`` ask for; raise QueryInvalid for a parameter it can't use."""
    q = " ".join((params.get("q") or "").split())
    if len(q) > QUERY_MAX:
        raise QueryInvalid("q", f"q may be at most {QUERY_MAX} characters, not {len(q)}.")
    raw_kind = params.get("kind") or Kind.REMOTE.value
    try:
        kind = Kind(raw_kind)
    except ValueError:
        raise QueryInvalid("kind", f"kind must be remote or local, not {raw_kind[:20]!r}.") from None
    return DirectoryQuery(
        q=q,
        kind=kind,
        page=_whole(params, "page", 1, PAGE_MAX),
        page_size=_whole(params, "page_size", PAGE_SIZE, PAGE_SIZE_MAX),
    )
