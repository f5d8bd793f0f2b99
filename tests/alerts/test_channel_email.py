"""The email channel through Django's SMTP backend to a real SMTP server (aiosmtpd) on loopback."""

from __future__ import annotations

import email
import socket
from email.message import EmailMessage
from email.policy import default

import pytest
from django.core.mail import get_connection

from alerts.channels import EventType, channel_kind
from tests.alerts.channel_support import make_alert, make_notice

KIND = channel_kind("email")


def smtp(port: int):
    return get_connection(
        "django.core.mail.backends.smtp.EmailBackend", host="127.0.0.1", port=port, timeout=5
    )


def send(config, alert, port: int):
    return KIND.send(config, alert, timeout=5, allow_private=False, mail_connection=smtp(port))


def received(smtp_server, index: int = 0) -> EmailMessage:
    _, _, content = smtp_server.handler.messages[index]
    message = email.message_from_bytes(content, policy=default)
    assert isinstance(message, EmailMessage)
    return message


def test_an_alert_arrives_with_text_and_html_parts(smtp_server, alert):
    config = KIND.parse({"recipients": ["oncall@example.com", "Lead@Example.com"]})
    attempt = send(config, alert, smtp_server.port)
    assert attempt.ok, attempt.error
    _, rcpt_tos, _ = smtp_server.handler.messages[0]
    assert rcpt_tos == ["oncall@example.com", "lead@example.com"]
    message = received(smtp_server)
    # A non-ASCII subject is folded onto an encoded second line: unfolded, it starts with a space.
    assert message["Subject"].strip() == "[Uptimy] DOWN: Docs MCP — Required tools missing: search_docs"
    assert message["Message-ID"] == "<evt_2b7c1f@alerts.uptimy>"
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    assert "Failing regions: eu-west (tools_missing), us-east (timeout)" in text
    assert "Acknowledge: https://app.uptimy.example/ack/signed-token" in text
    assert '<a href="https://app.uptimy.example/ack/signed-token">Acknowledge</a>' in html


def test_a_recovery_threads_under_its_incident(smtp_server):
    config = KIND.parse({"recipients": ["oncall@example.com"]})
    send(
        config,
        make_alert(EventType.INCIDENT_RESOLVED, notices=(make_notice(resolved=True),)),
        smtp_server.port,
    )
    message = received(smtp_server)
    assert message["In-Reply-To"] == f"<incident-{make_notice().incident.id}@alerts.uptimy>"
    assert "Docs MCP is UP again after 12 min." in message.get_body(("plain",)).get_content()


def test_hostile_names_are_escaped_in_html(smtp_server):
    notice = make_notice(name='<script>alert("x")</script>')
    send(KIND.parse({"recipients": ["a@example.com"]}), make_alert(notices=(notice,)), smtp_server.port)
    html = received(smtp_server).get_body(("html",)).get_content()
    assert "<script>" not in html
    assert "&lt;script&gt;" in html


def test_the_default_backend_is_used_when_no_connection_is_given(smtp_server, settings, alert):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = smtp_server.port
    attempt = KIND.send(KIND.parse({"recipients": ["a@example.com"]}), alert, timeout=5, allow_private=False)
    assert attempt.ok, attempt.error
    assert len(smtp_server.handler.messages) == 1


def test_every_recipient_refused_is_permanent(smtp_server, alert):
    attempt = send(KIND.parse({"recipients": ["bounce@example.com"]}), alert, smtp_server.port)
    assert not attempt.ok
    assert attempt.permanent
    assert attempt.status_code == 550
    assert attempt.error == "The mail server refused every recipient (SMTP 550)"


def test_an_unreachable_mail_server_is_a_retryable_attempt(alert):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    attempt = send(KIND.parse({"recipients": ["a@example.com"]}), alert, port)
    assert not attempt.ok
    assert not attempt.permanent
    assert attempt.error.startswith("The mail server could not be reached")


@pytest.mark.parametrize("event_type", list(EventType))
def test_every_event_type_renders_and_sends(smtp_server, event_type):
    notices = tuple(make_notice() for _ in range(3)) if event_type is EventType.INCIDENTS_DIGEST else None
    attempt = send(
        KIND.parse({"recipients": ["a@example.com"]}),
        make_alert(event_type, notices=notices),
        smtp_server.port,
    )
    assert attempt.ok, attempt.error
