"""The person's own account pages: their signed-in sessions, ending them, and their password.

Thin: reads through ``monitors.selectors.sign_in_sessions_of``, writes through
``monitors.services.sign_in_session_*``. These pages belong to the person, not to an
organization, so they need a signed-in user only (``login_required``), not a membership.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from django.contrib import messages
from django.contrib.auth import update_session_auth_hash
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordChangeForm
from django.contrib.auth.views import PasswordResetConfirmView
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from monitors import selectors, services
from web.access import seat_of

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def _account_page(
    request: HttpRequest, password_form: PasswordChangeForm, *, status: int = 200
) -> HttpResponse:
    sessions = selectors.sign_in_sessions_of(
        user=request.user, current_session_key=request.session.session_key, now=timezone.now()
    )
    context = {
        "seat": seat_of(request),
        "sessions": sessions,
        "others": sum(1 for row in sessions if not row.current),
        "password_form": password_form,
    }
    return render(request, "web/accounts/account.html", context, status=status)


@require_http_methods(["GET", "HEAD"])
@login_required
def account(request: HttpRequest) -> HttpResponse:
    """Show the person's signed-in sessions (this one marked) and the password form."""
    return _account_page(request, PasswordChangeForm(cast("User", request.user)))


@require_POST
@login_required
def sign_in_session_end(request: HttpRequest, public_id: str) -> HttpResponse:
    """End another of the person's sessions: that browser's next request is sent to sign in."""
    ended = services.sign_in_session_end(
        user=request.user, public_id=public_id, current_session_key=request.session.session_key
    )
    if not ended:
        raise Http404("No such session of yours (to end this one, sign out).")
    messages.success(request, "Session ended: that browser is signed out.")
    return redirect("web:account")


@require_POST
@login_required
def sign_in_sessions_end_others(request: HttpRequest) -> HttpResponse:
    """End every session of the person but this one."""
    count = services.sign_in_sessions_end_others(
        user=request.user, current_session_key=request.session.session_key
    )
    messages.success(request, f"Ended {count} other session{'s' if count != 1 else ''}.")
    return redirect("web:account")


@require_POST
@login_required
def password_change(request: HttpRequest) -> HttpResponse:
    """Change the password; this session stays signed in, every other one is ended."""
    form = PasswordChangeForm(cast("User", request.user), request.POST)
    if not form.is_valid():
        return _account_page(request, form, status=400)
    old_key = request.session.session_key
    user = form.save()
    update_session_auth_hash(request, user)  # keeps this session, under a new key
    ended = services.sign_in_session_password_changed(
        user=user, old_session_key=old_key, new_session_key=request.session.session_key
    )
    messages.success(
        request, f"Password changed. Other sessions ended: {ended}." if ended else "Password changed."
    )
    return redirect("web:account")


class PasswordResetConfirm(PasswordResetConfirmView):
    """Set a new password from the emailed link, and end every session signed in with the old one."""

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        services.sign_in_sessions_end_others(user=form.user, current_session_key=None)
        return response
