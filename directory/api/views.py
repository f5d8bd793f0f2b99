"""The directory's public JSON: /api/v1/directory/servers/ (ranked, searchable, paged) and one server.

Public and read-only: no key, limited per client address (``UPTIMY_ANON_API_RATE``), the API's
pagination and error shapes. A bad parameter is a 400 naming it; an unknown or deleted server a 404.
"""

from __future__ import annotations

from django.urls import reverse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from directory import selectors
from directory.api.serializers import (
    ServerDetailSerializer,
    ServerSerializer,
    server_data,
    server_detail_data,
)
from directory.query import PAGE_SIZE_MAX, QUERY_MAX, Kind, QueryInvalid, directory_query
from monitors.api.pagination import Pagination
from monitors.api.throttling import AnonymousRateThrottle


class PublicView(APIView):
    authentication_classes = ()
    permission_classes = (AllowAny,)
    throttle_classes = (AnonymousRateThrottle,)


def _base(request: Request) -> str:
    return request.build_absolute_uri(reverse("directory:index"))


class DirectoryPagination(Pagination):
    max_page_size = PAGE_SIZE_MAX


@extend_schema_view(
    get=extend_schema(
        operation_id="directory_servers_list",
        summary="List the directory's servers, ranked by their scorecards",
        parameters=[
            OpenApiParameter(
                "q",
                OpenApiTypes.STR,
                description=f"Search names, titles and descriptions (at most {QUERY_MAX} characters).",
            ),
            OpenApiParameter(
                "kind",
                OpenApiTypes.STR,
                enum=[kind.value for kind in Kind],
                description="remote (default) or local-only packages: never ranked together.",
            ),
            OpenApiParameter("page", OpenApiTypes.INT),
            OpenApiParameter("page_size", OpenApiTypes.INT, description=f"1 to {PAGE_SIZE_MAX}, default 50."),
        ],
        responses={200: ServerSerializer(many=True)},
        auth=[],
        tags=["directory"],
    )
)
class ServerListView(PublicView):
    """Rank the listed servers: passed checks, core checks (1–4), sampled success, p50 then p95 latency (lower first), recency."""

    def get(self, request: Request) -> Response:
        try:
            query = directory_query(request.query_params)
        except QueryInvalid as problem:
            raise ValidationError({problem.field: [problem.message]}) from None
        paginator = DirectoryPagination()
        page = paginator.paginate_queryset(
            selectors.directory_scorecards(kind=query.kind, query=query.q), request, view=self
        )
        base = _base(request)
        items = [server_data(card.listing, card, remote=card.remote, base=base) for card in page or []]
        return paginator.get_paginated_response([ServerSerializer(item).data for item in items])


@extend_schema_view(
    get=extend_schema(
        operation_id="directory_servers_retrieve",
        summary="Show one listed server with each of its checks",
        parameters=[
            OpenApiParameter(
                "name",
                OpenApiTypes.STR,
                OpenApiParameter.PATH,
                description="The registry's server name, namespace/name (its slash as it is, or %2F).",
            )
        ],
        responses={200: ServerDetailSerializer},
        auth=[],
        tags=["directory"],
    )
)
class ServerDetailView(PublicView):
    """A listed server, its endpoints and its scorecard's checks (rule, verdict, date, freshness, evidence)."""

    def get(self, request: Request, name: str) -> Response:
        listing = selectors.listing_by_name(name)
        if listing is None:
            raise NotFound(f"No server named “{name[:200]}” is listed in the directory.")
        card = selectors.scorecard_of(listing)
        now = timezone.now()
        rows = selectors.check_rows(card, now=now) if card else []
        return Response(server_detail_data(listing, card, rows, base=_base(request), now=now))
