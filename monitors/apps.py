from django.apps import AppConfig


class MonitorsConfig(AppConfig):
    """Tenancy, healthchecks, their schedule and results: the core every other app reads."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "monitors"
