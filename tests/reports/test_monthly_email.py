"""The monthly email: last month's PDF to the owners who opted in, once per organization and month, through real SMTP."""

from __future__ import annotations

import email
import io
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from pypdf import PdfReader

from monitors.models import Membership
from reports import services
from reports.models import MonthlyReportSent, ReportSettings
from reports.tasks import send_monthly

pytestmark = pytest.mark.django_db

# An hour into November in UTC: October's report is due.
FIRST_OF_NOVEMBER = datetime(2026, 11, 1, 1, 0, tzinfo=UTC)


@pytest.fixture
def smtp(settings, smtp_server):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = smtp_server.port
    settings.EMAIL_USE_TLS = False
    settings.EMAIL_HOST_USER = ""
    settings.EMAIL_HOST_PASSWORD = ""
    return smtp_server


def member(org, name, role, *, opted_in=True):
    user = get_user_model().objects.create_user(username=name, email=f"{name}@example.com")
    membership = Membership.objects.create(user=user, organization=org, role=role)
    if opted_in:
        services.monthly_report_opt_in(membership=membership)
    return membership


@pytest.fixture
def owners(org):
    return [
        member(org, "ada", Membership.Role.OWNER),
        member(org, "bob", Membership.Role.OWNER, opted_in=False),
        member(org, "cyd", Membership.Role.ADMIN),  # opted in, but not an owner
    ]


def messages(smtp):
    return [(rcpt, email.message_from_bytes(content)) for _, rcpt, content in smtp.handler.messages]


def test_last_month_s_pdf_goes_to_the_opted_in_owners(smtp, owners, history):
    assert services.monthly_reports_send(now=FIRST_OF_NOVEMBER) == 1

    ((rcpt, message),) = messages(smtp)
    assert rcpt == ["ada@example.com"]
    assert message["Subject"] == "acme: availability report 2026-10"
    (attachment,) = [part for part in message.walk() if part.get_content_type() == "application/pdf"]
    assert attachment.get_filename() == "uptimy-acme-2026-10.pdf"
    text = PdfReader(io.BytesIO(attachment.get_payload(decode=True))).pages[0].extract_text()
    assert "2026-10" in text
    assert "99.93 %" in text
    sent = MonthlyReportSent.objects.get()
    assert (sent.month.isoformat(), sent.recipients, sent.sent_at) == ("2026-10-01", 1, FIRST_OF_NOVEMBER)


def test_a_month_is_sent_once_however_often_the_task_runs(smtp, owners, history):
    services.monthly_reports_send(now=FIRST_OF_NOVEMBER)
    assert services.monthly_reports_send(now=FIRST_OF_NOVEMBER + timedelta(hours=1)) == 0
    assert services.monthly_reports_send(now=FIRST_OF_NOVEMBER + timedelta(days=20)) == 0
    assert len(smtp.handler.messages) == 1
    # December's run sends November's.
    assert services.monthly_reports_send(now=FIRST_OF_NOVEMBER + timedelta(days=30)) == 1


def test_the_month_is_read_in_the_organization_s_zone(smtp, org, owners, history):
    ReportSettings.objects.create(organization=org, time_zone="America/Los_Angeles")
    # 1 November 01:00 UTC is still 31 October in Los Angeles: September is the month before.
    services.monthly_reports_send(now=FIRST_OF_NOVEMBER)
    assert MonthlyReportSent.objects.get().month.isoformat() == "2026-09-01"


def test_a_failed_send_releases_the_month_for_the_next_run(settings, owners, history, smtp_server):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", 1, 2  # nothing listens

    assert services.monthly_reports_send(now=FIRST_OF_NOVEMBER) == 0
    assert not MonthlyReportSent.objects.exists()


def test_an_organization_without_opted_in_owners_gets_nothing(smtp, org, history):
    member(org, "bob", Membership.Role.OWNER, opted_in=False)
    assert services.monthly_reports_send(now=FIRST_OF_NOVEMBER) == 0
    assert smtp.handler.messages == []


def test_the_beat_task_runs_the_send(smtp, owners, history, settings):
    assert "reports.send_monthly" in {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    # The task sends the month before now: whatever month that is, one mail to the opted-in owner.
    assert send_monthly() == 1
    assert [rcpt for rcpt, _ in messages(smtp)] == [["ada@example.com"]]
