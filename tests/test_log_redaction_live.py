"""A running Uptimy (``manage.py serve``, as ``make run``) writes no live one-time token or key to its log.

Each flow runs for real over HTTP against gunicorn's uvicorn workers: an invitation mailed (Django's
file mail backend), opened and accepted by signing up; a password reset asked for, its mailed link
followed and a new password set; an acknowledge link opened and posted; a request with ``?api_key=``;
a subscriber's confirm link and a badge token. Then the server's own stdout and stderr (the access
log, Django's "Not Found: /path" warnings) are read: no secret is in them, the redacted form is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin

import httpx
import pytest

from tests.live_uptimy import LiveUptimy, start_uptimy
from tests.mcpserver.test_mcp_oauth_live import admin_login
from tests.oauth_person import form_fields

PASSWORD = "a-long-test-password-42"
INVITED = "invited-person@example.com"

ACK_LINK = """
import uuid
from django.urls import reverse
from django.utils import timezone
from alerts.links import acknowledge_token
from alerts.models import Incident
from monitors.models import Organization
incident = Incident.objects.create(
    organization=Organization.objects.get(slug="demo"), healthcheck_public_id=uuid.uuid4(),
    healthcheck_name="Logged API", severity="critical", opened_at=timezone.now(),
)
print(reverse("alerts:acknowledge-link", args=[acknowledge_token(incident_public_id=incident.public_id, now=timezone.now())]))
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveUptimy, Path]]:
    """Serve Uptimy with its mail written to files, so the log holds what gunicorn and Django log, no mail body."""
    var_dir = tmp_path_factory.mktemp("uptimy-log")
    outbox = var_dir / "mail"
    outbox.mkdir()
    running = start_uptimy(var_dir, EMAIL_URL=f"filemail:///{outbox}")
    try:
        yield running, outbox
    finally:
        running.stop()


def mailed_link(outbox: Path, pattern: str) -> str:
    """Return the path of the one link matching ``pattern`` in the mails written so far."""
    found = {m for mail in outbox.iterdir() for m in re.findall(pattern, mail.read_text())}
    assert len(found) == 1, found
    return found.pop()


def post_form(browser: httpx.Client, path: str, **fields: str) -> httpx.Response:
    page = browser.get(path)
    assert page.status_code == 200, (path, page.status_code)
    return browser.post(path, data={**form_fields(page.text), **fields})


def test_the_server_log_shows_no_live_token_or_key_only_their_redacted_form(served):
    live, outbox = served
    secrets: list[str] = []
    shown: list[str] = []
    username, password = admin_login(live)
    owner = httpx.Client(base_url=live.base, timeout=30)
    signed_in = post_form(owner, "/app/login/", username=username, password=password)
    assert signed_in.status_code == 302, signed_in.text[:300]

    # An invitation: mailed, opened, accepted by signing up through its ?invitation= link.
    members = owner.get("/app/settings/members/")
    invited = owner.post(
        "/app/settings/members/invite/",
        data={**form_fields(members.text), "email": INVITED, "role": "member"},
    )
    assert invited.status_code == 302, invited.text[:300]
    invitation = mailed_link(outbox, r"/app/invitations/([^/\s]+)/")
    newcomer = httpx.Client(base_url=live.base, timeout=30)
    assert newcomer.get(f"/app/invitations/{invitation}/").status_code == 200
    joined = post_form(
        newcomer,
        f"/app/signup/?invitation={invitation}",
        email=INVITED,
        password1=PASSWORD,
        password2=PASSWORD,
    )
    assert joined.status_code == 302, joined.text[:500]
    secrets.append(invitation)
    shown += ["/app/invitations/[redacted]/", "/app/signup/?invitation=[redacted]"]

    # A password reset: asked for, its mailed link followed, a new password set.
    stranger = httpx.Client(base_url=live.base, timeout=30)
    asked = post_form(stranger, "/app/password-reset/", email=INVITED)
    assert asked.status_code == 302
    uid, token = mailed_link(outbox, r"/app/password-reset/([^/\s]+)/([^/\s]+)/")
    opened = stranger.get(f"/app/password-reset/{uid}/{token}/")
    assert opened.status_code == 302
    new = "another-long-password-77"
    done = post_form(
        stranger, urljoin(live.base, opened.headers["Location"]), new_password1=new, new_password2=new
    )
    assert done.headers["Location"] == "/app/password-reset/done/"
    secrets.append(token)
    shown.append(f"/app/password-reset/{uid}/[redacted]/")

    # An acknowledge link: shown, then posted.
    ack = live.shell(ACK_LINK).strip().splitlines()[-1]
    assert httpx.get(live.base + ack, timeout=30).status_code == 200
    posted = httpx.post(live.base + ack, timeout=30)
    # Acknowledged, or (the embedded worker's sweep closes an incident without a healthcheck) resolved
    # first: either way the signed link was good and posted; what is logged is the point here.
    assert posted.status_code in (200, 409), posted.text
    secrets.append(ack.strip("/").rsplit("/", 1)[1])
    shown.append("/alerts/ack/[redacted]/")

    # A key in a query string, and a status page's token paths (their 404s log "Not Found: <path>").
    key = "upt_" + "k3y" * 12
    httpx.get(f"{live.base}/api/v1/healthchecks/?api_key={key}&page=1", timeout=30)
    confirm = "confirm-" + "s3cr3t" * 6
    httpx.get(f"{live.base}/s/demo/subscribe/confirm/{confirm}/", timeout=30)
    badge = "badge-" + "t0k3n" * 6
    httpx.get(f"{live.base}/s/nowhere/badges/{badge}/status.svg", timeout=30)
    # A heartbeat's ping URL (an unknown one: 404), posted as a job's failure would be.
    ping = "0c0ffee0-1234-4321-8888-5ec2e75ec2e7"
    assert httpx.post(f"{live.base}/ping/{ping}/fail", content=b"boom", timeout=30).status_code == 404
    secrets += [key, confirm, badge, ping]
    shown += [
        "/api/v1/healthchecks/?api_key=[redacted]&page=1",
        "/s/demo/subscribe/confirm/[redacted]/",
        "/s/nowhere/badges/[redacted]/status.svg",
    ]

    live.stop()  # every worker has written and flushed its lines
    log = live.output()
    for secret in secrets:
        assert secret not in log, secret
    for redacted in shown:
        assert redacted in log, (redacted, log[-3000:])
