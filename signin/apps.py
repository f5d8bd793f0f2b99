from django.apps import AppConfig


class SigninConfig(AppConfig):
    """Sign-in from an assistant: Uptimy as the OAuth 2.1 authorization server of its MCP server."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "signin"
    verbose_name = "Sign-in from an assistant"

    def ready(self) -> None:
        # Register the tasks in every process, the embedded worker's included: it runs each beat
        # entry by task name, and monitors (below signin) must not import them.
        from signin import tasks  # noqa: F401
