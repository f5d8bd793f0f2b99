"""The pages of two-factor sign-in: the account's security page, the sign-in's second step, the owners' rule.

Thin: the rules and the writes are monitors.services.two_factor's. Every page works without
JavaScript (plain forms), and the QR code is an SVG ``data:`` image, which the web app's
Content-Security-Policy allows (img-src data:), beside the secret as text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import segno
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods, require_POST

from monitors import roles, selectors, services
from monitors import two_factor as rules
from monitors.errors import ServiceError
from web.access import Seat, member_view
from web.forms import ConfirmCodeForm, OrganizationSecurityForm, ProofForm, SecondFactorForm
from web.next_url import safe_next
from web.signins import record_sign_in
from web.throttle import login_attempt, login_attempt_succeeded, wait_words
from web.two_factor import pending_clear, pending_of

if TYPE_CHECKING:
    from django.contrib.auth.models import User

SIGN_IN_AGAIN = "Your sign-in took too long or was interrupted: sign in again."
WRONG_SECOND_FACTOR = "That code is wrong or was used already."


def _no_store(response: HttpResponse) -> HttpResponse:
    # A secret or recovery codes are on this page: no cache, and no back button, may keep them.
    response["Cache-Control"] = "no-store"
    return response


# --- the account's security page ----------------------------------------------------------------------


@require_http_methods(["GET", "HEAD"])
@login_required
def security(request: HttpRequest) -> HttpResponse:
    """Show whether two-factor sign-in is on; set it up, regenerate recovery codes, or turn it off."""
    return _security_page(request)


def _security_page(request: HttpRequest, *, status: int = 200, **forms: Any) -> HttpResponse:
    user = request.user
    enrolment = selectors.two_factor_enrolment(user=user)
    context: dict[str, Any] = {
        "on": selectors.two_factor_on(user=user),
        "requirers": selectors.two_factor_requirers(user=user),
        "codes_left": services.recovery_codes_left(user=user),  # type: ignore[arg-type]
        "confirm_form": forms.get("confirm_form") or ConfirmCodeForm(),
        "regenerate_form": forms.get("regenerate_form") or ProofForm(prefix="regenerate"),
        "disable_form": forms.get("disable_form") or ProofForm(prefix="disable"),
    }
    if enrolment is not None:
        secret = services.two_factor_secret(two_factor=enrolment)
        account = user.email or user.get_username()  # type: ignore[union-attr]
        uri = rules.provisioning_uri(secret, account=account, issuer=settings.UPTIMY_TWO_FACTOR_ISSUER)
        context["enrolment"] = {
            "qr": segno.make(uri, error="m").svg_data_uri(scale=5, border=2),
            "secret": rules.grouped(secret),
        }
    return _no_store(render(request, "web/accounts/security.html", context, status=status))


@require_POST
@login_required
def two_factor_enrol(request: HttpRequest) -> HttpResponse:
    """Start enrolment: a new secret, shown as a QR code and as text until a code confirms it."""
    try:
        services.two_factor_enrol(user=request.user, now=timezone.now())  # type: ignore[arg-type]
    except ServiceError as refused:
        messages.error(request, refused.message)
    return redirect("web:security")


@sensitive_post_parameters("code")
@require_POST
@login_required
def two_factor_confirm(request: HttpRequest) -> HttpResponse:
    """Turn two-factor sign-in on with a current code; show the recovery codes, this once."""
    form = ConfirmCodeForm(request.POST)
    if form.is_valid():
        try:
            codes = services.two_factor_confirm(
                user=request.user,  # type: ignore[arg-type]
                code=form.cleaned_data["code"],
                now=timezone.now(),
            )
        except ServiceError as refused:
            form.add_error("code" if refused.field == "code" else None, refused.message)
        else:
            messages.success(request, "Two-factor sign-in is on.")
            return _recovery_codes_page(request, codes)
    return _security_page(request, confirm_form=form, status=400)


@sensitive_post_parameters("regenerate-proof")
@require_POST
@login_required
def recovery_codes_regenerate(request: HttpRequest) -> HttpResponse:
    """Replace the recovery codes with new ones (the old stop working); show them this once."""
    form = ProofForm(request.POST, prefix="regenerate")
    if form.is_valid():
        try:
            codes = services.recovery_codes_regenerate(
                user=request.user,  # type: ignore[arg-type]
                proof=form.cleaned_data["proof"],
                now=timezone.now(),
            )
        except ServiceError as refused:
            form.add_error("proof" if refused.field == "proof" else None, refused.message)
        else:
            messages.success(request, "New recovery codes; the old ones no longer work.")
            return _recovery_codes_page(request, codes)
    return _security_page(request, regenerate_form=form, status=400)


@sensitive_post_parameters("disable-proof")
@require_POST
@login_required
def two_factor_disable(request: HttpRequest) -> HttpResponse:
    """Turn two-factor sign-in off once a current code or the password proves it is the account's owner."""
    form = ProofForm(request.POST, prefix="disable")
    if form.is_valid():
        try:
            services.two_factor_disable(
                user=request.user,  # type: ignore[arg-type]
                proof=form.cleaned_data["proof"],
                now=timezone.now(),
            )
        except ServiceError as refused:
            form.add_error("proof" if refused.field == "proof" else None, refused.message)
        else:
            messages.success(request, "Two-factor sign-in is off; your password alone signs you in.")
            return redirect("web:security")
    return _security_page(request, disable_form=form, status=400)


