"""Sessions and keys from the outside: real HTTP clients against a running ``manage.py serve``.

Two httpx clients sign in as one person through the sign-in form; one ends the other's session
on the account page, and the other's next request is sent to sign in. An API key made with an
expiry is used as curl would and its last use and address show on the keys page; an expired key
gets a 401 that says so at the API and at /mcp, the latter through the official ``mcp`` SDK client.
The server judges time on its own clock, so every date here is derived from the real clock.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.live_uptimy import ROOT, LiveUptimy

FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
SAFARI = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.5 Mobile/15E148 Safari/604.1"
)
EMAIL = "sessions-live@example.com"
PASSWORD = "a-long-live-password-31"


@pytest.fixture(scope="module")
def person(loopback_uptimy: LiveUptimy) -> str:
    """Make an owner of the demo organization with a password, on the live server."""
    loopback_uptimy.shell(
        "from django.contrib.auth import get_user_model\n"
        "from monitors.models import Organization, Membership\n"
        "from monitors.services import membership_add\n"
        f"u, _ = get_user_model().objects.get_or_create(username={EMAIL!r}, defaults={{'email': {EMAIL!r}}})\n"
        f"u.set_password({PASSWORD!r}); u.save()\n"
        "membership_add(organization=Organization.objects.get(slug='demo'), user=u, role=Membership.Role.OWNER)\n",
    )
    return EMAIL


def sign_in(live: LiveUptimy, user_agent: str) -> httpx.Client:
    """Return a client signed in through the sign-in form, as a browser posts it."""
    browser = httpx.Client(base_url=live.base, headers={"User-Agent": user_agent}, timeout=60)
    browser.get("/app/login/").raise_for_status()
    answer = browser.post(
        "/app/login/",
        data={"username": EMAIL, "password": PASSWORD, "csrfmiddlewaretoken": browser.cookies["csrftoken"]},
    )
    assert answer.status_code == 302, answer.text[:500]
    assert answer.headers["location"] == "/app/"
    return browser


def post_form(browser: httpx.Client, path: str) -> httpx.Response:
    return browser.post(path, data={"csrfmiddlewaretoken": browser.cookies["csrftoken"]})


def test_one_browser_ends_another_s_session_and_that_one_is_sent_to_sign_in(loopback_uptimy, person):
    phone = sign_in(loopback_uptimy, SAFARI)
    laptop = sign_in(loopback_uptimy, FIREFOX)
    try:
        page = laptop.get("/app/account/").text
        listed = re.findall(
            r"<td>((?:Firefox on Linux|Safari on iPhone)[^<]*(?:<strong>\(this session\)</strong>)?)</td>",
            page,
        )
        assert sorted(listed) == ["Firefox on Linux <strong>(this session)</strong>", "Safari on iPhone"]
        assert page.count("<td>127.0.0.1</td>") >= 2
        end = re.search(
            r'action="(/app/account/sessions/[0-9a-f-]+/end/)"[^>]*>.*?aria-label="End the session of Safari on iPhone',
            page,
            re.S,
        )
        assert end, page

        assert post_form(laptop, end.group(1)).headers["location"] == "/app/account/"

        answer = phone.get("/app/")
        assert answer.status_code == 302
        assert answer.headers["location"] == "/app/login/?next=/app/"
        assert laptop.get("/app/").status_code == 200
        assert "Safari on iPhone" not in laptop.get("/app/account/").text
    finally:
        phone.close()
        laptop.close()


def new_key(live: LiveUptimy, *, expires: datetime) -> str:
    done = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "createapikey",
            "demo",
            "--name",
            "expiring",
            "--expires",
            expires.isoformat(),
        ],
        cwd=ROOT,
        env=live.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def test_a_key_with_an_expiry_works_and_its_last_use_and_address_are_listed(loopback_uptimy, person):
    expires = (datetime.now(UTC) + timedelta(days=30)).replace(microsecond=0)
    raw = new_key(loopback_uptimy, expires=expires)

    answer = httpx.get(
        f"{loopback_uptimy.base}/api/v1/healthchecks/",
        headers={"Authorization": f"Bearer {raw}", "User-Agent": "curl/8.5.0"},
        timeout=60,
    )
    assert answer.status_code == 200

    owner = sign_in(loopback_uptimy, FIREFOX)
    try:
        page = owner.get("/app/settings/api-keys/").text
    finally:
        owner.close()
    row = re.search(rf"<code>{re.escape(raw[:12])}…</code>.*?</tr>", page, re.S)
    assert row, page
    assert expires.strftime("%Y-%m-%d %H:%M") in row.group(0)
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d from 127\.0\.0\.1", row.group(0)), row.group(0)


def sdk_answers(url: str, key: str) -> list[httpx.Response]:
    """Connect to /mcp with the official SDK client; return the HTTP answers it got (it fails on a 401)."""
    seen: list[httpx.Response] = []

    async def keep(response: httpx.Response) -> None:
        await response.aread()
        seen.append(response)

    async def main() -> None:
        async with (
            create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http,
        ):
            http.event_hooks["response"].append(keep)
            async with (
                streamable_http_client(url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await asyncio.wait_for(session.initialize(), timeout=30)

    with pytest.raises(Exception):  # noqa: B017, PT011 (the SDK surfaces a 401 as its transport's failure)
        asyncio.run(main())
    return seen


def test_an_expired_key_gets_a_401_that_says_so_at_the_api_and_at_mcp(loopback_uptimy):
    raw = new_key(loopback_uptimy, expires=datetime.now(UTC) + timedelta(days=1))
    # Expire it as time would: its expiry moved a second into the past, by the server's own clock.
    loopback_uptimy.shell(
        "from datetime import timedelta\nfrom django.utils import timezone\nfrom monitors.models import ApiKey\n"
        f"ApiKey.objects.filter(prefix={raw[:12]!r}).update(expires_at=timezone.now() - timedelta(seconds=1))\n",
    )

    answer = httpx.get(
        f"{loopback_uptimy.base}/api/v1/healthchecks/", headers={"Authorization": f"Bearer {raw}"}
    )
    assert answer.status_code == 401
    assert "expired" in answer.json()["detail"]

    seen = sdk_answers(loopback_uptimy.mcp_url, raw)
    assert [r.status_code for r in seen] == [401]
    assert "expired" in seen[0].json()["detail"]
    assert 'error_description="The API key expired"' in seen[0].headers["www-authenticate"]
