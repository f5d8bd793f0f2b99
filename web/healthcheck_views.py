"""Show, create, edit, run, list and delete one healthcheck, and acknowledge its incident."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import messages
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_http_methods, require_POST

from alerts import selectors as alert_selectors
from alerts import services as alert_services
from alerts.models import Incident
from monitors import selectors, services
from monitors.api.serializers import HealthcheckListingSerializer, HealthcheckSerializer, quote_state
from monitors.errors import ConfigInvalid, ServiceError
from monitors.models import Healthcheck
from monitors.secrets import SecretUnreadable
from monitors.services import listings
from monitors.services.heartbeats import heartbeat_rotate
from monitors.worker.execution import probe_env
from monitors.worker.manual import RunRefused, run_now
from monitors.worker.tasks import broker_enqueue
from probes.checks import UnknownCheckKind, check_kind
from probes.checks.mcp import MCP
from probes.runner import crashed_outcome, run_check_sync
from statuspages.render.chart import response_time_svg
from web import healthcheck_form as hc_form
from web import selectors as web_selectors
from web.access import Seat, member_view
from web.form_pages import form_page, form_saved
from web.healthcheck_form import NON_FIELD
from web.heartbeat_usage import ping_usage
from web.next_url import safe_next
from web.results import ResultView, view_of_outcome

# --- create and edit --------------------------------------------------------------------------------


def _form_context(
    request: HttpRequest, seat: Seat, form: hc_form.HealthcheckForm, **extra: Any
) -> dict[str, Any]:
    return {
        "seat": seat,
        "form": form,
        "header_rows": hc_form.header_rows(form, organization_id=str(seat.organization.public_id)),
        "allowed_regions": list(selectors.regions_allowed(organization=seat.organization)),
        "kinds": _tabs(extra.get("healthcheck")),
        "fields_shown": hc_form.shown_fields(hc_form.kind_named(form.type))[0],
        "fields_advanced": hc_form.shown_fields(hc_form.kind_named(form.type))[1],
        # A passive type's tab has no interval, regions, rechecks nor threshold, and no Test now.
        "probed": hc_form.kind_named(form.type).active,
        "channels": list(alert_selectors.channels_of(organization=seat.organization)),
        **extra,
    }


def _tabs(healthcheck: Healthcheck | None) -> list[Any]:
    """Return the type tabs the form offers: every type for a new check, its own family for a stored one.

    A stored check changes type only within its family (probed, or passive): the services do not
    yet turn a probed check into a passive one (its ping id, its regions and slot) or back.
    """
    every = hc_form.kinds()
    if healthcheck is None:
        return every
    active = healthcheck.check_type.active
    return [kind for kind in every if kind.active == active]


@require_http_methods(["GET", "HEAD", "POST"])
@member_view(writers_only=True)
def healthcheck_new(request: HttpRequest, seat: Seat) -> HttpResponse:
    """Show the new healthcheck form (tabs by ?type=), test it once, or create the healthcheck."""
    if request.method != "POST":
        form = hc_form.blank_form(
            request.GET.get("type", hc_form.DEFAULT_TYPE),
            region_slugs=[r.slug for r in selectors.regions_allowed(organization=seat.organization)],
            min_interval=seat.organization.plan.min_interval_seconds,
        )
        return render(request, "web/healthchecks/form.html", _form_context(request, seat, form))
    return _save_or_test(request, seat, None)


@require_http_methods(["GET", "HEAD", "POST"])
@member_view(writers_only=True)
def healthcheck_edit(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    healthcheck = _healthcheck(seat, public_id)
    if request.method != "POST":
        form = hc_form.form_of(healthcheck)
        form.channels = _own_channels(healthcheck)
        if request.GET.get("type") in [kind.name for kind in _tabs(healthcheck)]:
            form.type = request.GET["type"]
        return render(
            request, "web/healthchecks/form.html", _form_context(request, seat, form, healthcheck=healthcheck)
        )
    return _save_or_test(request, seat, healthcheck)


def _save_or_test(request: HttpRequest, seat: Seat, healthcheck: Healthcheck | None) -> HttpResponse:
    form = hc_form.posted_form(request.POST, organization_id=str(seat.organization.public_id))
    if healthcheck is not None and form.type not in [kind.name for kind in _tabs(healthcheck)]:
        form.errors.setdefault("type", []).append(
            "This check can't become that type: a probed check and a passive one (a heartbeat) don't "
            "change into each other. Create a new healthcheck of that type."
        )
        form.type = healthcheck.check_type.name
    body = hc_form.api_body(form)
    context: dict[str, Any] = {"healthcheck": healthcheck}
    if request.POST.get("action") == "test":
        if hc_form.kind_named(form.type).active:
            context["trial"] = _trial(form, body, healthcheck)
        else:
            form.add_errors(
                {NON_FIELD: ["Nothing runs this type of check from here: save it, then ping its URL."]}
            )
        return render(request, "web/healthchecks/form.html", _form_context(request, seat, form, **context))
    serializer = HealthcheckSerializer(healthcheck, data=body)
    if not serializer.is_valid():
        form.add_errors(serializer.errors)
    if form.errors:
        return render(
            request, "web/healthchecks/form.html", _form_context(request, seat, form, **context), status=400
        )
    changes = serializer.to_service_changes()
    now = timezone.now()
    notices: list[str] = []
    try:
        # The check and who hears of it are saved together: a refused channel saves neither.
        with transaction.atomic():
            if healthcheck is None:
                healthcheck = services.healthcheck_create_from(
                    organization=seat.organization, changes=changes, now=now
                )
                saved = (
                    f"Created {healthcheck.name}; its first check is running in every region."
                    if healthcheck.check_type.active
                    else f"Created {healthcheck.name}; it is pending until its job calls the ping URL below."
                )
            else:
                updated = services.healthcheck_update(
                    healthcheck=healthcheck, changes=changes, partial=False, now=now
                )
                healthcheck = updated.healthcheck
                saved = f"Saved {healthcheck.name}."
                notices = [notice.message for notice in updated.notices]
            _alert_channels_set(seat, healthcheck, form.channels)
        messages.success(request, saved)
        for notice in notices:
            messages.warning(request, notice)
    except ConfigInvalid as invalid:
        form.add_errors(invalid.errors)
    except ServiceError as refused:
        form.add_errors({refused.field: [refused.message]})
    except SecretUnreadable:
        form.add_errors(
            {
                "headers": [
                    "Stored header values can't be decrypted; an operator must restore UPTIMY_SECRETS_KEY."
                ]
            }
        )
    if form.errors or healthcheck is None:
        return render(
            request, "web/healthchecks/form.html", _form_context(request, seat, form, **context), status=400
        )
    return redirect("web:healthcheck", public_id=healthcheck.public_id)


def _own_channels(healthcheck: Healthcheck) -> list[str]:
    """Return the public ids of the channels the healthcheck's own alert policy names; none without one."""
    policy = (
        alert_selectors.alert_policies_of(organization=healthcheck.organization)
        .filter(healthcheck=healthcheck)
        .first()
    )
    return [str(channel.public_id) for channel in policy.channels.all()] if policy else []


