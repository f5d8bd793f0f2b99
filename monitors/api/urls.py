"""Declare every /api/v1/ route of the monitors app; uptimy.urls mounts them."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from monitors.api.audit import AuditEventViewSet
from monitors.api.views import (
    CheckRunView,
    HealthcheckViewSet,
    MaintenanceWindowViewSet,
    OrganizationViewSet,
    RegionViewSet,
)

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("healthchecks", HealthcheckViewSet, basename="healthcheck")
router.register("regions", RegionViewSet, basename="region")
router.register("audit-events", AuditEventViewSet, basename="audit-event")
router.register("maintenance-windows", MaintenanceWindowViewSet, basename="maintenance-window")

urlpatterns = [
    path("", include(router.urls)),
    path("checks/run/", CheckRunView.as_view(), name="check-run"),
    path("organization/", OrganizationViewSet.as_view({"get": "retrieve"}), name="organization"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
]
