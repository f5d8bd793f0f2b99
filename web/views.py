"""The web app's pages. Thin: each reads through a selector or writes through a service, as the API does."""

from __future__ import annotations

import smtplib
import uuid
from datetime import UTC, datetime
from typing import Any

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.views import LoginView
from django.core.mail import send_mail
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_http_methods, require_POST

from alerts import selectors as alert_selectors
from alerts import services as alert_services
from alerts.api.serializers import AlertPolicySerializer, ChannelSerializer, ChannelWriteSerializer
from alerts.api.views import NO_DEFAULT_POLICY
from alerts.models import Channel, Incident
from monitors import selectors, services
from monitors.access_rules import UNUSED_FLAG
from monitors.api.serializers import (
    HealthcheckListingSerializer,
    HealthcheckSerializer,
    MaintenanceWindowSerializer,
    quote_state,
)
from monitors.errors import ConfigInvalid, ServiceError
from monitors.models import ApiKey, Healthcheck, Invitation, MaintenanceWindow, Membership
from monitors.roles import UNKNOWN_ROLE
from monitors.secrets import SecretUnreadable
from monitors.services import INVITATION_GONE, listings
from monitors.worker.execution import probe_env
from monitors.worker.manual import RunRefused, run_now
from monitors.worker.tasks import broker_enqueue
from probes.checks import UnknownCheckKind, check_kind
from probes.checks.mcp import MCP
from probes.runner import crashed_outcome, run_check_sync
from reports import selectors as report_selectors
from reports import services as report_services
from reports.api.views import ReportSettingsSerializer
from statuspages.render.chart import response_time_svg
from web import alert_policy_form, channel_form, maintenance_form
from web import healthcheck_form as hc_form
from web import selectors as web_selectors
from web.access import SESSION_ORGANIZATION, Seat, enrolment_required_words, member_view
from web.api_errors import saved
from web.confirm import confirm_delete
from web.forms import ROLE_CHOICES, ApiKeyForm, InviteForm, RateLimitedLoginForm, RoleForm, SignupForm
from web.results import ResultView, view_of_outcome
from web.signins import record_sign_in
from web.two_factor import pending_begin

STATUS_CHOICES = ("up", "degraded", "down", "pending", "paused")


# --- accounts ---------------------------------------------------------------------------------------


class SignInView(LoginView):
    """Sign in with a password; an account with a second factor goes on to its second step, not signed in yet."""

    template_name = "web/accounts/login.html"
    authentication_form = RateLimitedLoginForm
    redirect_authenticated_user = True

    def form_valid(self, form: RateLimitedLoginForm) -> HttpResponse:  # type: ignore[override]
        user = form.get_user()
        if selectors.two_factor_on(user=user):
            pending_begin(
                self.request,
                user,
                backend=getattr(user, "backend", "django.contrib.auth.backends.ModelBackend"),
                next_url=self.get_redirect_url(),
                now=timezone.now(),
            )
            return redirect("web:login-two-factor")
        response = super().form_valid(form)  # login()
        record_sign_in(self.request)
        requirers = selectors.two_factor_requirers(user=user)
        if requirers:
            messages.warning(request=self.request, message=enrolment_required_words(requirers))
            return redirect("web:security")
        return response


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    """Create an account with an organization of its own on the free plan, owned by it; sign it in.

    Through an invitation's link (``?invitation=<token>``) the account joins the inviting
    organization instead, with the invitation's role.
    """
    if request.user.is_authenticated:
        return redirect("web:dashboard")
    token = request.GET.get("invitation", "")
    invitation = _live_invitation(token) if token else None
    if token and invitation is None:
        return render(request, "web/accounts/invitation.html", {"gone": INVITATION_GONE}, status=404)
    form = SignupForm(
        request.POST or None,
        initial={"email": invitation.email} if invitation else None,
        joining=invitation is not None,
    )
    if request.method == "POST" and form.is_valid() and invitation is not None:
        try:
            user, membership = services.invitation_sign_up(
                invitation=invitation,
                email=form.cleaned_data["email"],
                password=form.cleaned_data["password1"],
                now=timezone.now(),
            )
        except ServiceError as refused:
            form.add_error("email" if refused.field == "email" else None, refused.message)
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            record_sign_in(request)
            request.session[SESSION_ORGANIZATION] = str(membership.organization.public_id)
            messages.success(request, f"Welcome to {membership.organization.name}, as {membership.role}.")
            return redirect(_next_or_dashboard(request))
    elif request.method == "POST" and form.is_valid():
        user, organization = services.organization_sign_up(
            email=form.cleaned_data["email"],
            password=form.cleaned_data["password1"],
            organization_name=form.cleaned_data["organization"],
        )
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        record_sign_in(request)
        request.session[SESSION_ORGANIZATION] = str(organization.public_id)
        messages.success(request, f"Welcome to Uptimy. {organization.name} is on the free plan.")
        return redirect(_next_or_dashboard(request))
    status = 400 if request.method == "POST" else 200
    context = {"form": form, "invitation": invitation, "next": request.GET.get("next", "")}
    return render(request, "web/accounts/signup.html", context, status=status)