def _alert_channels_set(seat: Seat, healthcheck: Healthcheck, chosen: list[str]) -> None:
    """Give the healthcheck its own alert policy with the chosen channels, or (none chosen) follow the default.

    A policy's other settings (reminders, escalation, what to notify on) stay as they were:
    the form chooses channels only, as ``PUT /api/v1/alert-policies/{healthcheck}/`` would with the rest unchanged.
    """
    policy = (
        alert_selectors.alert_policies_of(organization=seat.organization)
        .filter(healthcheck=healthcheck)
        .first()
    )
    if not chosen:
        if policy is not None:
            alert_services.alert_policy_delete(organization=seat.organization, healthcheck=healthcheck)
        return
    ids = []
    for value in dict.fromkeys(chosen):
        try:
            ids.append(uuid.UUID(value))
        except ValueError:
            raise ServiceError("channels", f"Channel {value} not found.") from None
    if policy is not None and sorted(ids) == sorted(c.public_id for c in policy.channels.all()):
        return
    kept: dict[str, Any] = {}
    if policy is not None:
        kept = {
            "escalation_channel_ids": [c.public_id for c in policy.escalation_channels.all()],
            "notify_on_degraded": policy.notify_on_degraded,
            "notify_on_recovery": policy.notify_on_recovery,
            "notify_on_tool_changes": policy.notify_on_tool_changes,
            "reminder_minutes": policy.reminder_minutes,
            "escalation_minutes": policy.escalation_minutes,
        }
    alert_services.alert_policy_put(
        organization=seat.organization, healthcheck=healthcheck, channel_ids=ids, **kept
    )


