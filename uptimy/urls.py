from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from monitors.api import HealthcheckViewSet, OrganizationViewSet, RegionViewSet
from monitors.views import healthz

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("healthchecks", HealthcheckViewSet, basename="healthcheck")
router.register("regions", RegionViewSet, basename="region")

api_v1 = [
    path("", include(router.urls)),
    path("organization/", OrganizationViewSet.as_view({"get": "retrieve"}), name="organization"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
]

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
]
