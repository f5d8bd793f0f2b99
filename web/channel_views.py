"""Show and edit the alert channels and the organization's default alert policy."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_http_methods, require_POST

from alerts import selectors as alert_selectors
from alerts import services as alert_services
from alerts.api.serializers import AlertPolicySerializer, ChannelSerializer, ChannelWriteSerializer
from alerts.api.views import NO_DEFAULT_POLICY
from alerts.models import Channel
from monitors.errors import ServiceError
from monitors.secrets import SecretUnreadable
from web import alert_policy_form, channel_form
from web import selectors as web_selectors
from web.access import Seat, member_view
from web.confirm import confirm_delete
from web.form_pages import form_page, form_view

T = TypeVar("T")

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


def _said_if_refused(request: HttpRequest, act: Callable[[], T]) -> T | None:
    """Return what ``act`` returned; a refusal or an unreadable config is said as an error message instead (None)."""
    try:
        return act()
    except ServiceError as refused:
        messages.error(request, refused.message)
    except SecretUnreadable:
        messages.error(request, CHANNEL_UNREADABLE)
    return None


def _parsed_time(value: object) -> datetime | None:
    """Return the API's ISO timestamp as a datetime for the template, None when there is none."""
    return parse_datetime(value) if isinstance(value, str) else None


@require_POST
@member_view()
def channel_rotate_secret(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    """Give a webhook a new signing secret as ``POST /api/v1/channels/{id}/rotate-secret/`` does; show it once."""
    channel = _channel(seat, public_id)
    secret = _said_if_refused(
        request, lambda: alert_services.channel_rotate_secret(channel=channel, now=timezone.now())
    )
    if secret is not None:
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
    attempt = _said_if_refused(
        request, lambda: alert_services.channel_test(channel=channel, now=timezone.now())
    )
    if attempt is not None:
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
    return form_page(
        request,
        "web/settings/alert_policy.html",
        seat,
        values=values or alert_policy_form.values_of(found.policy, found.channels),
        errors=errors,
        status=status,
        policy=found.policy,
        channels=found.channels,
        no_policy=NO_DEFAULT_POLICY,
    )


@require_http_methods(["GET", "HEAD", "POST"])
@member_view()
def alert_policy(request: HttpRequest, seat: Seat) -> HttpResponse:
    """Show the organization's default alert policy; set it as ``PUT /api/v1/alert-policies/default/`` does."""
    return form_view(
        request,
        alert_policy_form,
        AlertPolicySerializer,
        page=partial(_alert_policy_page, request, seat),
        save=lambda valid: alert_services.alert_policy_put(
            organization=seat.organization, healthcheck=None, **valid.to_service_changes()
        ),
        done="Saved the default alert policy.",
        to="web:alert-policy",
    )
