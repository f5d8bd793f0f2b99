"""The secret parts of Uptimy's URLs, as every log line shows them: the table of uptimy.redaction."""

from __future__ import annotations

import logging

import pytest

from uptimy.log_redaction import RedactSecretUrls
from uptimy.redaction import redact_text, redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("/app/password-reset/MQ/cabc12-0123456789abcdef/", "/app/password-reset/MQ/[redacted]/"),
        ("/app/password-reset/MQ/set-password/", "/app/password-reset/MQ/set-password/"),
        ("/app/password-reset/", "/app/password-reset/"),
        ("/app/password-reset/sent/", "/app/password-reset/sent/"),
        ("/app/signup/?invitation=inv.abc:xyz", "/app/signup/?invitation=[redacted]"),
        ("/app/invitations/inv.abc:xyz/", "/app/invitations/[redacted]/"),
        ("/app/login/?next=/app/invitations/inv.abc/", "/app/login/?next=/app/invitations/[redacted]/"),
        (
            "/app/login/?next=%2Fapp%2Finvitations%2Finv.abc%2F",
            "/app/login/?next=/app/invitations/[redacted]/",
        ),
        ("/app/login/?next=/app/", "/app/login/?next=/app/"),
        ("/alerts/ack/eyJpIjoiMSJ9:1t2:sig/", "/alerts/ack/[redacted]/"),
        ("/ping/035c7c84-e273-45bb-9543-cc256a1f4426", "/ping/[redacted]"),
        ("/ping/035c7c84-e273-45bb-9543-cc256a1f4426/fail", "/ping/[redacted]/fail"),
        ("/s/acme/subscribe/confirm/tok123/", "/s/acme/subscribe/confirm/[redacted]/"),
        ("/s/acme/unsubscribe/tok123/", "/s/acme/unsubscribe/[redacted]/"),
        ("/subscribe/confirm/tok123/", "/subscribe/confirm/[redacted]/"),
        ("/unsubscribe/tok123/", "/unsubscribe/[redacted]/"),
        ("/s/acme/badges/bt_secret/status.svg", "/s/acme/badges/[redacted]/status.svg"),
        ("/badges/bt_secret/uptime-24h.json", "/badges/[redacted]/uptime-24h.json"),
        ("/s/acme/subscribe/", "/s/acme/subscribe/"),
        ("/s/acme/history.rss", "/s/acme/history.rss"),
        ("/api/v1/healthchecks/?api_key=upt_live", "/api/v1/healthchecks/?api_key=[redacted]"),
        ("/x?accessToken=a&page=2", "/x?accessToken=[redacted]&page=2"),
        ("/x?X-Amz-Signature=abc&pageToken=next", "/x?X-Amz-Signature=[redacted]&pageToken=next"),
        ("/x?token=a;sort_key=b", "/x?token=[redacted];sort_key=b"),
        ("/oauth/callback?code=c0de&state=s", "/oauth/callback?code=[redacted]&state=s"),
        ("/api/v1/healthchecks/?search=monkey", "/api/v1/healthchecks/?search=monkey"),
        (
            "http://status.example.com/unsubscribe/tok123/?utm=1",
            "http://status.example.com/unsubscribe/[redacted]/?utm=1",
        ),
        ("https://user:pw@example.com/a", "https://[redacted]@example.com/a"),
        ("/app/healthchecks/", "/app/healthchecks/"),
    ],
)
def test_a_url_shows_its_secret_parts_redacted(url, shown):
    assert redact_url(url) == shown


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        (
            '127.0.0.1:5000 - "GET /alerts/ack/tok/ HTTP/1.1" 200',
            '127.0.0.1:5000 - "GET /alerts/ack/[redacted]/ HTTP/1.1" 200',
        ),
        ("Not Found: /app/invitations/tok/", "Not Found: /app/invitations/[redacted]/"),
        (
            '"GET /app/ HTTP/1.1" 200 "http://h/app/password-reset/MQ/tok/" "Mozilla/5.0 (X11)"',
            '"GET /app/ HTTP/1.1" 200 "http://h/app/password-reset/MQ/[redacted]/" "Mozilla/5.0 (X11)"',
        ),
        ("Booting worker with pid: 12", "Booting worker with pid: 12"),
        ("Listening at: http://127.0.0.1:8000 (1)", "Listening at: http://127.0.0.1:8000 (1)"),
    ],
)
def test_a_log_line_shows_every_path_in_it_redacted(line, shown):
    assert redact_text(line) == shown


def test_the_filter_rewrites_a_records_arguments_and_keeps_the_record():
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:1", "GET", "/app/signup/?invitation=secret1", "1.1", 200),
        None,
    )

    assert RedactSecretUrls().filter(record) is True
    assert record.getMessage() == '127.0.0.1:1 - "GET /app/signup/?invitation=[redacted] HTTP/1.1" 200'
