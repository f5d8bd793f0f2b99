"""The web app in a real browser: Debian's Chromium driven by Playwright against the live server.

The browser is tests/browser_support.py's ``chromium`` (through tests/web/conftest.py): it
skips without Chromium and fails instead under UPTIMY_REQUIRE_BROWSER=1. Every wait is
Playwright's auto-waiting on what the page shows, never a sleep.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from alerts.models import Incident
from alerts.services import channel_add
from monitors.models import Healthcheck, Membership, ProbeResult, Region, StatusChange, ToolList
from monitors.secrets import decrypt_headers
from monitors.services import maintenance_window_create, membership_add
from statuspages.services import (
    component_create,
    email_subscribe,
    group_create,
    incident_create,
    status_page_create,
)
from tests.monitors.conftest import start_sdk_peer, stop
from tests.web.conftest import PASSWORD

# axe-core from npm (axe-core@4.14.1, MPL-2.0), vendored for the tests only: the app never serves it.
AXE = Path(__file__).parent / "vendor" / "axe-4.14.1.min.js"
AXE_FAILS_ON = ("serious", "critical")

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


@pytest.fixture
def app(live_server, settings) -> str:
    """Return the live server's app URL, with the settings a local try has: plain HTTP, runs here."""
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True  # the peers are on loopback
    settings.REDIS_URL = ""  # "Run now" runs in the server's process, as `make run` without a broker
    return live_server.url


@pytest.fixture
def page(chromium) -> Iterator[Any]:
    """Return a fresh browser tab (its own cookies); fail the test on any Content-Security-Policy refusal."""
    context = chromium.new_context()
    context.set_default_timeout(20_000)
    tab = context.new_page()
    refusals: list[str] = []
    tab.on(
        "console",
        lambda message: refusals.append(message.text) if "Content Security Policy" in message.text else None,
    )
    yield tab
    context.close()
    assert not refusals, refusals


def sign_up(page: Any, app: str, email: str) -> None:
    page.goto(f"{app}/")
    page.get_by_role("link", name="Sign up").click()
    page.get_by_label("Email").fill(email)
    page.get_by_label("Organization name").fill("Docs Team")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password again").fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    page.get_by_role("heading", name="Healthchecks").wait_for()


def test_sign_up_create_an_mcp_healthcheck_with_advanced_settings_and_watch_its_result(page, app):
    from playwright.sync_api import expect

    server, url = start_sdk_peer("stateful")
    try:
        sign_up(page, app, "ada@example.com")
        page.get_by_role("navigation", name="New healthcheck").get_by_role("link", name="MCP check").click()
        page.get_by_label("Name", exact=True).fill("Docs MCP")
        page.get_by_label("Server URL").fill(url)
        page.get_by_text("Advanced settings").click()
        page.get_by_label("Header 1 name").fill("Authorization")
        page.get_by_label("Header 1 value").fill("Bearer peer-key")
        page.get_by_label("Required tools").fill("search_docs\nget_status")
        page.get_by_label("At least this many tools").fill("2")
        expect(page.get_by_label("Timeout (seconds)")).to_have_value("10")
        page.get_by_role("button", name="Create healthcheck").click()

        expect(page.get_by_role("heading", name="Docs MCP")).to_be_visible()
        page.get_by_role("button", name="Run now").click()
        result = page.locator("dl.result")
        expect(result).to_contain_text("sdk-streamable 2.3.0-peer")
        expect(result.locator("dt", has_text="Access").locator("+ dd")).to_have_text("Key")
        expect(result.locator("dt", has_text="Protocol").locator("+ dd")).to_contain_text(
            re.compile(r"\d{4}-\d{2}-\d{2}")
        )
        tools = result.locator("dt", has_text=re.compile("^Tools$")).locator("+ dd")
        expect(tools).to_contain_text("3")
        expect(tools).to_contain_text("search_docs")
        expect(result.locator("dt", has_text="Missing tools").locator("+ dd")).to_have_text("None")
        expect(result.locator("svg.breakdown")).to_be_visible()

        # The stored header value comes back masked and stays stored when the form is saved as is.
        page.get_by_role("link", name="Edit").click()
        expect(page.get_by_label("Header 1 value")).to_have_value("********")
        page.get_by_role("button", name="Save").click()
        expect(page.get_by_text("Saved Docs MCP.")).to_be_visible()
        assert "peer-key" not in page.content()

        # Down, naming why; then up again once the server is back on its address.
        stop(server)
        page.get_by_role("button", name="Run now").click()
        expect(page.locator("dl.result dt", has_text="Status").locator("+ dd")).to_contain_text("Down")
        expect(page.locator("dl.result dd.reason")).to_contain_text("(connect)")
        server, _ = start_sdk_peer("stateful", port=urlsplit(url).port)
        page.get_by_role("button", name="Run now").click()
        expect(page.locator("dl.result dt", has_text="Status").locator("+ dd")).to_contain_text("Up")
        expect(page.locator("dl.result dd.reason")).to_have_count(0)
    finally:
        if server.poll() is None:
            stop(server)
    healthcheck = Healthcheck.objects.get(name="Docs MCP")
    assert healthcheck.config["requiredTools"] == ["search_docs", "get_status"]


