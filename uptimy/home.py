"""Answer the site's root: a verified custom domain's status page, else the web app."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse

from statuspages import views as statuspage_views
from statuspages.selectors import page_by_domain


def home(request: HttpRequest) -> HttpResponse:
    """Serve the status page of the Host's custom domain at "/", as before the web app; otherwise go to the app."""
    if page_by_domain(host=request.get_host()) is not None:
        return statuspage_views.page(request)
    return HttpResponseRedirect(reverse("web:dashboard"))
