"""The public directory page and a server's page: order, search, kinds, 404s and 400s, query counts."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.utils.html import escape

from directory.models import Listing
from directory.query import Kind
from directory.selectors import directory_scorecards
from directory.services import registry_sync, scorecards_recompute
from monitors.scorecard import NAMES, RULES
from tests.conftest import NOW
from tests.directory.factories import make_card, make_listing
from tests.directory.support import page

pytestmark = pytest.mark.django_db


def names_on(response) -> list[str]:
    """Return the server names the directory page lists, in its order."""
    return re.findall(r'<a href="/directory/[^"]+/"><code>([^<]+)</code>', response.content.decode())


# Each row: name, passed, core, success ratio, p50 ms, p95 ms, observed hours ago. Expected order by name.
RANKED = [
    ("a.most/passed", 20, 1, 0.5, 3000.0, 3000.0, 48),
    ("b.more/core", 19, 4, 0.5, 3000.0, 3000.0, 48),
    ("c.better/success", 19, 3, 0.999, 3000.0, 3000.0, 48),
    ("d.faster/p50", 19, 3, 0.9, 100.0, 2000.0, 48),
    ("e.same-p50/faster-p95", 19, 3, 0.9, 900.0, 950.0, 48),
    ("f.same-p50/slower-p95", 19, 3, 0.9, 900.0, 2500.0, 48),
    ("g.recent/one", 19, 3, 0.9, None, None, 1),
    ("h.older/one", 19, 3, 0.9, None, None, 5),
    ("i.no/success", 19, 3, None, None, None, None),
]


@pytest.fixture
def ranked():
    for name, passed, core, ratio, p50, p95, hours in reversed(RANKED):
        make_card(
            make_listing(name),
            passed=passed,
            core_passed=core,
            success_ratio=ratio,
            p50_ms=p50,
            p95_ms=p95,
            observed_at=None if hours is None else NOW - timedelta(hours=hours),
        )


def test_servers_are_ranked_by_passed_core_success_p50_p95_then_recency(client_anonymous, ranked):
    response = client_anonymous.get("/directory/")

    assert response.status_code == 200
    assert names_on(response) == [row[0] for row in RANKED]


def test_a_server_is_ranked_once_its_first_scorecard_is_computed(client_anonymous, ranked):
    make_listing("a.new/listing")
    assert "a.new/listing" not in names_on(client_anonymous.get("/directory/"))

    scorecards_recompute(now=NOW)

    assert "a.new/listing" in names_on(client_anonymous.get("/directory/"))


@pytest.mark.parametrize(
    ("q", "found"),
    [
        ("weather", ["com.example/weather"]),  # the name
        ("FORECAST", ["com.example/weather"]),  # the description, case ignored
        ("Notebook", ["io.github.octocat/notes"]),  # the title
        ("  notes   ", ["io.github.octocat/notes"]),  # spaces trimmed
        ("io.", ["io.github.octocat/notes"]),  # dots are plain text
        ("%", []),  # no wildcard
        ("nothing-like-it", []),
        ("", ["com.example/weather", "io.github.octocat/notes"]),
    ],
)
def test_search_matches_name_title_or_description(client_anonymous, q, found):
    make_card(make_listing("com.example/weather", description="Forecasts for any city"), passed=1)
    make_card(make_listing("io.github.octocat/notes", title="Notebook"), passed=1)

    assert sorted(names_on(client_anonymous.get("/directory/", {"q": q}))) == found


def test_local_only_packages_are_ranked_apart(client_anonymous):
    make_card(make_listing("com.remote/server"), passed=3)
    make_card(make_listing("com.local/package", remote=False), passed=6, total=6)

    assert names_on(client_anonymous.get("/directory/")) == ["com.remote/server"]
    assert names_on(client_anonymous.get("/directory/?kind=local")) == ["com.local/package"]


def test_a_deprecated_server_is_listed_with_its_message(client_anonymous):
    make_card(
        make_listing(
            "com.old/server", status=Listing.Status.DEPRECATED, status_message="Moved to com.new/server"
        ),
        passed=1,
    )

    page = client_anonymous.get("/directory/").content.decode()

    assert "com.old/server" in page
    assert "Deprecated</span> Moved to com.new/server" in page


def test_a_server_deleted_by_a_sync_leaves_the_directory_at_once(client_anonymous, registry, sync_client):
    registry.serve(page("full-1"), page("full-2"))
    registry_sync(client=sync_client, full=True, now=NOW)
    scorecards_recompute(now=NOW)
    assert "com.acme/tenant-mcp" in names_on(client_anonymous.get("/directory/"))

    registry.serve(page("incremental"))  # deletes com.acme/tenant-mcp
    registry_sync(client=sync_client, full=False, now=NOW)

    assert "com.acme/tenant-mcp" not in names_on(client_anonymous.get("/directory/"))
    assert client_anonymous.get("/directory/com.acme/tenant-mcp/").status_code == 404
    assert client_anonymous.get("/directory/com.acme/tenant-mcp/badge.svg").status_code == 404


def test_a_new_version_replaces_the_old_ones_row_at_once(client_anonymous, registry, sync_client):
    registry.serve(page("full-1"), page("full-2"))
    registry_sync(client=sync_client, full=True, now=NOW)
    scorecards_recompute(now=NOW)

    registry.serve(page("incremental"))  # com.example/weather 2.2.0 is the latest now
    registry_sync(client=sync_client, full=False, now=NOW)

    assert "com.example/weather" not in names_on(client_anonymous.get("/directory/"))
    scorecards_recompute(now=NOW)
    assert names_on(client_anonymous.get("/directory/", {"q": "weather"})) == ["com.example/weather"]


def test_the_directory_is_paged(client_anonymous):
    for n in range(7):
        make_card(make_listing(f"com.n{n}/server"), passed=10 - n)

    first = client_anonymous.get("/directory/", {"page_size": 3})
    last = client_anonymous.get("/directory/", {"page_size": 3, "page": 3})

    assert names_on(first) == ["com.n0/server", "com.n1/server", "com.n2/server"]
    assert names_on(last) == ["com.n6/server"]
    assert "Page 1 of 3 (7 servers)" in first.content.decode()
    assert ">7</td>" in last.content.decode()  # its rank carries on from the pages before


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"page": "two"}, "page must be a whole number from 1 to 1000000, not &#x27;two&#x27;."),
        ({"page": "0"}, "page must be a whole number from 1 to 1000000, not 0."),
        ({"page": "-1"}, "page must be a whole number"),
        ({"page": "9" * 40}, "page must be a whole number"),
        ({"page_size": "201"}, "page_size must be a whole number from 1 to 200, not 201."),
        ({"kind": "hosted"}, "kind must be remote or local, not &#x27;hosted&#x27;."),
        ({"q": "x" * 201}, "q may be at most 200 characters, not 201."),
    ],
)
def test_a_bad_parameter_is_a_400_that_names_it(client_anonymous, params, message):
    response = client_anonymous.get("/directory/", params)

    assert response.status_code == 400
    assert message in response.content.decode()


def test_a_page_past_the_last_is_a_404_that_says_so(client_anonymous):
    make_listing("com.example/app")

    response = client_anonymous.get("/directory/", {"page": 2})

    assert response.status_code == 404
    assert "There is no page 2: this list has 1." in response.content.decode()


def test_a_nul_in_the_query_is_refused_not_a_500(client_anonymous):
    assert client_anonymous.get("/directory/?q=a%00b").status_code == 400


def test_the_directory_page_is_two_queries_whatever_its_length(client_anonymous, django_assert_num_queries):
    for n in range(60):
        make_card(make_listing(f"com.n{n}/server"), passed=n % 22)

    with django_assert_num_queries(2):  # the count and the page, scorecards joined
        response = client_anonymous.get("/directory/")

    assert len(names_on(response)) == 50


# --- a server's page ---------------------------------------------------------------------------


@pytest.fixture
def weather():
    listing = make_listing(
        "com.example/weather", title="Example Weather", description="Forecasts for any city"
    )
    Listing.objects.filter(pk=listing.pk).update(
        website_url="https://www.example.com/weather", repository_url="https://github.com/example/weather"
    )
    scorecards_recompute(now=NOW - timedelta(days=2))
    return listing


def test_the_server_page_states_each_checks_rule_result_and_evidence(client_anonymous, weather):
    response = client_anonymous.get("/directory/com.example/weather/")

    page = response.content.decode()
    assert response.status_code == 200
    for number in range(1, 23):
        assert NAMES[number] in page
        assert escape(RULES[number]) in page
    assert "The website is on example.com" in page  # check 18's reason
    assert "<code>domain</code>: example.com" in page  # and its evidence


def test_results_older_than_24_hours_are_labelled_outdated(client_anonymous, weather):
    page = client_anonymous.get("/directory/com.example/weather/").content.decode()

    # Computed two days ago: every dated result is outdated now.
    assert '<span class="outdated">Outdated check</span>' in page


def test_a_deprecated_servers_page_shows_its_message(client_anonymous):
    make_listing("com.old/server", status=Listing.Status.DEPRECATED, status_message="Moved to com.new/server")

    assert "Moved to com.new/server" in client_anonymous.get("/directory/com.old/server/").content.decode()


def test_a_server_not_scored_yet_says_so(client_anonymous):
    make_listing("com.new/server")

    assert "Not checked yet" in client_anonymous.get("/directory/com.new/server/").content.decode()


@pytest.mark.parametrize(
    "path",
    [
        "/directory/com.unknown/server/",
        "/directory/com.gone/server/",  # deleted
        "/directory/com.old/server/",  # only an older version: not the latest
    ],
)
def test_an_unknown_or_deleted_server_is_a_404_that_names_it(client_anonymous, path):
    make_listing("com.gone/server", status=Listing.Status.DELETED)
    make_listing("com.old/server", latest=False)

    response = client_anonymous.get(path)

    assert response.status_code == 404
    name = path.removeprefix("/directory/").rstrip("/")
    assert f"No server named “{name}” is listed in the directory." in response.content.decode()


def test_a_name_with_dots_and_a_percent_encoded_slash_reaches_its_page(client_anonymous):
    make_listing("io.github.some.one/my.server")

    assert client_anonymous.get("/directory/io.github.some.one/my.server/").status_code == 200
    assert client_anonymous.get("/directory/io.github.some.one%2Fmy.server/").status_code == 200


def test_the_server_page_is_a_fixed_few_queries(client_anonymous, weather, django_assert_num_queries):
    with django_assert_num_queries(2):  # the listing with its scorecard, its remotes
        client_anonymous.get("/directory/com.example/weather/")


def test_the_pages_need_no_sign_in_and_are_cacheable(client_anonymous, weather):
    for path in ("/directory/", "/directory/com.example/weather/"):
        response = client_anonymous.get(path)
        assert response.status_code == 200
        assert "public" in response["Cache-Control"]


def test_only_get_and_head(client_anonymous, weather):
    assert client_anonymous.post("/directory/").status_code == 405
    assert client_anonymous.head("/directory/com.example/weather/").status_code == 200


def test_every_check_has_a_rule():
    assert set(RULES) == set(NAMES)


def test_postgresql_reads_a_page_in_the_ranking_indexs_order(postgres):
    for n in range(3):
        make_card(make_listing(f"com.n{n}/server"), passed=n)
    with connection.cursor() as cursor:
        # Three rows would be read whole; the plan for 10,000 is the index's.
        cursor.execute("SET LOCAL enable_seqscan = off")
        plan = directory_scorecards(kind=Kind.REMOTE)[:50].explain()

    assert "scorecard_rank" in plan
    assert "Sort" not in plan  # read in the index's order, never sorted
