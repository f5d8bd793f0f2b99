"""Cover the report models in the Django admin: targets, opt-ins, and what was sent."""

from __future__ import annotations

from django.contrib import admin

from monitors.admin import ModelAdmin
from reports.models import HealthcheckTarget, MonthlyReportOptIn, MonthlyReportSent, ReportSettings


@admin.register(ReportSettings)
class ReportSettingsAdmin(ModelAdmin[ReportSettings]):
    list_display = ("organization", "sla_target", "time_zone")


@admin.register(HealthcheckTarget)
class HealthcheckTargetAdmin(ModelAdmin[HealthcheckTarget]):
    list_display = ("healthcheck", "sla_target")
    raw_id_fields = ("healthcheck",)


@admin.register(MonthlyReportOptIn)
class MonthlyReportOptInAdmin(ModelAdmin[MonthlyReportOptIn]):
    list_display = ("membership", "created_at")
    raw_id_fields = ("membership",)


@admin.register(MonthlyReportSent)
class MonthlyReportSentAdmin(ModelAdmin[MonthlyReportSent]):
    list_display = ("organization", "month", "claimed_at", "sent_at", "recipients")
    readonly_fields = ("organization", "month", "claimed_at", "sent_at", "recipients")
