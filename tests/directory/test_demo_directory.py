"""`make run` shows a directory built from recorded registry pages, imported once."""

from __future__ import annotations

import pytest

from directory.demo import demo_import
from directory.models import Listing, ListingScorecard
from monitors.services import demo_bootstrap
from monitors.signals import demo_ready
from tests.directory.factories import make_listing

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def demo_organization():
    demo_bootstrap()


def directory_lines(base_url: str = "http://127.0.0.1:8000") -> list[str]:
    lines = [line for _, line in demo_ready.send(sender=None, organization_slug="demo", base_url=base_url)]
    return [line for line in lines if line and line.startswith("MCP directory:")]


def test_the_directory_is_built_and_its_url_printed():
    [line] = directory_lines()

    assert line == (
        "MCP directory: http://127.0.0.1:8000/directory/ (JSON: http://127.0.0.1:8000/api/v1/directory/servers/)"
    )


def test_the_recorded_pages_hold_every_kind_of_listing_a_real_import_meets():
    demo_import()

    latest = Listing.objects.filter(is_latest=True)
    assert latest.filter(status="deleted").exists()
    assert latest.filter(status="deprecated").exclude(status_message="").exists()
    assert latest.filter(remotes__templated=True).exists()
    assert latest.filter(remotes__isnull=True).exists()  # local-only
    assert Listing.objects.filter(is_latest=False).exists()  # an older version


def test_every_shown_listing_gets_a_scorecard_and_the_hidden_ones_none():
    directory_lines()

    shown = Listing.objects.filter(is_latest=True).exclude(status="deleted")
    assert set(ListingScorecard.objects.values_list("listing_id", flat=True)) == set(
        shown.values_list("pk", flat=True)
    )


def test_a_second_start_imports_nothing_twice():
    directory_lines()
    before = (Listing.objects.count(), ListingScorecard.objects.count())

    directory_lines()

    assert (Listing.objects.count(), ListingScorecard.objects.count()) == before
    assert demo_import() == 0


def test_a_directory_already_synced_gets_no_demo_listings():
    make_listing("org.real/server")

    directory_lines()

    assert list(Listing.objects.values_list("name", flat=True)) == ["org.real/server"]


def test_the_demo_directory_page_lists_remote_servers_and_hides_the_deleted_one(client_anonymous):
    directory_lines()

    page = client_anonymous.get("/directory/").content.decode()

    assert "com.example/weather" in page
    assert "Moved to io.github.someone/new-tool" in page
    assert "com.shutdown/search" not in page
    assert "io.modelcontextprotocol/filesystem" not in page  # local-only: its own list
    assert (
        "io.modelcontextprotocol/filesystem"
        in client_anonymous.get("/directory/?kind=local").content.decode()
    )


def test_a_directory_synced_from_the_registry_gets_no_demo_listings(settings):
    settings.UPTIMY_MCP_REGISTRY_SYNC = True

    directory_lines()

    assert not Listing.objects.exists()
