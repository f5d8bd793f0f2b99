"""Celery tasks of reports: thin, named stably (queued messages outlive deploys)."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from reports import services


@shared_task(name="reports.send_monthly")
def send_monthly() -> int:
    """Send last month's reports that have not gone out yet (the beat runs this hourly)."""
    return services.monthly_reports_send(now=timezone.now())