def test_test_now_on_a_url_without_mcp_shows_no_mcp_endpoint(page, app, no_mcp_url):
    from playwright.sync_api import expect

    sign_up(page, app, "bo@example.com")
    page.goto(f"{app}/app/healthchecks/new/?type=mcp")
    page.get_by_label("Server URL").fill(no_mcp_url)
    page.get_by_role("button", name="Test now").click()
    expect(page.locator("#test-result")).to_contain_text("No MCP endpoint at this URL")
    assert not Healthcheck.objects.exists()


def test_a_viewer_cannot_change_anything(page, app, org, make_check):
    from playwright.sync_api import expect

    check = make_check(org, name="Watched")
    user = get_user_model().objects.create_user(username="vi@example.com", password=PASSWORD)
    membership_add(organization=org, user=user, role=Membership.Role.VIEWER)
    page.goto(f"{app}/app/")
    page.get_by_label("Email or user name").fill("vi@example.com")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("link", name="Watched")).to_be_visible()
    expect(page.get_by_role("link", name="New healthcheck")).to_have_count(0)
    expect(page.get_by_role("navigation", name="New healthcheck")).to_have_count(0)
    page.get_by_role("link", name="Watched").click()
    expect(page.get_by_role("heading", name="Watched")).to_be_visible()
    for name in ("Edit", "Delete…"):
        expect(page.get_by_role("link", name=name, exact=True)).to_have_count(0)
    expect(page.get_by_role("button", name="Pause")).to_have_count(0)
    # A page that only changes things is refused as it opens: no form whose Save then fails.
    for path in ("new/?type=mcp", f"{check.public_id}/edit/", f"{check.public_id}/delete/"):
        answer = page.goto(f"{app}/app/healthchecks/{path}")
        assert answer is not None
        assert answer.status == 403, path
        expect(page.get_by_text("Viewers can look but not change anything")).to_be_visible()
        expect(
            page.get_by_role("button", name=re.compile("Save|Create healthcheck|Test now|Delete"))
        ).to_have_count(0)
    assert list(Healthcheck.objects.values_list("name", flat=True)) == ["Watched"]


