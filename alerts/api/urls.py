"""Declare the alerts app's /api/v1/ routes; uptimy.urls mounts them."""

from django.urls import include, path
from rest_framework.routers import DefaultRouter

from alerts.api.views import IncidentViewSet

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("incidents", IncidentViewSet, basename="incident")

urlpatterns = [path("", include(router.urls))]
