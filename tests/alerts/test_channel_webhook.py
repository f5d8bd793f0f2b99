"""The webhook channel against a real receiver on loopback; signatures checked by the standardwebhooks package."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import tracemalloc
from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

import alerts.channels.http
import probes.connection
from alerts.channels import EventType, channel_kind, generate_secret
from alerts.channels.webhook import WebhookConfig, rotate
from tests.alerts.channel_support import Reply, make_alert

KIND = channel_kind("webhook")


def config_for(url: str, **extra: object) -> WebhookConfig:
    return KIND.parse({"url": url, "secret": generate_secret(), **extra})


def send(config: WebhookConfig, alert, *, allow_private: bool = True, timeout: float = 5.0):
    return KIND.send(config, alert, timeout=timeout, allow_private=allow_private)


def test_delivery_is_signed_per_standard_webhooks(receiver, alert):
    config = config_for(receiver.url())
    attempt = send(config, alert)
    assert attempt.ok, attempt.error
    assert attempt.status_code == 200
    got = receiver.received[0]
    assert got.headers["webhook-id"] == alert.event_id
    Webhook(config.secret).verify(got.body, got.headers)


def test_payload_is_versioned_json_naming_the_event(receiver, alert):
    send(config_for(receiver.url()), alert)
    payload = json.loads(receiver.received[0].body)
    assert payload["version"] == 1
    assert payload["type"] == "incident.opened"
    assert payload["id"] == alert.event_id
    assert payload["timestamp"] == "2026-12-01T10:00:00Z"
    assert payload["data"]["incident"]["id"] == alert.notice.incident.id
    assert payload["data"]["cause"]["reason"] == "Required tools missing: search_docs"
    assert payload["data"]["cause"]["regions"][1] == {"region": "us-east", "kind": "timeout", "reason": ""}
    assert payload["data"]["incident"]["acknowledge_url"] == "https://app.uptimy.example/ack/signed-token"


def test_a_retry_carries_the_same_webhook_id(receiver, alert):
    config = config_for(receiver.url())
    receiver.answer(Reply(status=500))
    assert not send(config, alert).ok
    assert send(config, alert).ok
    assert [r.headers["webhook-id"] for r in receiver.received] == [alert.event_id, alert.event_id]


def test_a_signature_under_another_secret_does_not_verify(receiver, alert):
    send(config_for(receiver.url()), alert)
    got = receiver.received[0]
    with pytest.raises(WebhookVerificationError):
        Webhook(generate_secret()).verify(got.body, got.headers)


def test_rotation_signs_with_both_secrets_during_the_overlap(receiver, alert):
    old = config_for(receiver.url())
    rotated = rotate(old, now=datetime.now(UTC))
    assert send(rotated, alert).ok
    got = receiver.received[0]
    assert len(got.headers["webhook-signature"].split(" ")) == 2
    Webhook(rotated.secret).verify(got.body, got.headers)
    Webhook(old.secret).verify(got.body, got.headers)


def test_after_the_overlap_only_the_new_secret_signs(receiver, alert):
    old = config_for(receiver.url())
    rotated = rotate(old, now=datetime.now(UTC) - timedelta(days=2), overlap=timedelta(hours=24))
    send(rotated, alert)
    got = receiver.received[0]
    assert len(got.headers["webhook-signature"].split(" ")) == 1
    Webhook(rotated.secret).verify(got.body, got.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(old.secret).verify(got.body, got.headers)


@pytest.mark.parametrize(
    ("reply", "permanent", "retry_after"),
    [
        (Reply(status=410, body=b"gone"), True, None),
        (Reply(status=500, body=b"boom"), False, None),
        (Reply(status=404, body=b"nope"), False, None),
        (Reply(status=429, headers=(("Retry-After", "120"),)), False, 120.0),
        (Reply(status=503, headers=(("Retry-After", "7"),)), False, 7.0),
        (Reply(status=429), False, None),
    ],
)
def test_error_answers_fail_the_attempt(receiver, alert, reply, permanent, retry_after):
    receiver.answer(reply)
    attempt = send(config_for(receiver.url()), alert)
    assert not attempt.ok
    assert attempt.status_code == reply.status
    assert attempt.permanent is permanent
    assert attempt.retry_after == retry_after
    assert attempt.error.startswith(f"127.0.0.1 answered HTTP {reply.status}")


def test_retry_after_as_an_http_date_is_seconds_from_now(receiver, alert):
    receiver.answer(Reply(status=503, headers=(("Retry-After", "Wed, 21 Oct 2099 07:28:00 GMT"),)))
    attempt = send(config_for(receiver.url()), alert)
    assert attempt.retry_after == 24 * 3600  # clamped


def test_an_error_answer_is_quoted_without_the_secrets_it_echoes(receiver, alert):
    config = config_for(receiver.url("/hooks/tok_live_4c9f2e8a1b"))
    receiver.answer(
        Reply(status=400, body=f"bad signature for {config.secret} at /hooks/tok_live_4c9f2e8a1b".encode())
    )
    attempt = send(config, alert)
    assert "bad signature for [redacted]" in attempt.error
    assert config.secret not in attempt.error
    assert "tok_live_4c9f2e8a1b" not in attempt.error


def test_a_redirect_is_not_followed(receiver, alert):
    receiver.answer(
        Reply(status=307, headers=(("Location", "http://169.254.169.254/latest/meta-data/?token=x"),))
    )
    attempt = send(config_for(receiver.url()), alert)
    assert not attempt.ok
    assert attempt.status_code == 307
    assert "redirect to 169.254.169.254" in attempt.error
    assert "meta-data" not in attempt.error
    assert len(receiver.received) == 1


def test_a_private_address_is_refused_when_private_targets_are_not_allowed(receiver, alert):
    attempt = send(config_for(receiver.url()), alert, allow_private=False)
    assert not attempt.ok
    assert attempt.permanent
    assert "127.0.0.1 is a loopback address" in attempt.error
    assert receiver.received == []


def test_a_name_resolving_to_loopback_is_refused(receiver, alert):
    attempt = send(config_for(receiver.url(host="localhost")), alert, allow_private=False)
    assert not attempt.ok
    assert "localhost resolves to" in attempt.error
    assert receiver.received == []


def test_a_receiver_that_never_answers_ends_in_a_bounded_attempt(receiver, alert):
    receiver.answer(Reply(hang=True))
    attempt = send(config_for(receiver.url()), alert, timeout=0.5)
    assert not attempt.ok
    assert attempt.status_code is None
    assert attempt.error == f"127.0.0.1:{receiver.port} did not answer within 0.5 s"


def test_a_10_mb_answer_is_not_buffered(receiver, alert):
    receiver.answer(Reply(status=200, stream_bytes=10 * 1024 * 1024))
    config = config_for(receiver.url())
    tracemalloc.start()
    try:
        attempt = send(config, alert)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert attempt.ok
    # Buffered, the answer alone would be 10 MiB; tracemalloc also counts what other threads of
    # the test process allocate meanwhile (receivers, servers left by earlier tests), hence the margin.
    assert peak < 6 * 1024 * 1024
    assert receiver.wait_streamed() < 10 * 1024 * 1024


def test_a_10_mb_error_answer_is_not_buffered_either(receiver, alert):
    receiver.answer(Reply(status=500, stream_bytes=10 * 1024 * 1024))
    attempt = send(config_for(receiver.url()), alert)
    assert attempt.status_code == 500
    assert len(attempt.error) < 300


def test_a_closed_port_is_a_failed_attempt(alert):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    attempt = send(config_for(f"http://127.0.0.1:{port}/hook"), alert)
    assert not attempt.ok
    assert "connection refused" in attempt.error


def test_no_secret_reaches_the_logs(receiver, alert, caplog):
    caplog.set_level(logging.DEBUG)
    config = config_for(receiver.url("/hooks/tok_live_4c9f2e8a1b"))
    receiver.answer(Reply(status=500, body=config.secret.encode()))
    attempt = send(config, alert)
    assert not attempt.ok
    for secret in (config.secret, "tok_live_4c9f2e8a1b"):
        assert secret not in caplog.text
        assert secret not in attempt.error


def test_a_test_alert_has_no_healthcheck_data(receiver):
    send(config_for(receiver.url()), make_alert(EventType.CHANNEL_TEST))
    payload = json.loads(receiver.received[0].body)
    assert payload["type"] == "channel.test"
    assert payload["data"] == {"organization": {"name": "Acme"}, "summary": "Test alert from Uptimy for Acme"}


def test_a_name_that_does_not_resolve_is_a_failed_attempt(monkeypatch, alert):
    async def resolve(host: str, port: int, nameservers=()):
        raise socket.gaierror(-2, "the name does not exist")

    monkeypatch.setattr(probes.connection, "resolve_name", resolve)
    attempt = send(config_for("https://hooks.example.com/x"), alert, allow_private=False)
    assert not attempt.ok
    assert attempt.error == "DNS lookup of hooks.example.com failed: the name does not exist"


def test_a_dns_lookup_that_never_ends_is_bounded(monkeypatch, alert):
    async def resolve(host: str, port: int, nameservers=()):
        await asyncio.Event().wait()

    monkeypatch.setattr(probes.connection, "resolve_name", resolve)
    attempt = send(config_for("https://hooks.example.com/x"), alert, allow_private=False, timeout=0.3)
    assert not attempt.ok
    assert attempt.error == "DNS lookup of hooks.example.com got no answer within 0.3 s"


def test_https_connects_to_the_checked_address_and_verifies_the_name(tls_receiver, monkeypatch, alert):
    monkeypatch.setattr(alerts.channels.http, "default_ssl_context", lambda: tls_receiver.client)
    receiver = tls_receiver.receiver
    config = config_for(f"https://hooks.test:{receiver.port}/hook")
    attempt = send(config, alert)
    assert attempt.ok, attempt.error
    assert receiver.received[0].headers["host"] == f"hooks.test:{receiver.port}"
    Webhook(config.secret).verify(receiver.received[0].body, receiver.received[0].headers)


def test_an_untrusted_certificate_fails_the_attempt(tls_receiver, alert):
    receiver = tls_receiver.receiver
    attempt = send(config_for(f"https://hooks.test:{receiver.port}/hook"), alert)
    assert not attempt.ok
    assert attempt.error.startswith("TLS handshake failed")
    assert receiver.received == []