def test_the_healthcheck_page_s_sections_refresh_together_during_an_outage(page, app, org, make_check):
    """Status, status changes and incidents change in one refresh, without a reload: none contradicts another."""
    from playwright.sync_api import expect

    check = make_check(org, name="Outage")
    user = get_user_model().objects.create_user(username="ow2@example.com", password=PASSWORD)
    membership_add(organization=org, user=user, role=Membership.Role.OWNER)
    sign_in(page, app, "ow2@example.com")
    page.goto(f"{app}/app/healthchecks/{check.public_id}/")
    expect(page.get_by_text("No incident yet.")).to_be_visible()
    expect(page.get_by_text("No status change yet.")).to_be_visible()
    page.evaluate("window.notReloaded = true")

    now = timezone.now()
    Healthcheck.objects.filter(pk=check.pk).update(status="down", status_changed_at=now)
    StatusChange.objects.create(
        healthcheck=check, at=now, from_status="pending", to_status="down", reason="Down in eu-west"
    )
    Incident.objects.create(
        organization=org,
        healthcheck=check,
        healthcheck_public_id=check.public_id,
        healthcheck_name=check.name,
        severity="critical",
        opened_at=now,
        cause_summary="Down in eu-west",
    )

    main = page.locator("#healthcheck-main")
    expect(main.locator("p.current")).to_contain_text("Down", timeout=15_000)
    # The same swap brought the other sections: no "Down" above "No incident yet".
    expect(main.get_by_text("No incident yet.")).to_have_count(0)
    expect(main.get_by_text("No status change yet.")).to_have_count(0)
    expect(main.locator("section", has_text="Incidents").get_by_text("Open", exact=True)).to_be_visible()
    assert page.evaluate("window.notReloaded") is True


def test_the_browser_finds_the_site_s_icon(page, app):
    """Every page's icon links and /favicon.ico (what a browser asks without a link) answer with an image."""
    from io import BytesIO

    from PIL import Image

    failed: list[str] = []
    page.on("response", lambda answer: failed.append(answer.url) if answer.status >= 400 else None)
    page.goto(f"{app}/app/login/")
    links = page.locator("link[rel=icon]").evaluate_all("links => links.map(link => link.href)")
    assert len(links) == 2
    for url in [*links, f"{app}/favicon.ico"]:
        answer = page.request.get(url)
        assert answer.status == 200, url
        assert answer.headers["content-type"].startswith("image/"), (url, answer.headers["content-type"])
    icon = Image.open(BytesIO(page.request.get(f"{app}/favicon.ico").body()))
    assert icon.format == "ICO"
    assert not failed, failed


def test_a_header_value_is_masked_shown_on_request_and_never_echoed_after_test_now(page, app, no_mcp_server):
    from playwright.sync_api import expect

    key = "Bearer typed-key-4f9c2e"
    sign_up(page, app, "hv@example.com")
    page.goto(f"{app}/app/healthchecks/new/?type=mcp")
    page.get_by_label("Name", exact=True).fill("Keyed")
    page.get_by_label("Server URL").fill(no_mcp_server.url)
    page.get_by_text("Advanced settings").click()
    page.get_by_label("Header 1 name").fill("Authorization")
    value = page.get_by_label("Header 1 value")
    value.fill(key)
    expect(value).to_have_attribute("type", "password")
    show = page.get_by_role("button", name="Show").first
    show.click()
    expect(value).to_have_attribute("type", "text")
    expect(value).to_have_value(key)
    page.get_by_role("button", name="Hide").first.click()
    expect(value).to_have_attribute("type", "password")

    page.get_by_role("button", name="Test now").click()
    expect(page.locator("#test-result")).to_contain_text("No MCP endpoint at this URL")
    assert key in no_mcp_server.authorizations
    assert "typed-key-4f9c2e" not in page.content()
    expect(page.get_by_label("Header 1 value")).to_have_value("********")

    # The value typed before Test now is still the one sent, tested again and then saved.
    no_mcp_server.authorizations.clear()
    page.get_by_role("button", name="Test now").click()
    expect(page.locator("#test-result")).to_contain_text("No MCP endpoint at this URL")
    assert key in no_mcp_server.authorizations
    page.get_by_role("button", name="Create healthcheck").click()
    expect(page.get_by_role("heading", name="Keyed")).to_be_visible()
    assert "typed-key-4f9c2e" not in page.content()
    saved = Healthcheck.objects.get(name="Keyed")
    assert decrypt_headers(saved.secret_headers) == {"Authorization": key}