def _next_or_dashboard(request: HttpRequest) -> str:
    """Return where a new account goes: ``?next=`` when it is on this host (an assistant's consent screen), else the dashboard."""
    return _safe_next(request, request.GET.get("next", "")) or reverse("web:dashboard")


def _safe_next(request: HttpRequest, target: str) -> str | None:
    """Return ``target`` when it is on this host (a page of ours, never another site), else None."""
    safe = url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return target if target and safe else None


def _live_invitation(token: str) -> Invitation | None:
    """Return the invitation a link's token names while it can still be accepted, else None."""
    public_id = services.invitation_public_id(token)
    invitation = selectors.invitation_by_public_id(public_id=public_id) if public_id else None
    if invitation is None or invitation.accepted_at or invitation.revoked_at:
        return None
    return invitation if invitation.expires_at > timezone.now() else None


@require_http_methods(["GET", "HEAD", "POST"])
def invitation(request: HttpRequest, token: str) -> HttpResponse:
    """Show an invitation: sign up or sign in to accept it (GET), then join the organization (POST)."""
    live = _live_invitation(token)
    if live is None:
        return render(request, "web/accounts/invitation.html", {"gone": INVITATION_GONE}, status=404)
    context: dict[str, Any] = {"invitation": live, "token": token}
    if request.user.is_authenticated:
        # Said before the button: the signed-in account may not be the one the link was sent to.
        context["refused"] = services.invitation_addressee_refusal(
            invitation=live, email=request.user.email or ""
        )
    if request.method == "POST":
        if not request.user.is_authenticated:
            return redirect(f"{reverse('web:login')}?next={request.path}")
        try:
            membership = services.invitation_accept(invitation=live, user=request.user, now=timezone.now())
        except ServiceError as refused:
            if refused.field != "email":
                return render(request, "web/accounts/invitation.html", {"gone": refused.message}, status=404)
            context["refused"] = refused.message
            return render(request, "web/accounts/invitation.html", context, status=403)
        request.session[SESSION_ORGANIZATION] = str(membership.organization.public_id)
        messages.success(request, f"You joined {membership.organization.name} as {membership.role}.")
        return redirect("web:dashboard")
    return render(request, "web/accounts/invitation.html", context)


@require_POST
@member_view(enrolment_exempt=True)
def switch_organization(request: HttpRequest, seat: Seat) -> HttpResponse:
    """Work in another of the user's organizations from now on (kept in the session)."""
    wanted = request.POST.get("organization", "")
    if not any(str(m.organization.public_id) == wanted for m in seat.memberships):
        raise Http404("No such organization of yours.")
    request.session[SESSION_ORGANIZATION] = wanted
    return redirect("web:dashboard")


# --- dashboard --------------------------------------------------------------------------------------


@require_http_methods(["GET", "HEAD"])
@member_view()
def dashboard(request: HttpRequest, seat: Seat) -> HttpResponse:
    """List every healthcheck with its status, filtered by the query string; htmx refreshes the rows."""
    board = web_selectors.dashboard(organization=seat.organization, query=request.GET, now=timezone.now())
    kept = request.GET.copy()
    kept.pop("page", None)
    context = {
        "filters_query": kept.urlencode(),
        "seat": seat,
        "board": board,
        "query": request.GET,
        "statuses": STATUS_CHOICES,
        "types": hc_form.TYPES,
        "refresh_url": request.get_full_path(),
    }
    if request.headers.get("HX-Request") == "true":
        return render(request, "web/partials/dashboard_rows.html", context)
    return render(request, "web/dashboard.html", context)


