"""A status page in a real browser (Chromium through Playwright, tests/browser_support.py) from the live server.

The page is drawn on the server and needs no JavaScript: the same checks pass in a tab with
JavaScript off, and a private page's password form works there too. Every wait is
Playwright's auto-waiting on what the page shows, never a sleep.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.utils import timezone

from statuspages import services
from tests.statuspages.live_support import (
    ACTIVE_MAINTENANCE,
    OLD_TITLE,
    OUTAGE_TITLE,
    UPCOMING_MAINTENANCE,
    LivePage,
    live_page,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

PASSWORD = "a-page-password-42"


@pytest.fixture
def made(live_server, settings, org) -> LivePage:
    """Make the page; plain HTTP cookies, as a local try has."""
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False
    return live_page(org, now=timezone.now())


@pytest.fixture
def open_tab(chromium) -> Iterator[Callable[..., Any]]:
    """Return a factory of fresh tabs (JavaScript on or off); fail the test if a GET (the page, its CSS) answers 4xx/5xx."""
    contexts: list[Any] = []
    failed: list[str] = []

    def open_(*, javascript: bool = True) -> Any:
        context = chromium.new_context(java_script_enabled=javascript)
        context.set_default_timeout(20_000)
        contexts.append(context)
        tab = context.new_page()
        tab.on(
            "response",
            lambda answer: (
                failed.append(answer.url) if answer.status >= 400 and answer.request.method == "GET" else None
            ),
        )
        return tab

    yield open_
    for context in contexts:
        context.close()
    assert not failed, failed


def page_url(live_server, made: LivePage) -> str:
    return f"{live_server.url}/s/{made.page.slug}/"


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
def test_the_overall_status_incidents_and_maintenance_show(live_server, made, open_tab, javascript):
    from playwright.sync_api import expect

    tab = open_tab(javascript=javascript)
    tab.goto(page_url(live_server, made))

    expect(tab.get_by_role("status")).to_have_text("Partial System Outage")
    open_incident = tab.locator("article.incident", has_text=OUTAGE_TITLE)
    expect(open_incident.locator(".update-body")).to_have_text(
        ["A bad deploy; rolling back.", "Investigating errors on the API."]
    )
    expect(tab.locator("section.recent-incidents")).to_contain_text(OLD_TITLE)
    maintenances = tab.get_by_role("region", name="Scheduled maintenance")
    expect(maintenances.locator(".maintenance-title")).to_have_text(
        [ACTIVE_MAINTENANCE, UPCOMING_MAINTENANCE]
    )
    expect(maintenances.locator(f"article:has-text('{ACTIVE_MAINTENANCE}')")).to_contain_text("In progress")


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
def test_each_component_shows_its_status_and_ninety_day_bars(live_server, made, open_tab, javascript):
    from playwright.sync_api import expect

    tab = open_tab(javascript=javascript)
    tab.goto(page_url(live_server, made))

    components = tab.locator("div.component")
    expect(components.locator(".component-name")).to_have_text(["API", "Docs", "Search"])
    expect(components.locator(".component-head .status-label")).to_have_text(
        ["Major outage", "Operational", "Under maintenance"]
    )
    for name in ("API", "Docs", "Search"):
        strip = components.filter(has_text=name).get_by_role("img", name=f"{name}: 90 days")
        expect(strip).to_be_visible()
        expect(strip.locator("rect.bar")).to_have_count(90)


def test_a_day_s_bar_tells_its_downtime_and_incidents(live_server, made, open_tab):
    from playwright.sync_api import expect

    tab = open_tab()
    tab.goto(page_url(live_server, made))

    api = tab.locator("div.component", has_text="API")
    day = api.locator(f"rect.bar[data-date='{made.outage_day.date().isoformat()}']")
    expect(day).to_be_visible()
    tooltip = day.locator("title").text_content() or ""
    assert "Down 30 minutes" in tooltip
    assert f"Incident: {OLD_TITLE}" in tooltip
    assert "bar-none" not in (day.get_attribute("class") or "")
    quiet_day = api.locator("rect.bar").nth(80)
    assert "No downtime" in (quiet_day.locator("title").text_content() or "")


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
def test_the_response_time_chart_opens_as_an_svg_drawn_by_the_server(live_server, made, open_tab, javascript):
    from playwright.sync_api import expect

    tab = open_tab(javascript=javascript)
    tab.goto(page_url(live_server, made))

    docs = tab.locator("div.component", has_text="Docs")
    chart = docs.locator("svg.response-chart")
    expect(chart).to_be_hidden()
    docs.get_by_text("Response time, last 24 hours").click()
    expect(chart).to_be_visible()
    points = (chart.locator("polyline.line").get_attribute("points") or "").split()
    assert len(points) == 12  # one per hourly rollup of the last 24 hours


def test_a_private_page_opens_with_its_password_without_javascript(live_server, made, open_tab):
    from playwright.sync_api import expect

    services.status_page_update(page=made.page, changes={"access": "password", "password": PASSWORD})
    tab = open_tab(javascript=False)
    tab.goto(page_url(live_server, made))
    expect(tab.get_by_role("heading", name="This status page is private")).to_be_visible()
    tab.get_by_label("Password").fill("not the password")
    with tab.expect_response(lambda answer: answer.request.method == "POST") as refused:
        tab.get_by_role("button", name="Open the page").click()
    assert 400 <= refused.value.status < 500
    expect(tab.get_by_role("alert")).to_have_text("That password is not right.")

    tab.get_by_label("Password").fill(PASSWORD)
    tab.get_by_role("button", name="Open the page").click()

    expect(tab.get_by_role("status")).to_have_text("Partial System Outage")


@pytest.fixture
def logo_host() -> Iterator[str]:
    """Serve a logo from another origin (a loopback port of its own), as a page's owner may host it."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    svg = (
        b'<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32"><rect width="32" height="32"/></svg>'
    )

    class Logo(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "image/svg+xml")
            self.send_header("Content-Length", str(len(svg)))
            self.end_headers()
            self.wfile.write(svg)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Logo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/logo.svg"
    server.shutdown()
    server.server_close()


# Collected in the page's own world before any of its code could run; Playwright's init script
# and evaluate come through the DevTools protocol, which the page's policy does not govern.
WATCH_VIOLATIONS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__violations.push(e.violatedDirective + ' ' + e.blockedURI);
});
"""


def test_the_pages_render_under_their_content_security_policy_with_no_violation(
    live_server, made, open_tab, logo_host
):
    from playwright.sync_api import expect

    services.status_page_update(page=made.page, changes={"logo_url": logo_host})
    incident = made.page.incidents.first()
    tab = open_tab()
    console: list[str] = []
    tab.on("console", lambda message: console.append(message.text) if message.type == "error" else None)
    tab.add_init_script(WATCH_VIOLATIONS)
    base = page_url(live_server, made)

    for path in ("", "history/", f"incidents/{incident.public_id}/", "subscribe/"):
        answer = tab.goto(base + path)
        assert answer is not None
        assert "default-src 'none'" in answer.headers["content-security-policy"]
        expect(tab.locator("header.page-header")).to_be_visible()
        # The stylesheet applied (same origin) and the logo loaded (its own origin, allowed by name).
        assert tab.evaluate("[...document.styleSheets].some((sheet) => sheet.cssRules.length > 0)")
        assert tab.evaluate("document.querySelector('img.logo').naturalWidth") == 32
        assert tab.evaluate("window.__violations") == [], path
    assert not [text for text in console if "Content Security Policy" in text], console