def _recovery_codes_page(request: HttpRequest, codes: list[str]) -> HttpResponse:
    return _no_store(render(request, "web/accounts/recovery_codes.html", {"codes": codes}))


# --- the sign-in's second step ------------------------------------------------------------------------


@sensitive_post_parameters("code")
@require_http_methods(["GET", "HEAD", "POST"])
def login_two_factor(request: HttpRequest) -> HttpResponse:
    """Take the second factor of a sign-in whose password was right; sign the person in once it holds.

    Every try counts against the sign-in rate limit (the client's address and the user name),
    a wrong code as much as a wrong password.
    """
    pending = pending_of(request, now=timezone.now())
    if pending is None:
        messages.info(request, SIGN_IN_AGAIN)
        return redirect("web:login")
    form = SecondFactorForm(request.POST or None)
    status = 200
    if request.method == "POST" and form.is_valid():
        username = pending.user.get_username()
        wait = login_attempt(request, username)
        used = None
        if wait:
            form.add_error(
                None,
                f"Too many failed sign-ins. Try again in {wait_words(wait)}, or use a recovery code later.",
            )
        else:
            used = services.two_factor_verify(
                user=pending.user, code=form.cleaned_data["code"], now=timezone.now()
            )
        if used is not None:
            login_attempt_succeeded(request, username)
            pending_clear(request)
            login(request, cast("User", pending.user), backend=pending.backend)
            record_sign_in(request)
            if used == "recovery":
                left = services.recovery_codes_left(user=pending.user)
                messages.warning(
                    request,
                    f"You signed in with a recovery code; {left} left. Make new ones on the Security page.",
                )
            return redirect(safe_next(request, pending.next_url) or reverse(settings.LOGIN_REDIRECT_URL))
        if not wait:
            form.add_error("code", WRONG_SECOND_FACTOR)
        status = 400
    response = render(request, "web/accounts/login_two_factor.html", {"form": form}, status=status)
    return _no_store(response)


# --- the organization's rule --------------------------------------------------------------------------


@require_http_methods(["GET", "HEAD", "POST"])
@member_view()
def organization_settings(request: HttpRequest, seat: Seat) -> HttpResponse:
    """Show the organization's sign-in rule; an owner requires (or stops requiring) two-factor sign-in."""
    organization = seat.organization
    form = OrganizationSecurityForm(
        request.POST or None, initial={"require_two_factor": organization.require_two_factor}
    )
    status = 200
    if request.method == "POST" and form.is_valid():
        required = form.cleaned_data["require_two_factor"]
        try:
            services.organization_require_two_factor(
                organization=organization, required=required, actor=seat.membership
            )
        except ServiceError as refused:
            form.add_error(None, refused.message)
            status = 403 if refused.message == roles.TWO_FACTOR_OWNERS_ONLY else 400
        else:
            state = "now requires" if required else "no longer requires"
            messages.success(request, f"{organization.name} {state} two-factor sign-in.")
            return redirect("web:organization-settings")
    context = {"seat": seat, "form": form, "can_change": seat.role == roles.OWNER}
    return render(request, "web/settings/organization.html", context, status=status)