# --- incidents --------------------------------------------------------------------------------------


@require_http_methods(["GET", "HEAD"])
@member_view()
def incidents(request: HttpRequest, seat: Seat) -> HttpResponse:
    """List the organization's incidents, newest first, filtered as the API's list filters them (state, healthcheck)."""
    board = web_selectors.incidents_page(
        organization=seat.organization, query=request.GET, now=timezone.now()
    )
    kept = request.GET.copy()
    kept.pop("page", None)
    context = {
        "seat": seat,
        "board": board,
        "query": request.GET,
        "filters_query": kept.urlencode(),
        "here": request.get_full_path(),
    }
    return render(request, "web/incidents.html", context)


# --- create and edit --------------------------------------------------------------------------------


def _form_context(
    request: HttpRequest, seat: Seat, form: hc_form.HealthcheckForm, **extra: Any
) -> dict[str, Any]:
    return {
        "seat": seat,
        "form": form,
        "header_rows": hc_form.header_rows(form, organization_id=str(seat.organization.public_id)),
        "allowed_regions": list(selectors.regions_allowed(organization=seat.organization)),
        "methods": hc_form.HTTP_METHODS,
        "channels": list(alert_selectors.channels_of(organization=seat.organization)),
        **extra,
    }


@require_http_methods(["GET", "HEAD", "POST"])
@member_view(writers_only=True)
def healthcheck_new(request: HttpRequest, seat: Seat) -> HttpResponse:
    """Show the new healthcheck form (tabs by ?type=), test it once, or create the healthcheck."""
    if request.method != "POST":
        form = hc_form.blank_form(
            request.GET.get("type", "mcp"),
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
        if request.GET.get("type") in hc_form.TYPES:
            form.type = request.GET["type"]
        return render(
            request, "web/healthchecks/form.html", _form_context(request, seat, form, healthcheck=healthcheck)
        )
    return _save_or_test(request, seat, healthcheck)


def _save_or_test(request: HttpRequest, seat: Seat, healthcheck: Healthcheck | None) -> HttpResponse:
    form = hc_form.posted_form(request.POST, organization_id=str(seat.organization.public_id))
    body = hc_form.api_body(form)
    context: dict[str, Any] = {"healthcheck": healthcheck}
    if request.POST.get("action") == "test":
        context["trial"] = _trial(form, body, healthcheck)
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
                healthcheck = services.healthcheck_create(
                    organization=seat.organization,
                    name=changes["name"],
                    check_type=changes["check_type"],
                    config=changes["config"],
                    interval_seconds=changes.get("interval_seconds"),
                    region_slugs=changes.get("region_slugs"),
                    tags=changes.get("tags", ()),
                    rules={field: changes[field] for field in services.RULE_FIELDS if field in changes},
                    now=now,
                    first_run=True,
                )
                saved = f"Created {healthcheck.name}; its first check is running in every region."
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
        return render(request, "web/partials/healthcheck_main.html", context)
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
    context = {
        "seat": seat,
        "hc": healthcheck,
        "listing": listing,
        "quote_status": quote_state(listing) if listing else None,
        "values": values,
        "errors": errors or {},
    }
    return render(request, "web/healthchecks/listing.html", context, status=status)


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
    _, errors = saved(
        serializer,
        lambda: services.listing_set(
            healthcheck=healthcheck, data=serializer.validated_data, now=timezone.now()
        ),
    )
    if errors:
        return _listing_page(request, seat, healthcheck, values, errors, status=400)
    messages.success(
        request, "Saved the listing; Uptimy fetches the pricing page within minutes, then daily."
    )
    return redirect("web:healthcheck", public_id=healthcheck.public_id)


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
    back = _safe_next(request, request.POST.get("next", ""))
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


# --- settings: members and invitations ----------------------------------------------------------------


def _members_page(
    request: HttpRequest,
    seat: Seat,
    *,
    invite_form: InviteForm | None = None,
    errors: dict[int, str] | None = None,
    status: int = 200,
) -> HttpResponse:
    context = {
        "seat": seat,
        "members": list(selectors.members_of(organization=seat.organization)),
        "invitations": list(
            selectors.invitations_pending(organization=seat.organization, now=timezone.now())
        ),
        "invite_form": invite_form or InviteForm(),
        "roles": ROLE_CHOICES,
        "errors": errors or {},
    }
    return render(request, "web/settings/members.html", context, status=status)


@require_http_methods(["GET", "HEAD"])
@member_view()
def members(request: HttpRequest, seat: Seat) -> HttpResponse:
    """List the organization's members and pending invitations; owners and admins manage them."""
    return _members_page(request, seat)


@require_POST
@member_view(manage=True)
def member_invite(request: HttpRequest, seat: Seat) -> HttpResponse:
    """Invite someone by email with a role: a signed link, mailed through Django's mail backend."""
    form = InviteForm(request.POST)
    if form.is_valid():
        try:
            invitation = services.invitation_create(
                organization=seat.organization,
                email=form.cleaned_data["email"],
                role=form.cleaned_data["role"],
                actor=seat.membership,
                now=timezone.now(),
            )
        except ServiceError as refused:
            form.add_error(refused.field if refused.field in form.fields else None, refused.message)
        else:
            link = request.build_absolute_uri(
                reverse("web:invitation", args=[services.invitation_token(invitation)])
            )
            try:
                _send_invitation(request, invitation, link)
            except (OSError, smtplib.SMTPException) as failure:
                # The invitation stands: the inviter can pass the link on another way.
                messages.warning(
                    request,
                    f"Invited {invitation.email}, but the email could not be sent ({failure.__class__.__name__});"
                    f" send them this link yourself, it works once within 7 days: {link}",
                )
            else:
                messages.success(
                    request, f"Invited {invitation.email} as {invitation.role}; the link works 7 days."
                )
            return redirect("web:members")
    return _members_page(request, seat, invite_form=form, status=400)


def _send_invitation(request: HttpRequest, invitation: Invitation, link: str) -> None:
    context = {"invitation": invitation, "link": link, "inviter": request.user}
    subject = render_to_string("web/accounts/invitation_subject.txt", context).strip()
    send_mail(
        subject, render_to_string("web/accounts/invitation_email.txt", context), None, [invitation.email]
    )


def _member(seat: Seat, member_id: int) -> Membership:
    """Return a membership of the seat's organization; another organization's (or none) is a 404."""
    try:
        return selectors.members_of(organization=seat.organization).get(pk=member_id)
    except Membership.DoesNotExist:
        raise Http404("No such member.") from None


@require_POST
@member_view(manage=True)
def member_role(request: HttpRequest, seat: Seat, member_id: int) -> HttpResponse:
    membership = _member(seat, member_id)
    form = RoleForm(request.POST)
    if not form.is_valid():
        return _members_page(request, seat, errors={membership.pk: UNKNOWN_ROLE}, status=400)
    try:
        services.membership_role_set(
            membership=membership, role=form.cleaned_data["role"], actor=seat.membership
        )
    except ServiceError as refused:
        return _members_page(request, seat, errors={membership.pk: refused.message}, status=400)
    messages.success(request, f"{membership.user.email or membership.user} is now {membership.role}.")
    return redirect("web:members")


@require_POST
@member_view(manage=True)
def member_remove(request: HttpRequest, seat: Seat, member_id: int) -> HttpResponse:
    membership = _member(seat, member_id)
    try:
        services.membership_remove(membership=membership, actor=seat.membership)
    except ServiceError as refused:
        return _members_page(request, seat, errors={membership.pk: refused.message}, status=400)
    messages.success(
        request, f"Removed {membership.user.email or membership.user} from {seat.organization.name}."
    )
    if membership.pk == seat.membership.pk:
        request.session.pop(SESSION_ORGANIZATION, None)
        return redirect("web:dashboard")
    return redirect("web:members")


@require_POST
@member_view(manage=True)
def invitation_revoke(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    invitation = selectors.invitation_by_public_id(public_id=public_id)
    if invitation is None or invitation.organization_id != seat.organization.pk:
        raise Http404("No such invitation.")
    try:
        services.invitation_revoke(invitation=invitation, actor=seat.membership, now=timezone.now())
    except ServiceError as refused:
        messages.error(request, refused.message)
        return _members_page(request, seat, status=400)
    messages.success(request, f"Revoked the invitation of {invitation.email}; its link no longer works.")
    return redirect("web:members")


# --- settings: alert channels ----------------------------------------------------------------------


def _channels_page(
    request: HttpRequest, seat: Seat, form: channel_form.ChannelForm, *, status: int = 200, **extra: Any
) -> HttpResponse:
    rows = [
        {"channel": channel, "config": _shown_config(ChannelSerializer(channel).data["config"])}
        for channel in alert_selectors.channels_of(organization=seat.organization)
    ]
    context = {
        "seat": seat,
        "rows": rows,
        "form": form,
        "kinds": channel_form.KIND_NAMES,
        **extra,
    }
    response = render(request, "web/settings/channels.html", context, status=status)
    response["Cache-Control"] = "no-store"  # a generated signing secret is shown once, here
    return response


def _shown_config(masked: dict[str, Any] | None) -> list[tuple[str, str]] | None:
    """Return the API's masked config as (field, text) pairs; None when it can't be decrypted."""
    if masked is None:
        return None
    return [
        (key, ", ".join(map(str, value)) if isinstance(value, list) else str(value))
        for key, value in masked.items()
        if value not in (None, "")
    ]


@require_http_methods(["GET", "HEAD", "POST"])
@member_view()
def channels(request: HttpRequest, seat: Seat) -> HttpResponse:
    """List the organization's alert channels; add one (the API's serializer, parser and messages)."""
    if request.method != "POST":
        return _channels_page(request, seat, channel_form.blank_form(request.GET.get("kind", "email")))
    form = channel_form.posted_form(request.POST)
    serializer = ChannelWriteSerializer(data=channel_form.api_body(form))
    if not form.errors and not serializer.is_valid():
        form.add_errors(serializer.errors)
    if form.errors:
        return _channels_page(request, seat, form, status=400)
    data = serializer.validated_data
    try:
        saved = alert_services.channel_add(
            organization=seat.organization, name=data["name"], kind=data["kind"], config=data["config"]
        )
    except ServiceError as refused:
        form.add_errors({refused.field: [refused.message]})
        return _channels_page(request, seat, form, status=400)
    messages.success(request, f"Added {saved.channel.name}; send it a test to see an alert arrive.")
    if saved.generated_secret:
        return _channels_page(
            request,
            seat,
            channel_form.blank_form(form.kind),
            secret={"channel": saved.channel, "value": saved.generated_secret},
        )
    return redirect("web:channels")


def _channel(seat: Seat, public_id: str) -> Channel:
    try:
        return alert_selectors.channels_of(organization=seat.organization).get(public_id=public_id)
    except (Channel.DoesNotExist, ValueError):
        raise Http404("No such channel.") from None


def _channel_edit_page(
    request: HttpRequest,
    seat: Seat,
    channel: Channel,
    form: channel_form.ChannelForm,
    *,
    status: int = 200,
    rotated: str = "",
) -> HttpResponse:
    shown = ChannelSerializer(channel).data["config"] or {}
    context = {
        "seat": seat,
        "channel": channel,
        "form": form,
        "kind_name": channel_form.KIND_NAMES.get(channel.kind, channel.kind),
        "secret_names": channel_form.secret_names(channel.kind),
        "rotatable": channel.kind == Channel.Kind.WEBHOOK,
        "previous_secret_until": _parsed_time(shown.get("previous_secret_until")),
        "rotated": rotated,
        "deliveries": web_selectors.channel_deliveries(channel=channel, page=request.GET.get("page")),
    }
    response = render(request, "web/settings/channel_edit.html", context, status=status)
    response["Cache-Control"] = "no-store"
    return response


@require_http_methods(["GET", "HEAD", "POST"])
@member_view()
def channel_edit(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    """Show a channel's form, secrets masked (GET); change it as ``PUT /api/v1/channels/{id}/`` does (POST)."""
    channel = _channel(seat, public_id)
    shown = ChannelSerializer(channel).data["config"]
    if request.method != "POST":
        form = channel_form.form_of(channel, shown)
        if shown is None:
            form.errors["non_field_errors"] = [CHANNEL_UNREADABLE]
        return _channel_edit_page(request, seat, channel, form)
    form = channel_form.edited_form(channel, request.POST)
    serializer = ChannelWriteSerializer(data=channel_form.edit_body(form, shown))
    if not form.errors and not serializer.is_valid():
        form.add_errors(serializer.errors)
    if form.errors:
        return _channel_edit_page(request, seat, channel, form, status=400)
    data = serializer.validated_data
    try:
        saved = alert_services.channel_change(
            channel=channel,
            now=timezone.now(),
            name=data["name"],
            config=data["config"],
            enabled=data["enabled"],
        )
    except ServiceError as refused:
        form.add_errors({refused.field: [refused.message]})
    except SecretUnreadable:
        form.add_errors({"non_field_errors": [CHANNEL_UNREADABLE]})
    if form.errors:
        channel.refresh_from_db()
        return _channel_edit_page(request, seat, channel, form, status=400)
    messages.success(request, f"Saved {saved.channel.name}.")
    if saved.test is not None:
        if saved.test.ok:
            messages.success(request, "Enabled again: the test alert it was sent arrived.")
        else:
            messages.error(
                request, f"Enabled again, but the test alert it was sent did not arrive: {saved.test.error}"
            )
    return redirect("web:channels")


CHANNEL_UNREADABLE = "The channel's config can't be decrypted; an operator must restore UPTIMY_SECRETS_KEY."


def _parsed_time(value: object) -> datetime | None:
    """Return the API's ISO timestamp as a datetime for the template, None when there is none."""
    return parse_datetime(value) if isinstance(value, str) else None


@require_POST
@member_view()
def channel_rotate_secret(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    """Give a webhook a new signing secret as ``POST /api/v1/channels/{id}/rotate-secret/`` does; show it once."""
    channel = _channel(seat, public_id)
    try:
        secret = alert_services.channel_rotate_secret(channel=channel, now=timezone.now())
    except ServiceError as refused:
        messages.error(request, refused.message)
    except SecretUnreadable:
        messages.error(request, CHANNEL_UNREADABLE)
    else:
        shown = ChannelSerializer(channel).data["config"]
        return _channel_edit_page(
            request, seat, channel, channel_form.form_of(channel, shown), rotated=secret
        )
    return redirect("web:channel-edit", public_id=channel.public_id)


@require_POST
@member_view()
def channel_test(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    """Send the channel a test alert now and say how it went."""
    channel = _channel(seat, public_id)
    try:
        attempt = alert_services.channel_test(channel=channel, now=timezone.now())
    except ServiceError as refused:
        messages.error(request, refused.message)
    except SecretUnreadable:
        messages.error(request, CHANNEL_UNREADABLE)
    else:
        if attempt.ok:
            messages.success(request, f"Sent {channel.name} a test alert; it arrived.")
        else:
            messages.error(request, f"The test alert to {channel.name} did not arrive: {attempt.error}")
    return redirect("web:channels")


@require_http_methods(["GET", "HEAD", "POST"])
@member_view(writers_only=True)
def channel_delete(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    """Ask to confirm (GET), then delete the channel (POST)."""
    channel = _channel(seat, public_id)
    return confirm_delete(
        request,
        seat,
        name=channel.name,
        consequence="Alerts stop going to this channel, and its delivery history goes with it.",
        delete=lambda: alert_services.channel_delete(channel=channel),
        done=f"Deleted {channel.name}; no alert goes there any more.",
        done_url=reverse("web:channels"),
        back_url=reverse("web:channels"),
    )


# --- settings: the default alert policy -------------------------------------------------------------


def _alert_policy_page(
    request: HttpRequest,
    seat: Seat,
    values: dict[str, Any] | None = None,
    errors: dict[str, list[str]] | None = None,
    status: int = 200,
) -> HttpResponse:
    found = web_selectors.alert_policy_page(organization=seat.organization)
    context = {
        "seat": seat,
        "policy": found.policy,
        "channels": found.channels,
        "values": values or alert_policy_form.values_of(found.policy, found.channels),
        "errors": errors or {},
        "no_policy": NO_DEFAULT_POLICY,
    }
    return render(request, "web/settings/alert_policy.html", context, status=status)


@require_http_methods(["GET", "HEAD", "POST"])
@member_view()
def alert_policy(request: HttpRequest, seat: Seat) -> HttpResponse:
    """Show the organization's default alert policy; set it as ``PUT /api/v1/alert-policies/default/`` does."""
    if request.method != "POST":
        return _alert_policy_page(request, seat)
    values = alert_policy_form.typed(request.POST)
    serializer = AlertPolicySerializer(data=alert_policy_form.api_body(values))
    _, errors = saved(
        serializer,
        lambda: alert_services.alert_policy_put(
            organization=seat.organization, healthcheck=None, **serializer.to_service_changes()
        ),
    )
    if errors:
        return _alert_policy_page(request, seat, values, errors, status=400)
    messages.success(request, "Saved the default alert policy.")
    return redirect("web:alert-policy")


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
    context = {
        "seat": seat,
        "windows": windows,
        "values": values or {"timezone": "UTC", "healthchecks": []},
        "errors": errors or {},
        "healthchecks": healthchecks,
    }
    return render(request, "web/settings/maintenance.html", context, status=status)


@require_http_methods(["GET", "HEAD", "POST"])
@member_view()
def maintenance(request: HttpRequest, seat: Seat) -> HttpResponse:
    """List the organization's maintenance windows; add a one-off or recurring one (the API's checks)."""
    if request.method != "POST":
        return _maintenance_page(request, seat)
    values = maintenance_form.typed(request.POST)
    serializer = MaintenanceWindowSerializer(data=maintenance_form.api_body(values))
    window, errors = saved(
        serializer,
        lambda: services.maintenance_window_create(
            organization=seat.organization, **serializer.to_service_changes()
        ),
    )
    if window is None:
        return _maintenance_page(request, seat, values, errors, status=400)
    messages.success(request, f"Added the maintenance window {window.name}.")
    return redirect("web:maintenance")


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
    context = {
        "seat": seat,
        "window": window,
        "values": values,
        "errors": errors or {},
        "healthchecks": list(
            selectors.healthchecks_of(organization=seat.organization)
            .order_by("name")
            .values_list("public_id", "name")
        ),
    }
    return render(request, "web/settings/maintenance_edit.html", context, status=400 if errors else 200)


@require_http_methods(["GET", "HEAD", "POST"])
@member_view()
def maintenance_edit(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    """Show a window's form (GET); change it as ``PUT /api/v1/maintenance-windows/{id}/`` does (POST)."""
    window = _window(seat, public_id)
    if request.method != "POST":
        return _maintenance_edit_page(request, seat, window, maintenance_form.values_of(window))
    values = maintenance_form.typed(request.POST)
    serializer = MaintenanceWindowSerializer(window, data=maintenance_form.edit_body(values, window))
    _, errors = saved(
        serializer,
        lambda: services.maintenance_window_update(
            window=window, changes=serializer.to_service_changes(), partial=False
        ),
    )
    if errors:
        return _maintenance_edit_page(request, seat, window, values, errors)
    messages.success(request, f"Saved the maintenance window {window.name}.")
    return redirect("web:maintenance")


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
    context = {
        "seat": seat,
        "values": {"sla_target": f"{found.sla_target:.3f}", "time_zone": found.time_zone, **typed},
        "errors": errors or {},
        "is_owner": seat.role == Membership.Role.OWNER,
        "opted_in": report_selectors.monthly_report_opted_in(membership=seat.membership),
    }
    return render(request, "web/settings/reports.html", context, status=status)


@require_http_methods(["GET", "HEAD", "POST"])
@member_view()
def report_settings(request: HttpRequest, seat: Seat) -> HttpResponse:
    """Show and change the default SLA target and the monthly reports' time zone (the API's checks)."""
    if request.method != "POST":
        return _reports_page(request, seat)
    typed = {key: request.POST.get(key, "").strip() for key in ("sla_target", "time_zone")}
    serializer = ReportSettingsSerializer(data={key: value for key, value in typed.items() if value})
    _, errors = saved(
        serializer,
        lambda: report_services.report_settings_update(
            organization=seat.organization, **serializer.validated_data
        ),
    )
    if errors:
        return _reports_page(request, seat, errors, status=400, **typed)
    messages.success(request, "Saved the report settings.")
    return redirect("web:reports")


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
