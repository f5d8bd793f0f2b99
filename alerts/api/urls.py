"""Declare the alerts app's /api/v1/ routes; uptimy.urls mounts them."""

from django.urls import include, path
from rest_framework.routers import DefaultRouter

from alerts.api.views import ChannelViewSet, IncidentViewSet

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("incidents", IncidentViewSet, basename="incident")
router.register("channels", ChannelViewSet, basename="channel")

urlpatterns = [path("", include(router.urls))]
