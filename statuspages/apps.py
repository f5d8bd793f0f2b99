from django.apps import AppConfig


class StatuspagesConfig(AppConfig):
    """Public status pages, badges, feeds and reports (built by a later issue)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "statuspages"
