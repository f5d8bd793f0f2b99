"""Route a verified custom domain's requests: its status page at the root, and nothing else of Uptimy's."""

from django.urls import include, path

from monitors.views import not_found

urlpatterns = [
    path("", include(("statuspages.urls", "statuspages"), namespace="statuspage-domain")),
]

handler404 = not_found
