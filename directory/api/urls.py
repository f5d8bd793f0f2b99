"""Declare /api/v1/directory/: the public, read-only JSON of the directory."""

from django.urls import path

from directory import converters  # noqa: F401  (registers the "server" converter)
from directory.api import views

urlpatterns = [
    path("servers/", views.ServerListView.as_view(), name="directory-server-list"),
    path("servers/<server:name>/", views.ServerDetailView.as_view(), name="directory-server-detail"),
]
