"""Build the Celery app; with no REDIS_URL there is no broker and work runs in process."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "uptimy.settings")

app = Celery("uptimy")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
