"""Show and edit the remaining settings: maintenance windows, reports, API keys."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from monitors import selectors, services
from monitors.access_rules import UNUSED_FLAG
from monitors.api.serializers import MaintenanceWindowSerializer
from monitors.errors import ServiceError
from monitors.models import ApiKey, MaintenanceWindow, Membership
from reports import selectors as report_selectors
from reports import services as report_services
from reports.api.views import ReportSettingsSerializer
from web import maintenance_form
from web.access import Seat, member_view
from web.confirm import confirm_delete
from web.form_pages import form_page, form_saved, form_view
from web.forms import ApiKeyForm

# --- settings: maintenance windows -----------------------------------------------------------------


def _maintenance_page(
    request: HttpRequest,
    seat: Seat,
    values: dict[str, Any] | None = None,
    errors: dict[str, list[str]] | None = None,
    status: int = 200,
) -> HttpResponse:
    now = timezone.now()
    states = selectors.maintenance_window_states(organization=seat.organization, at=now)
    healthchecks = list(
        selectors.healthchecks_of(organization=seat.organization)
        .order_by("name")
        .values_list("public_id", "name")
    )
    names = dict(healthchecks)
    windows = []
    for window in selectors.maintenance_windows_of(organization=seat.organization).order_by(
        "starts_at", "id"
    ):
        current, upcoming = states.get(window.id, (None, None))
        windows.append(
            {
                "window": window,
                "current": current,
                "next": upcoming,
                "healthchecks": sorted(names.get(hc.public_id, "") for hc in window.healthchecks.all()),
                "tags": sorted(tag.name for tag in window.tag_rows.all()),
            }
        )
    return form_page(
        request,
        "web/settings/maintenance.html",
        seat,
        values=values or {"timezone": "UTC", "healthchecks": []},
        errors=errors,
        status=status,
        windows=windows,
        healthchecks=healthchecks,
    )


@require_http_methods(["GET", "HEAD", "POST"])
@member_view()
def maintenance(request: HttpRequest, seat: Seat) -> HttpResponse:
    """List the organization's maintenance windows; add a one-off or recurring one (the API's checks)."""
    return form_view(
        request,
        maintenance_form,
        MaintenanceWindowSerializer,
        page=partial(_maintenance_page, request, seat),
        save=lambda valid: services.maintenance_window_create(
            organization=seat.organization, **valid.to_service_changes()
        ),
        done=lambda window: f"Added the maintenance window {window.name}.",
        to="web:maintenance",
    )


def _window(seat: Seat, public_id: str) -> MaintenanceWindow:
    """Return the organization's maintenance window; another organization's (or none) is a 404."""
    try:
        return selectors.maintenance_windows_of(organization=seat.organization).get(public_id=public_id)
    except (MaintenanceWindow.DoesNotExist, ValueError):
        raise Http404("No such maintenance window.") from None


def _maintenance_edit_page(
    request: HttpRequest,
    seat: Seat,
    window: MaintenanceWindow,
    values: dict[str, Any],
    errors: dict[str, list[str]] | None = None,
) -> HttpResponse:
    return form_page(
        request,
        "web/settings/maintenance_edit.html",
        seat,
        values=values,
        errors=errors,
        status=400 if errors else 200,
        window=window,
        healthchecks=list(
            selectors.healthchecks_of(organization=seat.organization)
            .order_by("name")
            .values_list("public_id", "name")
        ),
    )


@require_http_methods(["GET", "HEAD", "POST"])
@member_view()
def maintenance_edit(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    """Show a window's form (GET); change it as ``PUT /api/v1/maintenance-windows/{id}/`` does (POST)."""
    window = _window(seat, public_id)
    if request.method != "POST":
        return _maintenance_edit_page(request, seat, window, maintenance_form.values_of(window))
    values = maintenance_form.typed(request.POST)
    serializer = MaintenanceWindowSerializer(window, data=maintenance_form.edit_body(values, window))
    return form_saved(
        request,
        serializer,
        lambda: services.maintenance_window_update(
            window=window, changes=serializer.to_service_changes(), partial=False
        ),
        again=lambda errors: _maintenance_edit_page(request, seat, window, values, errors),
        done=f"Saved the maintenance window {window.name}.",
        to="web:maintenance",
    )