def _trial(
    form: hc_form.HealthcheckForm, body: dict[str, Any], healthcheck: Healthcheck | None
) -> ResultView | None:
    """Run the form's check once from this machine, as a save would store it; None when its config is refused."""
    try:
        kind = check_kind(body["type"])
        config = services.healthcheck_trial_config(
            check_type=kind, config=body["config"], healthcheck=healthcheck
        )
    except UnknownCheckKind as exc:
        form.add_errors({"type": [str(exc)]})
        return None
    except ConfigInvalid as invalid:
        form.add_errors(invalid.errors)
        return None
    except SecretUnreadable:
        form.add_errors(
            {
                "headers": [
                    "Stored header values can't be decrypted; an operator must restore UPTIMY_SECRETS_KEY."
                ]
            }
        )
        return None
    if form.errors:
        return None
    try:
        outcome = run_check_sync(config, probe_env())
    except Exception as exc:  # a bug of ours: logged without secrets, shown as the check's failure
        outcome = crashed_outcome(config, exc)
    return view_of_outcome(outcome)


# --- one healthcheck --------------------------------------------------------------------------------


def _healthcheck(seat: Seat, public_id: str) -> Healthcheck:
    """Return the organization's healthcheck; another organization's (or none) is a 404."""
    try:
        return selectors.healthchecks_of(organization=seat.organization).get(public_id=public_id)
    except (Healthcheck.DoesNotExist, ValueError):
        raise Http404("No such healthcheck.") from None


