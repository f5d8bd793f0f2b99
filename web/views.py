"""Show the account pages (sign-in, sign-up, invitations), the dashboard, the incidents and the members.

Thin, as every page family of the web app (``healthcheck_views``, ``channel_views``,
``settings_views``, ``status_page_views``…): each reads through a selector or writes through a
service, as the API does.
"""

from __future__ import annotations

import smtplib
from typing import Any

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.views import LoginView
from django.core.mail import send_mail
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from monitors import selectors, services
from monitors.errors import ServiceError
from monitors.models import Invitation, Membership
from monitors.roles import UNKNOWN_ROLE
from monitors.services import INVITATION_GONE
from web import healthcheck_form as hc_form
from web import selectors as web_selectors
from web.access import SESSION_ORGANIZATION, Seat, enrolment_required_words, member_view
from web.forms import ROLE_CHOICES, InviteForm, RateLimitedLoginForm, RoleForm, SignupForm
from web.next_url import safe_next
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
    return safe_next(request, request.GET.get("next", "")) or reverse("web:dashboard")


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
        "types": hc_form.type_names(),
        # One link per registered type, in the form's tab order: a new type shows with no change here.
        "kinds": hc_form.kinds(),
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
