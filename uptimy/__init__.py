"""Uptimy: settings, URLs, the Celery app and the command-line client."""

from uptimy.celery import app as celery_app

__all__ = ("celery_app",)