def test_the_dashboard_s_statuses_refresh_without_a_reload(page, app, org, make_check):
    """htmx (under the strict policy) swaps the rows in place: a window flag set before survives."""
    from playwright.sync_api import expect

    check = make_check(org, name="Flapping")
    user = get_user_model().objects.create_user(username="ow@example.com", password=PASSWORD)
    membership_add(organization=org, user=user, role=Membership.Role.OWNER)
    page.goto(f"{app}/app/login/")
    page.get_by_label("Email or user name").fill("ow@example.com")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    status = page.locator("td[data-status]")
    expect(status).to_have_text(re.compile("Pending"))
    page.evaluate("window.notReloaded = true")
    Healthcheck.objects.filter(pk=check.pk).update(status="down")
    expect(status).to_have_text(re.compile("Down"), timeout=15_000)
    assert page.evaluate("window.notReloaded") is True


def sign_in(page: Any, app: str, username: str) -> None:
    page.goto(f"{app}/app/login/")
    page.get_by_label("Email or user name").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name="Healthchecks").wait_for()


def axe_violations(page: Any) -> list[str]:
    """Run axe-core on the page as it is; return its serious and critical violations, one line each."""
    page.add_script_tag(path=str(AXE))
    found = page.evaluate("async () => (await axe.run(document)).violations")
    return [
        f"{v['impact']} {v['id']}: {v['help']} at {[node['target'] for node in v['nodes']]}"
        for v in found
        if v["impact"] in AXE_FAILS_ON
    ]


@pytest.fixture
def scanned_page(chromium) -> Iterator[Any]:
    """Return a tab that lets axe's script in: the app's policy refuses injected scripts, as it should."""
    context = chromium.new_context(bypass_csp=True)
    context.set_default_timeout(20_000)
    yield context.new_page()
    context.close()


@pytest.fixture
def watched_check(org, make_check) -> Healthcheck:
    """Return a check with an MCP result and a status change, so its page shows every section."""
    check = make_check(org, name="Docs MCP")
    now = timezone.now()
    ToolList.objects.create(
        healthcheck=check,
        digest="d1",
        tools=[{"name": "search_docs", "required_inputs": ["q"]}],
        first_seen_at=now,
    )
    ProbeResult.objects.create(
        healthcheck=check,
        region=Region.objects.get(slug="eu-west"),
        slot=now,
        checked_at=now,
        recorded_at=now,
        status="down",
        kind="missing_tools",
        reason="Missing required tools: get_status",
        server_name="docs-server",
        server_version="1.2.3",
        protocol="2025-06-18",
        access="key",
        tool_count=1,
        tool_digest="d1",
        missing_tools=["get_status"],
        dns_ms=5,
        tcp_ms=10,
        tls_ms=20,
        ttfb_ms=65,
        total_ms=100,
    )
    StatusChange.objects.create(
        healthcheck=check, at=now, from_status="pending", to_status="down", reason="Down in eu-west"
    )
    Incident.objects.create(  # open and not acknowledged: its row shows the Acknowledge button
        organization=check.organization,
        healthcheck=check,
        healthcheck_public_id=check.public_id,
        healthcheck_name=check.name,
        severity="critical",
        opened_at=now,
        cause_summary="Down in eu-west",
    )
    return check


