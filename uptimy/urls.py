"""Mount every app's routes: the health endpoint, the metrics, the admin, sign-in, the REST API, the web app, the status pages and the reports."""

from django.contrib import admin
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.urls import include, path, reverse
from django.utils.http import url_has_allowed_host_and_scheme

from monitors.ping_views import ping
from monitors.views import healthz, not_found
from signin.urls import oauth_urlpatterns, well_known_urlpatterns
from uptimy.home import home
from uptimy.metrics import metrics


def _admin_login(request: HttpRequest, extra_context: object = None) -> HttpResponse:
    """Send the admin's sign-in to the web app's, so an account with a second factor is asked for it there too.

    Django's own admin form takes the password alone: a staff account that signed in there would
    hold a session that the web app honours, its second factor skipped.
    """
    if request.user.is_authenticated:
        # Signed in but not staff: sending them to sign in again would loop back here.
        return HttpResponseForbidden("This account has no access to the admin.", content_type="text/plain")
    target = request.GET.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = reverse("admin:index")
    return redirect_to_login(target, reverse("web:login"))


admin.site.login = _admin_login  # type: ignore[method-assign]

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    # Heartbeat pings: no session, no CSRF (monitors/ping_views.py).
    path("ping/<uuid:ping_id>", ping, name="ping"),
    path("ping/<uuid:ping_id>/<str:action>", ping, name="ping-action"),
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
