from rest_framework.pagination import CursorPagination, PageNumberPagination


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


class ResultPagination(CursorPagination):
    """Page through results by slot, newest first: stable under inserts, no COUNT(*) of a big table."""

    ordering = ("-slot", "-attempt", "-id")
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000
