"""Write what reports keep (targets, opt-ins) and send the monthly reports."""

from reports.services.monthly import monthly_reports_send
from reports.services.settings import (
    healthcheck_target_set,
    monthly_report_opt_in,
    monthly_report_opt_out,
    report_settings_update,
)

__all__ = [
    "healthcheck_target_set",
    "monthly_report_opt_in",
    "monthly_report_opt_out",
    "monthly_reports_send",
    "report_settings_update",
]
