"""The channel tests' fixtures: they live in channel_support.py, beside the helpers tests import."""

from tests.alerts.channel_support import alert, dns, receiver, smtp_server, tls_receiver

__all__ = ["alert", "dns", "receiver", "smtp_server", "tls_receiver"]
