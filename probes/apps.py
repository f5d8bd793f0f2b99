from django.apps import AppConfig


class ProbesConfig(AppConfig):
    """Register the engine's commands (mcpcheck); the engine itself never imports Django."""

    name = "probes"