@pytest.mark.parametrize(
    "path",
    [
        "/app/",
        "/app/incidents/",
        "/app/healthchecks/new/?type=mcp",
        "/app/healthchecks/new/?type=http",
        "/app/healthchecks/{check}/",
        "/app/healthchecks/{check}/edit/",
        "/app/settings/api-keys/",
        "/app/settings/members/",
        "/app/settings/channels/",
        "/app/settings/alerts/",
        "/app/settings/maintenance/",
        "/app/settings/reports/",
        "/app/status-pages/",
        "/app/status-pages/{status_page}/",
        "/app/settings/channels/{channel}/",
        "/app/settings/maintenance/{window}/",
        "/app/status-pages/{status_page}/components/{component}/",
        "/app/status-pages/{status_page}/incidents/{incident}/delete/",
    ],
)
def test_axe_finds_no_serious_violation_on_a_main_page(scanned_page, app, org, watched_check, path):
    user = get_user_model().objects.create_user(username="ax@example.com", password=PASSWORD)
    membership_add(organization=org, user=user, role=Membership.Role.OWNER)
    sign_in(scanned_page, app, "ax@example.com")
    status_page = status_page_create(
        organization=org,
        changes={"slug": "docs", "title": "Docs status", "custom_domain": "status.example.com"},
    )
    component = component_create(page=status_page, changes={"healthcheck": watched_check.public_id})
    incident = incident_create(
        page=status_page,
        changes={"title": "Search is slow", "components": [component.public_id], "draft": True},
        body="Looking into it.",
        now=timezone.now(),
    )
    group_create(page=status_page, name="Search")
    email_subscribe(page=status_page, email="reader@example.com", components=None, now=timezone.now())
    channel = channel_add(
        organization=org, name="Ops mail", kind="email", config={"recipients": ["ops@example.com"]}
    ).channel
    window = maintenance_window_create(
        organization=org, name="Upgrade", starts_at=timezone.now(), duration=timedelta(hours=1), tags=["db"]
    )
    scanned_page.goto(
        app
        + path.format(
            check=watched_check.public_id,
            status_page=status_page.public_id,
            channel=channel.public_id,
            window=window.public_id,
            component=component.public_id,
            incident=incident.public_id,
        )
    )
    assert axe_violations(scanned_page) == []


@pytest.mark.parametrize("path", ["/app/login/", "/app/signup/", "/app/password-reset/"])
def test_axe_finds_no_serious_violation_on_a_signed_out_page(scanned_page, app, path):
    scanned_page.goto(app + path)
    assert axe_violations(scanned_page) == []


def test_axe_finds_no_serious_violation_on_a_form_showing_field_errors(scanned_page, app, org):
    user = get_user_model().objects.create_user(username="ax@example.com", password=PASSWORD)
    membership_add(organization=org, user=user, role=Membership.Role.OWNER)
    sign_in(scanned_page, app, "ax@example.com")
    scanned_page.goto(f"{app}/app/healthchecks/new/?type=mcp")
    scanned_page.get_by_label("Server URL").fill("not a url")
    scanned_page.get_by_role("button", name="Create healthcheck").click()
    scanned_page.locator(".errorlist").first.wait_for()
    assert axe_violations(scanned_page) == []


def test_axe_finds_no_serious_violation_on_the_alert_policy_showing_field_errors(scanned_page, app, org):
    user = get_user_model().objects.create_user(username="ax@example.com", password=PASSWORD)
    membership_add(organization=org, user=user, role=Membership.Role.OWNER)
    channel_add(organization=org, name="Ops mail", kind="email", config={"recipients": ["ops@example.com"]})
    sign_in(scanned_page, app, "ax@example.com")
    scanned_page.goto(f"{app}/app/settings/alerts/")
    scanned_page.get_by_label("Reminder every (minutes)").fill("0")
    scanned_page.get_by_label("Escalate after (minutes)").fill("30")
    scanned_page.get_by_role("button", name="Save").click()
    scanned_page.locator(".errorlist").first.wait_for()
    assert axe_violations(scanned_page) == []


def test_axe_finds_no_serious_violation_on_a_webhook_s_page_showing_a_rotated_secret(scanned_page, app, org):
    user = get_user_model().objects.create_user(username="ax@example.com", password=PASSWORD)
    membership_add(organization=org, user=user, role=Membership.Role.OWNER)
    sign_in(scanned_page, app, "ax@example.com")
    hook = channel_add(organization=org, name="Hook", kind="webhook", config={"url": "http://127.0.0.1:9/h"})
    scanned_page.goto(f"{app}/app/settings/channels/{hook.channel.public_id}/")
    scanned_page.get_by_role("button", name="Rotate signing secret").click()
    scanned_page.locator("#new-secret").wait_for()
    assert axe_violations(scanned_page) == []


