"""The audit log from the outside: changes through the REST API, uptimyctl, the MCP server and the web app.

A running ``manage.py serve`` (the ``loopback_uptimy`` fixture) with an organization of this
module's own; each change is made with a real client (httpx with an API key, the installed
``uptimyctl`` command, the official ``mcp`` SDK client, a browser's sign-in form and CSRF token),
then ``GET /api/v1/audit-events/`` must name the change with its actor and how it came.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientMetadata

from tests.clock import clock_environment
from tests.live_uptimy import LiveUptimy
from tests.oauth_person import CALLBACK, CLIENT_NAME, MemoryStorage, Person
from tests.totp_reference import totp

ORGANIZATION = "audit-live"
OWNER = "audit-owner@example.com"
VIEWER = "audit-viewer@example.com"
# Enrols a second factor and sets the organization's rule: an owner of their own, so the others sign in with a password.
ENROLLER = "audit-enroller@example.com"
PASSWORD = "a-long-live-password-77"
UPTIMYCTL = str(Path(sys.executable).with_name("uptimyctl"))
EVENTS = "/api/v1/audit-events/"


@pytest.fixture(scope="module")
def site(loopback_uptimy: LiveUptimy) -> dict[str, Any]:
    """Make this module's organization with a read-write key, an owner and a viewer with passwords."""
    key = loopback_uptimy.create_key(read_only=False, organization=ORGANIZATION)
    people = {OWNER: "OWNER", VIEWER: "VIEWER", ENROLLER: "OWNER"}
    loopback_uptimy.shell(
        "from django.contrib.auth import get_user_model\n"
        "from monitors.models import Organization, Membership\n"
        "from monitors.services import membership_add\n"
        f"org = Organization.objects.get(slug={ORGANIZATION!r})\n"
        + "".join(
            f"u, _ = get_user_model().objects.get_or_create(username={email!r}, defaults={{'email': {email!r}}})\n"
            f"u.set_password({PASSWORD!r}); u.save()\n"
            f"membership_add(organization=org, user=u, role=Membership.Role.{role})\n"
            for email, role in people.items()
        ),
    )
    return {"live": loopback_uptimy, "key": key, "prefix": key[:12]}


def api(site: dict[str, Any], **headers: str) -> httpx.Client:
    return httpx.Client(
        base_url=site["live"].base,
        headers={"Authorization": f"Bearer {site['key']}", **headers},
        timeout=60,
    )


def sign_in(site: dict[str, Any], email: str) -> httpx.Client:
    """Return a client signed in through the sign-in form, as a browser posts it."""
    browser = httpx.Client(base_url=site["live"].base, timeout=60)
    browser.get("/app/login/").raise_for_status()
    answer = browser.post(
        "/app/login/",
        data={"username": email, "password": PASSWORD, "csrfmiddlewaretoken": browser.cookies["csrftoken"]},
    )
    assert answer.status_code == 302, answer.text[:500]
    return browser


def events(site: dict[str, Any], **query: str) -> list[dict[str, Any]]:
    with api(site) as client:
        answer = client.get(EVENTS, params=query)
    assert answer.status_code == 200, answer.text
    results: list[dict[str, Any]] = answer.json()["results"]
    return results


def create_by_api(site: dict[str, Any], name: str) -> str:
    with api(site, **{"User-Agent": "curl/8.5.0"}) as client:
        answer = client.post(
            "/api/v1/healthchecks/",
            json={"name": name, "type": 1, "config": {"uri": "https://example.com/"}},
        )
    assert answer.status_code == 201, answer.text
    public_id: str = answer.json()["id"]
    return public_id


def the_event(site: dict[str, Any], action: str, target_id: str) -> dict[str, Any]:
    found = [e for e in events(site, action=action, target_id=target_id)]
    assert len(found) == 1, found
    return found[0]


