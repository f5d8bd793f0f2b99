"""Declare the public directory's pages: /directory/, a server's page and its badge (no sign-in).

A server name holds a slash and dots (``io.github.octocat/notes``): its page is
``/directory/<namespace>/<name>/`` and its badge ``/directory/<namespace>/<name>/badge.svg``; the
trailing slash keeps a server named ``…/badge.svg`` apart from a badge.
"""

from __future__ import annotations

from django.urls import path

from directory import (
    converters,  # noqa: F401  (registers the "server" converter)
    views,
)

app_name = "directory"
urlpatterns = [
    path("", views.directory_page, name="index"),
    path("<server:name>/", views.server_page, name="server"),
    path("<server:name>/badge.svg", views.server_badge, name="badge"),
]