@require_http_methods(["GET", "HEAD"])
@member_view()
def healthcheck_detail(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    healthcheck = _healthcheck(seat, public_id)
    span = request.GET.get("span", "24h")
    if span not in web_selectors.CHART_SPANS:
        span = "24h"
    page = web_selectors.healthcheck_page(healthcheck=healthcheck, now=timezone.now(), span=span)
    # One chart per region (a region that measured nothing in the span has none; no region: one "No data").
    charts: list[SafeString] = [
        mark_safe(  # noqa: S308  # the renderer escapes every text it writes
            response_time_svg(f"{healthcheck.name} from {region}", points, time_zone="UTC")
        )
        for region, points in (page.chart_points.items() or [("every region", [])])
        if page.active
    ]
    context = {
        "seat": seat,
        "page": page,
        "hc": healthcheck,
        "charts": charts,
        "span": span,
        "spans": web_selectors.CHART_SPANS,
    }
    if request.headers.get("HX-Request") == "true":
        # The refreshed part never carries the ping URL: it is drawn once, outside it.
        return render(request, "web/partials/healthcheck_main.html", context)
    beat = page.heartbeat
    if beat is not None and beat.ping_id is not None and beat.config is not None and seat.can_write:
        # The ping URL is a write capability (whoever holds it reports the job done or failed), so
        # it is shown to the members who may change the check, never to a viewer, and not cached.
        url = request.build_absolute_uri(reverse("ping", kwargs={"ping_id": beat.ping_id}))
        context["usage"] = ping_usage(url, beat.config.schedule)
        response = render(request, "web/healthchecks/detail.html", context)
        response["Cache-Control"] = "no-store"
        return response
    return render(request, "web/healthchecks/detail.html", context)


def _listing_page(
    request: HttpRequest,
    seat: Seat,
    healthcheck: Healthcheck,
    values: dict[str, str] | None = None,
    errors: dict[str, list[str]] | None = None,
    status: int = 200,
) -> HttpResponse:
    listing = selectors.listing_of(healthcheck=healthcheck)
    if values is None:
        values = {field: getattr(listing, field) if listing else "" for field in listings.LISTING_FIELDS}
    return form_page(
        request,
        "web/healthchecks/listing.html",
        seat,
        values=values,
        errors=errors,
        status=status,
        hc=healthcheck,
        listing=listing,
        quote_status=quote_state(listing) if listing else None,
    )


@require_http_methods(["GET", "HEAD", "POST"])
@member_view()
def healthcheck_listing(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    """Show the MCP check's own listing and its quote's verification; save it (the API's rules) or remove it."""
    healthcheck = _healthcheck(seat, public_id)
    if healthcheck.type != MCP.number:
        raise Http404("Only an MCP healthcheck has a listing.")
    if request.method != "POST":
        return _listing_page(request, seat, healthcheck)
    if request.POST.get("action") == "clear":
        services.listing_clear(healthcheck=healthcheck)
        messages.success(request, "Removed the listing: the publisher checks are no longer measured.")
        return redirect("web:healthcheck", public_id=healthcheck.public_id)
    values = {field: str(request.POST.get(field, "")) for field in listings.LISTING_FIELDS}
    serializer = HealthcheckListingSerializer(data=values)
    return form_saved(
        request,
        serializer,
        lambda: services.listing_set(
            healthcheck=healthcheck, data=serializer.validated_data, now=timezone.now()
        ),
        again=lambda errors: _listing_page(request, seat, healthcheck, values, errors, status=400),
        done="Saved the listing; Uptimy fetches the pricing page within minutes, then daily.",
        to="web:healthcheck",
        public_id=healthcheck.public_id,
    )


@require_POST
@member_view()
def healthcheck_action(request: HttpRequest, seat: Seat, public_id: str, action: str) -> HttpResponse:
    """Pause, resume or run a healthcheck now, then show its page again."""
    healthcheck = _healthcheck(seat, public_id)
    now = timezone.now()
    if action == "pause":
        services.healthcheck_pause(healthcheck=healthcheck, now=now)
        messages.success(request, "Paused: no checks run until you resume it.")
    elif action == "resume":
        services.healthcheck_resume(healthcheck=healthcheck, now=now)
        messages.success(request, "Resumed: checks run again from the next slot.")
    elif action == "run":
        try:
            results = run_now(healthcheck=healthcheck, enqueue=broker_enqueue())
        except RunRefused as refused:
            messages.error(request, str(refused))
        except SecretUnreadable:
            messages.error(
                request,
                "Stored header values can't be decrypted; an operator must restore UPTIMY_SECRETS_KEY.",
            )
        else:
            words = ", ".join(f"{r.region.slug}: {r.status}" for r in results) or "no region answered in time"
            messages.success(request, f"Ran now ({words}).")
    elif action == "rotate-ping-url":
        try:
            heartbeat_rotate(healthcheck=healthcheck)
        except ServiceError as refused:
            messages.error(request, refused.message)
        else:
            # The message names no URL: messages travel in the session.
            messages.success(request, "New ping URL: the old one answers 404 from now on; update your jobs.")
    else:
        raise Http404("No such action.")
    return redirect("web:healthcheck", public_id=healthcheck.public_id)


@require_POST
@member_view()
def incident_acknowledge(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    """Acknowledge an open incident as ``POST /api/v1/incidents/{id}/acknowledge/`` does.

    Then go back to the page the form was on (its ``next``, when on this host), else to the
    incident's healthcheck (the dashboard once that is deleted).
    """
    try:
        incident = alert_selectors.incidents_of(organization=seat.organization).get(public_id=public_id)
    except (Incident.DoesNotExist, ValueError):
        raise Http404("No such incident.") from None
    now = timezone.now()
    try:
        incident = alert_services.incident_acknowledge(incident=incident, by=_acknowledger(request), now=now)
    except alert_services.IncidentResolved as refused:
        messages.error(request, refused.message)
    else:
        words = f"{incident.acknowledged_by} at {incident.acknowledged_at:%Y-%m-%d %H:%M} UTC"
        # Read from the locked row the service returns: someone else may have acknowledged it first.
        if incident.acknowledged_at != now:
            messages.info(request, f"Already acknowledged by {words}.")
        else:
            messages.success(request, f"Acknowledged by {words}; the channels that heard of it are told.")
    back = safe_next(request, request.POST.get("next", ""))
    if back is not None:
        return redirect(back)
    if incident.healthcheck_id is None:
        return redirect("web:dashboard")
    return redirect("web:healthcheck", public_id=incident.healthcheck_public_id)


def _acknowledger(request: HttpRequest) -> str:
    """Name who acknowledged from the app, as the API names its key: the signed-in account's address."""
    user = request.user
    return f"{getattr(user, 'email', '') or user.get_username()} (web app)"


@require_http_methods(["GET", "HEAD", "POST"])
@member_view(writers_only=True)
def healthcheck_delete(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    """Ask to confirm (GET), then delete the healthcheck and its results (POST)."""
    healthcheck = _healthcheck(seat, public_id)
    if request.method == "POST":
        name = healthcheck.name
        services.healthcheck_delete(healthcheck=healthcheck)
        messages.success(request, f"Deleted {name} and its results.")
        return redirect("web:dashboard")
    return render(request, "web/healthchecks/delete.html", {"seat": seat, "hc": healthcheck})
