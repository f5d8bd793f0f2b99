"""What reports keep: service-level targets, the owners who want the monthly email, and what was sent."""

from __future__ import annotations

from decimal import Decimal

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from monitors.models import Healthcheck, Membership, Organization

DEFAULT_SLA_TARGET = Decimal("99.900")
TARGET_VALIDATORS = [MinValueValidator(Decimal(0)), MaxValueValidator(Decimal(100))]


class ReportSettings(models.Model):
    """Hold an organization's report defaults: its SLA target and the zone monthly reports are cut in."""

    organization = models.OneToOneField(
        Organization, on_delete=models.CASCADE, primary_key=True, related_name="report_settings"
    )
    sla_target = models.DecimalField(
        max_digits=6,
        decimal_places=3,
        default=DEFAULT_SLA_TARGET,
        validators=TARGET_VALIDATORS,
        help_text="The availability (%) every healthcheck without its own target is held to.",
    )
    time_zone = models.CharField(
        max_length=64, default="UTC", help_text="The IANA zone monthly reports' months are cut in."
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(sla_target__gte=0) & Q(sla_target__lte=100), name="report_settings_target_range"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.organization}: {self.sla_target} % in {self.time_zone}"


class HealthcheckTarget(models.Model):
    """Hold one healthcheck's own SLA target, over its organization's default."""

    healthcheck = models.OneToOneField(
        Healthcheck, on_delete=models.CASCADE, primary_key=True, related_name="sla_target"
    )
    sla_target = models.DecimalField(max_digits=6, decimal_places=3, validators=TARGET_VALIDATORS)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(sla_target__gte=0) & Q(sla_target__lte=100), name="healthcheck_target_range"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.healthcheck_id}: {self.sla_target} %"


class MonthlyReportOptIn(models.Model):
    """Say that a member wants the monthly report by email; only owners receive it."""

    membership = models.OneToOneField(
        Membership, on_delete=models.CASCADE, primary_key=True, related_name="monthly_report"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.membership}: monthly report"


class MonthlyReportSent(models.Model):
    """Record that an organization's report for a month went out: the beat task sends each month once.

    The row is claimed (``sent_at`` null) before the mails go and completed after; a failed send
    deletes it so a later run retries. The unique constraint is what makes the task idempotent.
    """

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="monthly_reports")
    month = models.DateField(help_text="The first day of the month reported on.")
    claimed_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)
    recipients = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-month", "organization_id"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "month"], name="monthly_report_once"),
        ]

    def __str__(self) -> str:
        return f"{self.organization_id} {self.month:%Y-%m}: {self.recipients} recipients"
