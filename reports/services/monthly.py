"""Send last month's report, as a PDF, to each organization's owners who opted in: once per month."""

from __future__ import annotations

import logging
from datetime import date, datetime

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.db import IntegrityError, transaction

from monitors.models import Organization
from reports import selectors
from reports.models import MonthlyReportSent
from reports.pdf import report_pdf
from reports.render.period import month_before, period_of
from reports.render.report import report_data

logger = logging.getLogger(__name__)


def monthly_reports_send(*, now: datetime) -> int:
    """Send each organization with opted-in owners its report of last month, unless already sent; return how many.

    Idempotent per (organization, month): a ``MonthlyReportSent`` row is claimed under its
    unique constraint before the mail goes, so two runs (two beats, a retry) never both send.
    A send that fails releases the claim, and the next hourly run tries again.
    """
    sent = 0
    for organization in selectors.organizations_with_recipients().order_by("id"):
        if _send_one(organization, now):
            sent += 1
    return sent


def _send_one(organization: Organization, now: datetime) -> bool:
    time_zone = selectors.report_settings_of(organization=organization).time_zone
    month = month_before(now, time_zone)
    first = date.fromisoformat(f"{month}-01")
    if MonthlyReportSent.objects.filter(organization=organization, month=first).exists():
        return False
    recipients = selectors.monthly_recipients(organization=organization)
    if not recipients:
        return False
    try:
        with transaction.atomic():
            claim = MonthlyReportSent.objects.create(organization=organization, month=first, claimed_at=now)
    except IntegrityError:
        return False  # another run claimed this month first
    try:
        period = period_of(month=month, start=None, end=None, time_zone=time_zone, now=now)
        data = report_data(selectors.report_build(organization=organization, period=period, now=now))
        pdf = report_pdf(data)
        _mail(organization, month, recipients, data, pdf)
    except Exception:
        # Released so the next run retries; the error goes to the log without the report itself.
        logger.exception("monthly report of %s for %s not sent", organization.slug, month)
        claim.delete()
        return False
    claim.sent_at = now
    claim.recipients = len(recipients)
    claim.save(update_fields=["sent_at", "recipients"])
    return True


def _mail(
    organization: Organization, month: str, recipients: list[str], data: dict[str, object], pdf: bytes
) -> None:
    summary = data["summary"]
    assert isinstance(summary, dict)
    availability = summary["availability"]["percent"]
    body = (
        f"The availability report of {organization.name} for {month} is attached.\n\n"
        f"Availability: {availability if availability is not None else 'no data'}"
        f"{' %' if availability is not None else ''}\n"
        f"Downtime: {summary['availability']['downtime_minutes']} min in "
        f"{summary['availability']['incidents']} incidents\n"
        f"SLA target {summary['sla']['target']} %: "
        f"{'met' if summary['sla']['met'] else 'missed' if summary['sla']['met'] is False else 'no data'}\n\n"
        "You receive this because you opted in to the monthly report as an owner of the organization.\n"
    )
    # One mail per owner, over one connection: owners need not see each other's addresses.
    with get_connection() as connection:
        for address in recipients:
            message = EmailMessage(
                subject=f"{organization.name}: availability report {month}",
                body=body,
                from_email=settings.DEFAULT_FROM_EMAIL,
                to=[address],
                connection=connection,
            )
            message.attach(f"uptimy-{organization.slug}-{month}.pdf", pdf, "application/pdf")
            message.send()
