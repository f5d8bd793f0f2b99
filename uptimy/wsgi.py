"""Expose the WSGI callable that gunicorn serves."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "uptimy.settings")
application = get_wsgi_application()