def test_a_change_through_the_api_names_the_key_and_via_api(site):
    public_id = create_by_api(site, "Audit REST")
    with api(site) as client:
        assert (
            client.patch(
                f"/api/v1/healthchecks/{public_id}/", json={"name": "Audit REST renamed"}
            ).status_code
            == 200
        )

    event = the_event(site, "healthcheck.updated", public_id)

    assert event["actor"]["kind"] == "api_key"
    assert event["actor"]["via"] == "api"
    assert event["actor"]["address"] == "127.0.0.1"
    assert event["actor"]["name"].startswith(f"API key {site['prefix']}")
    assert (event["before"], event["after"]) == ({"name": "Audit REST"}, {"name": "Audit REST renamed"})


def test_a_change_through_uptimyctl_names_the_key_and_via_uptimyctl(site, tmp_path):
    (tmp_path / "monitors.yaml").write_text(
        "monitors:\n  - name: Audit ctl\n    type: http\n    target: https://example.com/ctl\n"
    )
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        **clock_environment(),
        "UPTIMY_API_URL": site["live"].base,
        "UPTIMY_API_KEY": site["key"],
    }
    done = subprocess.run(
        [UPTIMYCTL, "apply", "-f", "monitors.yaml"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr

    [event] = [e for e in events(site, action="healthcheck.created") if e["target"]["name"] == "Audit ctl"]

    assert (event["actor"]["kind"], event["actor"]["via"]) == ("api_key", "uptimyctl")
    assert event["actor"]["user_agent"].startswith("uptimyctl/")


def call_tool(site: dict[str, Any], name: str, arguments: dict[str, Any]) -> Any:
    """Call one tool of Uptimy's MCP server with the official SDK client and the module's key."""

    async def main() -> Any:
        async with (
            create_mcp_http_client(headers={"Authorization": f"Bearer {site['key']}"}) as http,
            streamable_http_client(site["live"].mcp_url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            result = await session.call_tool(name, arguments)
            text = result.content[0].text  # type: ignore[union-attr]
            assert not result.is_error, text
            return json.loads(text)

    return asyncio.run(main())


def test_a_change_through_the_mcp_server_names_the_key_and_via_mcp(site):
    public_id = create_by_api(site, "Audit MCP")

    call_tool(site, "pause_monitor", {"monitor": public_id})

    event = the_event(site, "healthcheck.paused", public_id)
    assert (event["actor"]["kind"], event["actor"]["via"]) == ("api_key", "mcp")
    assert event["actor"]["api_key"] is not None
    assert (event["before"], event["after"]) == ({"paused": False}, {"paused": True})


def oauth_call_tool(site: dict[str, Any], person: Person, name: str, arguments: dict[str, Any]) -> None:
    """Call one tool as an assistant signed in with OAuth (the SDK's provider; ``person`` allows it)."""
    provider = OAuthClientProvider(
        server_url=site["live"].mcp_url,
        client_metadata=OAuthClientMetadata(
            client_name=CLIENT_NAME, redirect_uris=[CALLBACK], token_endpoint_auth_method="none"
        ),
        storage=MemoryStorage(),
        redirect_handler=person.open,
        callback_handler=person.callback,
    )

    async def main() -> None:
        async with (
            create_mcp_http_client(auth=provider) as http,
            streamable_http_client(site["live"].mcp_url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            result = await session.call_tool(name, arguments)
            assert not result.is_error, result.content

    asyncio.run(main())


def test_a_change_by_an_oauth_client_names_the_client_and_the_person_it_acts_for(site):
    public_id = create_by_api(site, "Audit OAuth")
    organization_id = (
        site["live"]
        .shell(
            f"from monitors.models import Organization; print(Organization.objects.get(slug={ORGANIZATION!r}).public_id)",
        )
        .split()[-1]
    )  # the shell prints its auto-imports first

    oauth_call_tool(
        site,
        Person(site["live"].base, OWNER, PASSWORD, organization_id),
        "pause_monitor",
        {"monitor": public_id},
    )

    event = the_event(site, "healthcheck.paused", public_id)
    assert (event["actor"]["kind"], event["actor"]["via"], event["actor"]["person"]) == (
        "oauth_client",
        "mcp",
        OWNER,
    )
    assert event["actor"]["oauth_client"]
    assert CLIENT_NAME in event["actor"]["name"]
    assert event["actor"]["api_key"] is None


def test_a_change_in_the_web_app_names_the_person_and_via_web(site):
    public_id = create_by_api(site, "Audit web")
    browser = sign_in(site, OWNER)
    try:
        answer = browser.post(
            f"/app/healthchecks/{public_id}/pause/",
            data={"csrfmiddlewaretoken": browser.cookies["csrftoken"]},
        )
        assert answer.status_code == 302, answer.text[:500]
        page = browser.get("/app/settings/audit/", params={"action": "healthcheck.paused"}).text
    finally:
        browser.close()

    event = the_event(site, "healthcheck.paused", public_id)
    assert (event["actor"]["kind"], event["actor"]["via"], event["actor"]["person"]) == (
        "person",
        "web",
        OWNER,
    )
    assert event["actor"]["api_key"] is None
    assert "healthcheck: Audit web" in page


def test_the_log_is_paged_across_more_than_one_page(site):
    create_by_api(site, "Audit page one")
    create_by_api(site, "Audit page two")
    with api(site) as client:
        first = client.get(EVENTS, params={"action": "healthcheck.created", "page_size": 1}).json()
        second = client.get(first["next"]).json()

    assert first["count"] >= 2
    assert len(first["results"]) == len(second["results"]) == 1
    assert first["results"][0]["id"] != second["results"][0]["id"]
    assert first["results"][0]["at"] >= second["results"][0]["at"]


@pytest.mark.parametrize(
    ("path", "status"),
    [(EVENTS, 403), ("/app/settings/audit/", 403)],
)
def test_a_viewer_signed_in_may_not_read_the_log(site, path, status):
    browser = sign_in(site, VIEWER)
    try:
        assert browser.get(path).status_code == status
    finally:
        browser.close()


def test_without_a_credential_the_log_is_refused(site):
    assert httpx.get(f"{site['live'].base}{EVENTS}", timeout=60).status_code in (401, 403)


def post_form(browser: httpx.Client, path: str, **fields: str) -> httpx.Response:
    return browser.post(path, data={"csrfmiddlewaretoken": browser.cookies["csrftoken"], **fields})


def test_enrolling_a_second_factor_and_requiring_it_are_in_the_log(site):
    browser = sign_in(site, ENROLLER)
    try:
        post_form(browser, "/app/account/security/enrol/")
        found = re.search(r'id="two-factor-secret">([A-Z2-7 ]+)<', browser.get("/app/account/security/").text)
        assert found
        secret = found.group(1)
        confirmed = post_form(browser, "/app/account/security/confirm/", code=totp(secret, time.time()))
        assert confirmed.status_code == 200, confirmed.text[:500]
        codes = re.findall(r"<li><code>([a-z0-9]{5}-[a-z0-9]{5})</code></li>", confirmed.text)
        required = post_form(browser, "/app/settings/organization/", require_two_factor="on")
        relaxed = post_form(browser, "/app/settings/organization/")
    finally:
        browser.close()
    assert (required.status_code, relaxed.status_code) == (302, 302)

    [enrolled] = events(site, action="member.two_factor_enrolled", target_id=ENROLLER)
    rules = events(site, action="organization.updated")
    assert (enrolled["actor"]["person"], enrolled["actor"]["via"]) == (ENROLLER, "web")
    assert [(e["before"], e["after"]) for e in rules] == [
        ({"require_two_factor": True}, {"require_two_factor": False}),
        ({"require_two_factor": False}, {"require_two_factor": True}),
    ]
    logged = json.dumps(events(site, action="member"))
    assert secret.replace(" ", "") not in logged.replace(" ", "")
    assert codes
    assert not [code for code in codes if code in logged]
