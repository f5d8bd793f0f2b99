from django.apps import AppConfig


class AlertsConfig(AppConfig):
    """Incidents, channels and the notification ledger."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "alerts"

    def ready(self) -> None:
        # Register the alerts tasks in every process, the embedded worker's included: it runs
        # each beat entry by task name, and monitors (below alerts) must not import them.
        from alerts import tasks  # noqa: F401
        from alerts.receivers import answer_acknowledgements
        from monitors.signals import acknowledgements_asked

        # Acknowledgements are alerts' own; reports (a sibling) read them through monitors' signal.
        acknowledgements_asked.connect(answer_acknowledgements, dispatch_uid="alerts.answer_acknowledgements")
