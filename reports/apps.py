from django.apps import AppConfig


class ReportsConfig(AppConfig):
    """Uptime and SLA reports: figures, CSV, PDF, and the monthly email to owners who opt in."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "reports"

    def ready(self) -> None:
        # Register the report tasks in every process, the embedded worker's included: it runs
        # each beat entry by task name, and monitors (below reports) must not import them.
        from reports import tasks  # noqa: F401