def test_axe_finds_no_serious_violation_on_a_password_page_s_component_showing_a_field_error(
    scanned_page, app, org, make_check
):
    user = get_user_model().objects.create_user(username="ax@example.com", password=PASSWORD)
    membership_add(organization=org, user=user, role=Membership.Role.OWNER)
    sign_in(scanned_page, app, "ax@example.com")
    status_page = status_page_create(
        organization=org,
        changes={"slug": "docs", "title": "Docs status", "access": "password", "password": "a-long-secret"},
    )
    component = component_create(page=status_page, changes={"healthcheck": make_check(org).public_id})
    scanned_page.goto(f"{app}/app/status-pages/{status_page.public_id}/components/{component.public_id}/")
    scanned_page.get_by_role("button", name="Rotate badge token").wait_for()
    scanned_page.get_by_label("Position").fill("-1")
    scanned_page.get_by_role("button", name="Save component").click()
    scanned_page.locator(".errorlist").first.wait_for()
    assert axe_violations(scanned_page) == []


def test_axe_finds_no_serious_violation_on_a_status_page_s_incident_and_group_edits_showing_field_errors(
    scanned_page, app, org, make_check
):
    user = get_user_model().objects.create_user(username="ax@example.com", password=PASSWORD)
    membership_add(organization=org, user=user, role=Membership.Role.OWNER)
    sign_in(scanned_page, app, "ax@example.com")
    status_page = status_page_create(organization=org, changes={"slug": "docs", "title": "Docs status"})
    component = component_create(page=status_page, changes={"healthcheck": make_check(org).public_id})
    incident_create(
        page=status_page,
        changes={"title": "Search is slow", "components": [component.public_id]},
        body="Looking into it.",
        now=timezone.now(),
    )
    group_create(page=status_page, name="Search")
    scanned_page.goto(f"{app}/app/status-pages/{status_page.public_id}/")
    scanned_page.get_by_text("Edit or delete Search is slow").click()
    scanned_page.get_by_label("Title of Search is slow").fill("")
    scanned_page.get_by_role("button", name="Save incident Search is slow").click()
    scanned_page.locator("#e-title-errors").wait_for()
    assert axe_violations(scanned_page) == []
    scanned_page.get_by_label("Position of the group Search").fill("-1")
    scanned_page.get_by_role("button", name="Save the group Search").click()
    scanned_page.locator("#ge-position-errors").wait_for()
    assert axe_violations(scanned_page) == []


def test_an_owner_declares_a_component_s_status_in_an_update_and_readers_see_it(page, app, org, make_check):
    user = get_user_model().objects.create_user(username="decl@example.com", password=PASSWORD)
    membership_add(organization=org, user=user, role=Membership.Role.OWNER)
    status_page = status_page_create(organization=org, changes={"slug": "docs", "title": "Docs status"})
    component = component_create(
        page=status_page, changes={"healthcheck": make_check(org).public_id, "display_name": "Search"}
    )
    incident_create(
        page=status_page, changes={"title": "Search is slow"}, body="Looking into it.", now=timezone.now()
    )
    sign_in(page, app, "decl@example.com")
    page.goto(f"{app}/app/status-pages/{status_page.public_id}/")
    page.get_by_label("New status of Search is slow").select_option("identified")
    page.get_by_label("Update of Search is slow").fill("An index is rebuilding.")
    page.get_by_label("Search in Search is slow").select_option(label="Partial outage")
    page.get_by_role("button", name="Post update").click()
    page.get_by_text("Updated Search is slow.").wait_for()

    page.goto(f"{app}/s/docs/")
    assert page.locator(f"#component-{component.public_id} .status-label").inner_text() == "Partial outage"
    page.get_by_role("link", name="Search is slow").click()
    page.get_by_role("heading", name="Search is slow", level=1).wait_for()
    assert re.search(r"/s/docs/incidents/[0-9a-f-]{36}/$", page.url)
    assert page.locator(".update-component").first.inner_text() == "Search: Partial outage (was operational)"
