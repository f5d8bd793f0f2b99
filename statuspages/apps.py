from django.apps import AppConfig


class StatuspagesConfig(AppConfig):
    """Public status pages, badges, feeds and the Statuspage-compatible JSON."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "statuspages"

    def ready(self) -> None:
        from monitors.signals import demo_ready
        from statuspages.demo import demo_status_page

        demo_ready.connect(demo_status_page, dispatch_uid="statuspages.demo_status_page")
