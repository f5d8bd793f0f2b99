"""A server's "MCP checks 19/22" badge: what it says, its colour, and how it is cached."""

from __future__ import annotations

import pytest

from directory.badge import checks_badge
from directory.models import Listing
from monitors.badges import Color
from tests.directory.factories import make_card, make_listing
from tests.statuspages.svg_support import parse

pytestmark = pytest.mark.django_db

BADGE = "/directory/com.example/weather/badge.svg"


@pytest.mark.parametrize(
    ("passed", "total", "message", "color"),
    [
        (22, 22, "22/22", Color.BRIGHTGREEN),
        (21, 22, "21/22", Color.GREEN),
        (17, 22, "17/22", Color.GREEN),  # 77 %
        (16, 22, "16/22", Color.YELLOW),  # 72 %
        (11, 22, "11/22", Color.YELLOW),  # 50 % exactly
        (10, 22, "10/22", Color.ORANGE),
        (6, 22, "6/22", Color.ORANGE),  # 27 %
        (5, 22, "5/22", Color.RED),
        (0, 22, "0/22", Color.RED),
        (6, 6, "6/6", Color.BRIGHTGREEN),  # a local-only package
        (None, None, "not checked yet", Color.LIGHTGREY),
    ],
)
def test_the_badge_says_passed_of_total_coloured_by_the_share(passed, total, message, color):
    badge = checks_badge(passed, total)

    assert (badge.label, badge.message, badge.color) == ("MCP checks", message, color)


def test_the_badge_is_an_svg_saying_the_servers_checks(client_anonymous):
    make_card(make_listing("com.example/weather"), passed=19)

    response = client_anonymous.get(BADGE)

    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml; charset=utf-8"
    svg = parse(response.content.decode())
    assert svg.get("aria-label") == "MCP checks: 19/22"


def test_the_badge_is_cacheable_and_answers_304_to_its_etag(client_anonymous):
    make_card(make_listing("com.example/weather"), passed=19)

    first = client_anonymous.get(BADGE)
    again = client_anonymous.get(BADGE, HTTP_IF_NONE_MATCH=first["ETag"])

    assert first["Cache-Control"] == "public, max-age=300"
    assert first["ETag"].startswith('"')
    assert len(first["ETag"]) == 34
    assert (again.status_code, again.content) == (304, b"")


def test_a_changed_score_changes_the_etag(client_anonymous):
    card = make_card(make_listing("com.example/weather"), passed=19)
    before = client_anonymous.get(BADGE)["ETag"]
    card.passed = 20
    card.save()

    after = client_anonymous.get(BADGE, HTTP_IF_NONE_MATCH=before)

    assert after.status_code == 200
    assert after["ETag"] != before


def test_a_server_not_scored_yet_has_a_grey_badge(client_anonymous):
    make_listing("com.example/weather")

    response = client_anonymous.get(BADGE)

    assert (response.status_code, parse(response.content.decode()).get("aria-label")) == (
        200,
        "MCP checks: not checked yet",
    )


@pytest.mark.parametrize("status", [Listing.Status.DELETED, None])
def test_an_unknown_or_deleted_servers_badge_is_a_404_badge_never_cached(client_anonymous, status):
    if status:
        make_card(make_listing("com.example/weather", status=status), passed=19)

    response = client_anonymous.get(BADGE)

    assert response.status_code == 404
    assert response["Cache-Control"] == "no-store"
    assert parse(response.content.decode()).get("aria-label") == "MCP checks: not found"


def test_the_badge_is_one_query(client_anonymous, django_assert_num_queries):
    make_card(make_listing("com.example/weather"), passed=19)

    with django_assert_num_queries(1):
        client_anonymous.get(BADGE)


def test_head_answers_the_headers_without_the_body(client_anonymous):
    make_card(make_listing("com.example/weather"), passed=19)

    response = client_anonymous.head(BADGE)

    assert (response.status_code, response.content) == (200, b"")
    assert int(response["Content-Length"]) > 0
