"""Set an organization's report defaults, a healthcheck's own target, and who gets the monthly email."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db import transaction

from monitors.errors import ServiceError
from monitors.models import Healthcheck, Membership, Organization
from monitors.services import audit_record
from reports.models import HealthcheckTarget, MonthlyReportOptIn, ReportSettings
from reports.render.period import PeriodError, zone_of


def _valid_target(target: Decimal, field: str) -> Decimal:
    if not Decimal(0) <= target <= Decimal(100):
        raise ServiceError(field, "must be between 0 and 100")
    if target != target.quantize(Decimal("0.001")):
        raise ServiceError(field, "at most three decimals, e.g. 99.95")
    return target


def report_settings_update(
    *, organization: Organization, sla_target: Decimal | None = None, time_zone: str | None = None
) -> ReportSettings:
    """Change the organization's default SLA target and the zone its monthly reports are cut in."""
    with transaction.atomic():
        settings, _ = ReportSettings.objects.select_for_update().get_or_create(organization=organization)
        before = _settings_snapshot(settings)
        if sla_target is not None:
            settings.sla_target = _valid_target(sla_target, "sla_target")
        if time_zone is not None:
            try:
                zone_of(time_zone, field="time_zone")
            except PeriodError as error:
                raise ServiceError(error.field, error.message) from None
            settings.time_zone = time_zone
        settings.save()
        audit_record(
            organization=organization,
            action="report_settings.updated",
            target_type="report_settings",
            target_id=organization.public_id,
            target_name=organization.name,
            before=before,
            after=_settings_snapshot(settings),
        )
    return settings


def _settings_snapshot(settings: ReportSettings) -> dict[str, Any]:
    return {"sla_target": _text(settings.sla_target), "time_zone": settings.time_zone}


def _text(target: Decimal | None) -> str | None:
    # A decimal as its text: JSON has no decimals, and a float would change its digits.
    return str(Decimal(target).quantize(Decimal("0.001"))) if target is not None else None


def healthcheck_target_set(
    *, healthcheck: Healthcheck, sla_target: Decimal | None
) -> HealthcheckTarget | None:
    """Give the healthcheck its own SLA target, or (None) hold it to its organization's default again."""
    with transaction.atomic():
        existing = HealthcheckTarget.objects.select_for_update().filter(healthcheck=healthcheck).first()
        before = _text(existing.sla_target) if existing is not None else None
        target: HealthcheckTarget | None = None
        if sla_target is None:
            HealthcheckTarget.objects.filter(healthcheck=healthcheck).delete()
        else:
            target, _ = HealthcheckTarget.objects.update_or_create(
                healthcheck=healthcheck, defaults={"sla_target": _valid_target(sla_target, "sla_target")}
            )
        after = _text(target.sla_target) if target is not None else None
        audit_record(  # records nothing when the target stays as it was
            organization=healthcheck.organization_id,
            action="healthcheck.sla_target_changed",
            target_type="healthcheck",
            target_id=healthcheck.public_id,
            target_name=healthcheck.name,
            before={"sla_target": before},
            after={"sla_target": after},
        )
    return target


def monthly_report_opt_in(*, membership: Membership) -> MonthlyReportOptIn:
    """Send this member the monthly report (owners only receive it)."""
    opt_in, _ = MonthlyReportOptIn.objects.get_or_create(membership=membership)
    return opt_in


def monthly_report_opt_out(*, membership: Membership) -> None:
    """Stop sending this member the monthly report."""
    MonthlyReportOptIn.objects.filter(membership=membership).delete()
