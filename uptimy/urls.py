"""Mount every app's routes: the health endpoint, the metrics, the admin, sign-in, the REST API, the web app, the status pages and the reports."""

from django.contrib import admin
from django.urls import include, path

from monitors.views import healthz, not_found
from signin.urls import oauth_urlpatterns, well_known_urlpatterns
from uptimy.home import home
from uptimy.metrics import metrics

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics, name="metrics"),
    path("admin/", admin.site.urls),
    # Sign-in from an assistant: RFC 8414 and RFC 9728 fix the well-known paths at the root.
    path("", include((well_known_urlpatterns, "signin"), namespace="signin-well-known")),
    path("oauth/", include((oauth_urlpatterns, "signin"), namespace="signin")),
    path("api/v1/status-pages/", include("statuspages.api.urls")),
    path("api/v1/reports/", include("reports.api.urls")),
    path("api/v1/directory/", include("directory.api.urls")),
    path("api/v1/", include("monitors.api.urls")),
    path("api/v1/", include("alerts.api.urls")),
    path("alerts/", include("alerts.urls")),
    # The public MCP server directory: no sign-in.
    path("directory/", include("directory.urls", namespace="directory")),
    path("s/<slug:slug>/", include(("statuspages.urls", "statuspages"), namespace="statuspage")),
    # The web app under /app/: at the root its sign-in and other pages would hide a custom domain's.
    path("app/", include("web.urls", namespace="web")),
    path("", home, name="home"),
    # Last: a verified custom domain's page answers at the root, found by the Host header.
    path("", include(("statuspages.urls", "statuspages"), namespace="statuspage-domain")),
]

# A 404 names what is missing (the view's Http404 sentence), never Django's generic page.
handler404 = not_found
