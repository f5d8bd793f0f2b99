"""The ping endpoint as gunicorn serves it: uptimy.asgi routes /ping/ past Django's middleware, with the same answers."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from monitors.models import Heartbeat, Ping
from monitors.services.heartbeats import MAX_BODY_BYTES

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

NIGHTLY = {"schedule": {"cron": "0 3 * * *", "tz": "Europe/Paris"}, "grace": 300}


def send(method: str, path: str, **kwargs: object) -> httpx.Response:
    from uptimy.asgi import application

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=application, client=("203.0.113.9", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://uptimy.example") as client:
            return await client.request(method, path, **kwargs)

    return asyncio.run(go())


@pytest.fixture
def ping_path(client) -> str:
    body = client.post(
        "/api/v1/healthchecks/", {"name": "nightly", "type": "heartbeat", "config": NIGHTLY}, format="json"
    ).json()
    return f"/ping/{Heartbeat.objects.get(healthcheck__public_id=body['id']).ping_id}"


def test_a_ping_is_stored_with_its_source_agent_and_capped_body(ping_path):
    answer = send(
        "POST", f"{ping_path}/3", content=b"x" * (MAX_BODY_BYTES + 10), headers={"User-Agent": "cron/1\x00"}
    )

    assert (answer.status_code, answer.text, answer.headers["content-type"]) == (
        200,
        "OK",
        "text/plain; charset=utf-8",
    )
    assert "set-cookie" not in answer.headers
    ping = Ping.objects.get()
    assert (ping.kind, ping.exit_status, ping.source, len(ping.body)) == (
        "exit",
        3,
        "203.0.113.9",
        MAX_BODY_BYTES,
    )
    assert "\x00" not in ping.user_agent
    assert Heartbeat.objects.get().ping_count == 1


@pytest.mark.parametrize(
    ("method", "suffix", "status", "text"),
    [
        ("HEAD", "", 200, ""),
        ("GET", "/start", 200, "OK"),
        ("GET", "/256", 404, "Not found"),
        ("GET", "/fail/more", 404, "Not found"),
        ("PUT", "", 405, "Method not allowed"),
    ],
)
def test_answers_match_the_django_view(ping_path, method, suffix, status, text):
    answer = send(method, ping_path + suffix)

    assert (answer.status_code, answer.text) == (status, text)


@pytest.mark.parametrize("path", ["/ping/00000000-0000-4000-8000-000000000000", "/ping/not-a-uuid", "/ping/"])
def test_an_unknown_or_malformed_ping_id_is_404(path):
    assert send("GET", path).status_code == 404
