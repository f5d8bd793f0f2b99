"""Mount every app's routes: the health endpoint, the admin and the REST API."""

from django.contrib import admin
from django.urls import include, path

from monitors.views import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("monitors.api.urls")),
]