@require_http_methods(["GET", "HEAD", "POST"])
@member_view(writers_only=True)
def maintenance_delete(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    """Ask to confirm (GET), then delete the window (POST)."""
    window = _window(seat, public_id)
    return confirm_delete(
        request,
        seat,
        name=window.name,
        consequence=(
            "Its healthchecks are no longer held during its occurrences; results already recorded keep their flag."
        ),
        delete=lambda: services.maintenance_window_delete(window=window),
        done=f"Deleted the maintenance window {window.name}.",
        done_url=reverse("web:maintenance"),
        back_url=reverse("web:maintenance"),
    )


# --- settings: reports -----------------------------------------------------------------------------


def _reports_page(
    request: HttpRequest,
    seat: Seat,
    errors: dict[str, list[str]] | None = None,
    status: int = 200,
    **typed: str,
) -> HttpResponse:
    found = report_selectors.report_settings_of(organization=seat.organization)
    return form_page(
        request,
        "web/settings/reports.html",
        seat,
        values={"sla_target": f"{found.sla_target:.3f}", "time_zone": found.time_zone, **typed},
        errors=errors,
        status=status,
        is_owner=seat.role == Membership.Role.OWNER,
        opted_in=report_selectors.monthly_report_opted_in(membership=seat.membership),
    )


@require_http_methods(["GET", "HEAD", "POST"])
@member_view()
def report_settings(request: HttpRequest, seat: Seat) -> HttpResponse:
    """Show and change the default SLA target and the monthly reports' time zone (the API's checks)."""
    if request.method != "POST":
        return _reports_page(request, seat)
    typed = {key: request.POST.get(key, "").strip() for key in ("sla_target", "time_zone")}
    serializer = ReportSettingsSerializer(data={key: value for key, value in typed.items() if value})
    return form_saved(
        request,
        serializer,
        lambda: report_services.report_settings_update(
            organization=seat.organization, **serializer.validated_data
        ),
        again=lambda errors: _reports_page(request, seat, errors, status=400, **typed),
        done="Saved the report settings.",
        to="web:reports",
    )


@require_POST
@member_view()
def monthly_report(request: HttpRequest, seat: Seat) -> HttpResponse:
    """Opt the signed-in member in to (or out of) the monthly report email; owners receive it."""
    if request.POST.get("monthly") == "on":
        report_services.monthly_report_opt_in(membership=seat.membership)
        messages.success(request, "You will receive last month's report by email early each month.")
    else:
        report_services.monthly_report_opt_out(membership=seat.membership)
        messages.success(request, "You will no longer receive the monthly report.")
    return redirect("web:reports")


# --- settings: API keys -----------------------------------------------------------------------------


@require_http_methods(["GET", "HEAD", "POST"])
@member_view(manage=True)
def api_keys(request: HttpRequest, seat: Seat) -> HttpResponse:
    """List the organization's API keys; create one, shown once."""
    form = ApiKeyForm(request.POST or None)
    created = None
    if request.method == "POST" and form.is_valid():
        scope = ApiKey.Scope.READ if form.cleaned_data["read_only"] else ApiKey.Scope.READ_WRITE
        expires_on = form.cleaned_data["expires_on"]
        try:
            key, raw = services.api_key_create(
                organization=seat.organization,
                name=form.cleaned_data["name"],
                scope=scope,
                expires_at=datetime.combine(expires_on, datetime.min.time(), tzinfo=UTC)
                if expires_on
                else None,
            )
        except ServiceError as refused:
            form.add_error("expires_on" if refused.field == "expires_at" else None, refused.message)
        else:
            created = {"key": key, "raw": raw}
            form = ApiKeyForm()
    keys = selectors.api_keys_listed(organization=seat.organization, now=timezone.now())
    response = render(
        request,
        "web/settings/api_keys.html",
        {"seat": seat, "form": form, "keys": keys, "created": created, "unused_flag": UNUSED_FLAG},
        status=400 if form.errors else 200,
    )
    # The raw key is on this page only: no cache may keep it.
    response["Cache-Control"] = "no-store"
    return response


@require_POST
@member_view(manage=True)
def api_key_revoke(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    try:
        key = selectors.api_keys_of(organization=seat.organization).get(public_id=public_id)
    except (ApiKey.DoesNotExist, ValueError):
        raise Http404("No such API key.") from None
    services.api_key_revoke(api_key=key, now=timezone.now())
    messages.success(request, f"Revoked {key.prefix}…; calls with it now answer 401.")
    return redirect("web:api-keys")
