"""A heartbeat in a real browser: created from the dashboard, pinged by a real HTTP request, its ping shown.

Debian's Chromium through Playwright (tests/browser_support.py), against the live server; the
ping is a plain HTTP request from outside the browser, as a customer's cron job makes it.
"""

from __future__ import annotations

import urllib.request

import pytest

from tests.web.test_web_browser import app, axe_violations, page, scanned_page, sign_in, sign_up  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def test_a_heartbeat_s_page_shows_a_ping_its_job_sent_to_the_copied_url(page, scanned_page, app):  # noqa: F811
    from playwright.sync_api import expect

    sign_up(page, app, "hb@example.com")
    page.get_by_role("navigation", name="New healthcheck").get_by_role("link", name="Heartbeat").click()
    # The heartbeat tab shows only what means something for it: no interval, regions nor Test now.
    expect(page.get_by_label("Interval (seconds)")).to_have_count(0)
    expect(page.get_by_role("button", name="Test now")).to_have_count(0)
    page.get_by_label("Name", exact=True).fill("Nightly backup")
    page.get_by_label("Schedule").fill('{"cron": "0 3 * * *", "tz": "Europe/Paris"}')
    page.get_by_role("button", name="Create healthcheck").click()
    expect(page.get_by_role("heading", name="Nightly backup")).to_be_visible()
    expect(page.get_by_text("No ping yet")).to_be_visible()

    # The curl line, as the page shows it (selectable text), and the Copy button (copy.js) copies it.
    line = page.locator("#ping-success").inner_text()
    assert line.startswith("curl -fsS -m 10 --retry 5 -o /dev/null http")
    expect(page.locator("#ping-crontab")).to_contain_text("CRON_TZ=Europe/Paris\n0 3 * * * curl")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.get_by_role("button", name="Copy line").click()
    expect(page.get_by_role("status").filter(has_text="Copied.")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == line

    # The job's ping: a real HTTP request to the URL copied, with a body the page must escape.
    url = line.split()[-1]
    request = urllib.request.Request(url + "/0", data=b"3 files\n<b>saved</b>", method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:  # the live server's own URL
        assert (answer.status, answer.read()) == (200, b"OK")

    # The 5 s refresh brings it in, without a reload.
    row = page.locator("table.pings tbody tr")
    expect(row).to_have_count(1, timeout=15_000)
    expect(row).to_contain_text("Exit status 0")
    expect(row).to_contain_text("127.0.0.1")
    expect(row.locator("pre.body")).to_have_text("3 files\n<b>saved</b>")

    sign_in(scanned_page, app, "hb@example.com")
    scanned_page.goto(page.url)
    expect(scanned_page.locator("table.pings tbody tr")).to_have_count(1)
    assert axe_violations(scanned_page) == []
    scanned_page.goto(f"{app}/app/healthchecks/new/?type=heartbeat")
    assert axe_violations(scanned_page) == []
