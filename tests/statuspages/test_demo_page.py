"""`make run` shows the demo organization's status page at a URL it prints."""

from __future__ import annotations

from monitors.services import demo_bootstrap
from monitors.signals import demo_ready
from statuspages.models import StatusPage


def announced(base_url: str = "http://127.0.0.1:8000") -> list[str]:
    lines = [line for _, line in demo_ready.send(sender=None, organization_slug="demo", base_url=base_url)]
    # Other apps announce their demo parts too (the directory): this page's line only.
    return [line for line in lines if line and line.startswith("Status page:")]


def test_the_demo_organization_gets_a_status_page_and_its_url_is_printed(db, client):
    demo_bootstrap()

    [line] = announced()

    assert line.startswith("Status page: http://127.0.0.1:8000/s/demo/ ")
    assert client.get("/s/demo/").status_code == 200


def test_a_second_start_keeps_the_one_page(db):
    demo_bootstrap()
    announced()

    assert announced() == announced()
    assert StatusPage.objects.filter(organization__slug="demo").count() == 1


def test_the_demo_keeps_a_page_its_owner_renamed(db):
    demo_bootstrap()
    announced()
    StatusPage.objects.filter(organization__slug="demo").update(slug="acme-status")

    [line] = announced()

    assert "/s/acme-status/" in line
