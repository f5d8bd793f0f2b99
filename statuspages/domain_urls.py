"""Route a verified custom domain's requests: its status page at the root, and nothing else of Uptimy's."""

from django.urls import include, path

urlpatterns = [
    path("", include(("statuspages.urls", "statuspages"), namespace="statuspage-domain")),
]
