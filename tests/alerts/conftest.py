"""The channel tests' fixtures: they live in channel_support.py, beside the helpers tests import."""

from tests.alerts.channel_support import alert, receiver, smtp_server

__all__ = ["alert", "receiver", "smtp_server"]
