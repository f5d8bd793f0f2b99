from django.apps import AppConfig


class AlertsConfig(AppConfig):
    """Incidents, channels and the notification ledger (built by a later issue)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "alerts"
