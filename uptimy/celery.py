"""Build the Celery app; with no REDIS_URL there is no broker and work runs in process."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "uptimy.settings")

app = Celery("uptimy")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Each app keeps its tasks with its worker code (monitors.worker.tasks), not in <app>/tasks.py.
app.autodiscover_tasks(["monitors.worker"])
