from django.apps import AppConfig


class StatuspagesConfig(AppConfig):
    """Public status pages, their subscribers, badges, feeds and the Statuspage-compatible JSON."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "statuspages"

    def ready(self) -> None:
        # Register the tasks in every process, the embedded worker's included: it runs each
        # beat entry by task name, and monitors (below statuspages) must not import them.
        from monitors.signals import demo_ready
        from statuspages import tasks  # noqa: F401
        from statuspages.demo import demo_status_page

        demo_ready.connect(demo_status_page, dispatch_uid="statuspages.demo_status_page")
