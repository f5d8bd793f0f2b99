"""The Apprise channel: json:// and form:// to a loopback receiver, and every request its plugins make guarded."""

from __future__ import annotations

import json
import logging
import tracemalloc
from urllib.parse import parse_qs

import pytest
import requests

import alerts.channels.http
from alerts.channels import EventType, channel_kind
from tests.alerts.channel_support import Reply, make_alert

KIND = channel_kind("apprise")
TOKEN = "tok_live_9d8c7b6a5f"


def send(url: str, alert, *, allow_private: bool = True, timeout: float = 5.0):
    return KIND.send(KIND.parse({"url": url}), alert, timeout=timeout, allow_private=allow_private)


def json_url(receiver, path: str = "/hook") -> str:
    return f"json://127.0.0.1:{receiver.port}{path}"


def test_json_delivers_title_and_body(receiver, alert):
    attempt = send(json_url(receiver), alert)
    assert attempt.ok, attempt.error
    assert attempt.status_code == 200
    got = receiver.received[0]
    payload = json.loads(got.body)
    assert payload["title"] == "DOWN: Docs MCP — Required tools missing: search_docs"
    assert "Failing regions: eu-west (tools_missing), us-east (timeout)" in payload["message"]
    assert payload["type"] == "failure"
    assert got.headers["host"] == f"127.0.0.1:{receiver.port}"


def test_form_delivers_fields(receiver):
    attempt = send(f"form://127.0.0.1:{receiver.port}/form", make_alert(EventType.INCIDENT_RESOLVED))
    assert attempt.ok, attempt.error
    fields = parse_qs(receiver.received[0].body.decode())
    assert fields["title"] == ["RECOVERED: Docs MCP"]
    assert fields["type"] == ["success"]


def test_a_private_address_is_refused_before_anything_is_sent(receiver, alert):
    attempt = send(json_url(receiver), alert, allow_private=False)
    assert not attempt.ok
    assert "127.0.0.1 is a loopback address" in attempt.error
    assert attempt.permanent
    assert receiver.received == []


def test_a_slack_url_goes_through_the_address_guard(dns, alert):
    dns.answers["hooks.slack.com"] = "127.0.0.1"
    url = "https://hooks.slack.com/services/T1ABCDEFG/B1ABCDEFG/abcdefghijklmnopqrstuvwx"
    attempt = send(url, alert, allow_private=False)
    assert not attempt.ok
    assert attempt.error.startswith("hooks.slack.com resolves to 127.0.0.1, a loopback address")
    assert "abcdefghijklmnopqrstuvwx" not in attempt.error


def test_a_slack_delivery_connects_to_the_checked_address(dns, alert):
    # The name resolves to 127.0.0.9 (nothing listens on its port 443): the socket goes to that address.
    dns.answers["hooks.slack.com"] = "127.0.0.9"
    url = "slack://T1ABCDEFG/B1ABCDEFG/abcdefghijklmnopqrstuvwx"
    attempt = send(url, alert, allow_private=True, timeout=3)
    assert not attempt.ok
    assert "hooks.slack.com (127.0.0.9) port 443" in attempt.error


def test_a_redirect_is_not_followed(receiver, alert):
    receiver.answer(Reply(status=302, headers=(("Location", "http://10.0.0.5/admin"),)))
    attempt = send(json_url(receiver), alert)
    assert not attempt.ok
    assert attempt.status_code == 302
    assert "a redirect to 10.0.0.5" in attempt.error
    assert len(receiver.received) == 1


@pytest.mark.parametrize(
    ("reply", "permanent", "retry_after"),
    [
        (Reply(status=410), True, None),
        (Reply(status=500), False, None),
        (Reply(status=429, headers=(("Retry-After", "45"),)), False, 45.0),
    ],
)
def test_error_answers_fail_the_attempt(receiver, alert, reply, permanent, retry_after):
    receiver.answer(reply)
    attempt = send(json_url(receiver), alert)
    assert (attempt.ok, attempt.status_code, attempt.permanent, attempt.retry_after) == (
        False,
        reply.status,
        permanent,
        retry_after,
    )
    assert attempt.error.startswith(f"127.0.0.1 answered HTTP {reply.status}")


def test_a_receiver_that_never_answers_ends_in_a_bounded_attempt(receiver, alert):
    receiver.answer(Reply(hang=True))
    attempt = send(json_url(receiver), alert, timeout=0.5)
    assert not attempt.ok
    assert "did not answer within" in attempt.error


def test_a_10_mb_answer_is_not_buffered(receiver, alert):
    receiver.answer(Reply(status=200, stream_bytes=10 * 1024 * 1024))
    tracemalloc.start()
    try:
        attempt = send(json_url(receiver), alert)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert attempt.ok
    assert peak < 4 * 1024 * 1024
    assert receiver.wait_streamed() < 10 * 1024 * 1024


def test_the_url_tokens_never_reach_an_error_or_the_logs(receiver, alert, caplog):
    caplog.set_level(logging.DEBUG)
    url = f"json://user:{TOKEN}@127.0.0.1:{receiver.port}/hooks/{TOKEN}?+X-Api-Key={TOKEN}x"
    receiver.answer(Reply(status=401, body=f"bad key {TOKEN}x for /hooks/{TOKEN}".encode()))
    attempt = send(url, alert)
    assert not attempt.ok
    assert TOKEN not in attempt.error
    assert TOKEN not in caplog.text
    # The receiver did get the credentials: they went to the origin they were given for.
    assert receiver.received[0].headers["x-api-key"] == f"{TOKEN}x"


def test_requests_outside_a_delivery_are_untouched(receiver):
    answer = requests.get(receiver.url("/plain"), timeout=5)
    assert answer.status_code == 200
    assert receiver.received[0].path == "/plain"


def test_a_test_alert_is_delivered(receiver):
    attempt = send(json_url(receiver), make_alert(EventType.CHANNEL_TEST))
    assert attempt.ok
    assert json.loads(receiver.received[0].body)["title"] == "Test alert from Uptimy for Acme"


def test_one_delivery_is_one_try_whatever_the_url_asks(receiver, alert):
    receiver.default = Reply(status=500)
    attempt = send(json_url(receiver) + "?retry=5&wait=20", alert)
    assert not attempt.ok
    assert len(receiver.received) == 1


def test_every_allowed_scheme_is_an_apprise_service():
    from apprise.manager_plugins import NotificationManager

    from alerts.channels.apprise import ALLOWED_SCHEMES

    assert not ALLOWED_SCHEMES - set(NotificationManager().schemas())


def test_https_services_keep_their_name_for_sni_and_host(tls_receiver, monkeypatch, alert):
    monkeypatch.setattr(alerts.channels.http, "default_ssl_context", lambda: tls_receiver.client)
    receiver = tls_receiver.receiver
    attempt = send(f"jsons://hooks.test:{receiver.port}/hook", alert)
    assert attempt.ok, attempt.error
    assert receiver.received[0].headers["host"] == f"hooks.test:{receiver.port}"
