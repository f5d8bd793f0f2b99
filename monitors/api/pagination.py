"""Pages: numbered for healthchecks, cursors for a check's history (results, tool changes)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from django.utils import timezone
from django.utils.dateparse import parse_datetime
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination, PageNumberPagination
from rest_framework.request import Request

from probes.text import text_fault

if TYPE_CHECKING:
    from rest_framework.pagination import Cursor


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


class CheckedCursorPagination(CursorPagination):
    """Cursor pages whose cursor, a client's to forge, is checked before it reaches a query.

    DRF answers 404 to a cursor it can't decode and hands the position inside one to the
    database as it is: a forged position ("yesterday", a NUL, an offset PostgreSQL refuses)
    was a 500. Both are a 400 naming ``cursor`` here.
    """

    # The first ordering field is a time (a slot, a change's time): positions are checked as one.
    time_position = True

    def decode_cursor(self, request: Request) -> Cursor | None:
        try:
            cursor = super().decode_cursor(request)
        except NotFound:
            raise _bad_cursor("it can't be decoded") from None
        if cursor is None or cursor.position is None:
            return cursor
        position = str(cursor.position)
        fault = text_fault(position)
        if fault is not None:
            raise _bad_cursor(f"its position holds {fault}")
        if self.time_position:
            # str(), as DRF writes a position into the cursors it makes and compares them.
            position = str(_moment(position))
        # The stub types a position as int; DRF's are the str() of the ordering field's value.
        return cursor._replace(position=position)  # type: ignore[arg-type]


def _moment(raw: str) -> datetime:
    """Return a cursor's time position in UTC, the only form the database is handed."""
    try:
        moment = parse_datetime(raw)
    except ValueError:
        moment = None
    if moment is None or timezone.is_naive(moment):
        raise _bad_cursor("its position is not a time with a UTC offset")
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise _bad_cursor("its position is out of range") from None


def _bad_cursor(why: str) -> ValidationError:
    return ValidationError({"cursor": [f"Invalid cursor: {why}. Use the next or previous link of a page."]})


class ResultPagination(CheckedCursorPagination):
    """Page through results by slot, newest first: stable under inserts, no COUNT(*) of a big table."""

    ordering = ("-slot", "-attempt", "-id")
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


class ToolChangePagination(CheckedCursorPagination):
    """Page through tool changes, newest first; each change keeps at most 100 names per list.

    So one page is bounded: at most ``max_page_size`` changes of a few hundred short names each.
    """

    ordering = ("-at", "-id")
    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = 100
