"""The web app: server-rendered pages (Django templates, htmx) over the same services as the API."""
