"""Who is signed in, for which organization, and what their role lets them do.

Every page of the app but the account pages goes through :func:`member_view`: it requires a
signed-in user, finds the organization the user is working in (the one chosen with the
switcher, kept in the session, else their oldest membership) and refuses a change (any method
but GET and HEAD) from a viewer with 403. A page that exists only to change something (the
healthcheck form, a delete confirmation) is ``writers_only``: a viewer gets the 403 page as soon
as they open it, not a form whose Save then fails.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any, Concatenate, ParamSpec

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from monitors.models import Membership, Organization
from monitors.roles import SESSION_ORGANIZATION
from monitors.selectors import memberships_of, two_factor_on

SAFE_METHODS = frozenset({"GET", "HEAD"})
WRITERS = frozenset({Membership.Role.OWNER, Membership.Role.ADMIN, Membership.Role.MEMBER})
MANAGERS = frozenset({Membership.Role.OWNER, Membership.Role.ADMIN})
VIEWER_REFUSED = "Viewers can look but not change anything; ask an owner or admin for another role."
MANAGER_REFUSED = "Only an owner or admin of the organization can do this."

__all__ = ["SESSION_ORGANIZATION", "Seat", "member_view", "seat_of"]

P = ParamSpec("P")


@dataclass(frozen=True, slots=True)
class Seat:
    """Say where a signed-in user works: the organization, their membership in it, and their others."""

    membership: Membership
    memberships: tuple[Membership, ...]

    @property
    def organization(self) -> Organization:
        return self.membership.organization

    @property
    def role(self) -> str:
        return self.membership.role

    @property
    def can_write(self) -> bool:
        return self.role in WRITERS

    @property
    def can_manage(self) -> bool:
        return self.role in MANAGERS


def seat_of(request: HttpRequest) -> Seat | None:
    """Return the signed-in user's seat, or None when they belong to no organization."""
    memberships = tuple(memberships_of(user=request.user))
    if not memberships:
        return None
    wanted = request.session.get(SESSION_ORGANIZATION)
    chosen = next((m for m in memberships if str(m.organization.public_id) == wanted), memberships[0])
    return Seat(membership=chosen, memberships=memberships)


def member_view(
    *, manage: bool = False, writers_only: bool = False, enrolment_exempt: bool = False
) -> Callable[[Callable[Concatenate[HttpRequest, Seat, P], HttpResponse]], Callable[..., HttpResponse]]:
    """Wrap a view that works in the user's organization; it is called with (request, seat, ...).

    GET and HEAD are for every member; any other method answers 403 to a viewer, and with
    ``manage`` to anyone but an owner or admin. With ``writers_only`` every method answers 403
    to a viewer. In an organization that requires two-factor sign-in, a member without it is
    sent to the Security page to set it up (``enrolment_exempt``: the organization switcher,
    the way out to another organization).
    """

    def decorate(
        view: Callable[Concatenate[HttpRequest, Seat, P], HttpResponse],
    ) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            seat = seat_of(request)
            if seat is None:
                return render(request, "web/no_organization.html", status=403)
            if not enrolment_exempt and _enrolment_owed(request, seat):
                return _to_enrolment(request, seat)
            if request.method not in SAFE_METHODS or writers_only:
                if not seat.can_write:
                    return _refused(request, VIEWER_REFUSED)
                if manage and not seat.can_manage:
                    return _refused(request, MANAGER_REFUSED)
            return view(request, seat, *args, **kwargs)

        return login_required(wrapper)

    return decorate


def _refused(request: HttpRequest, reason: str) -> HttpResponse:
    """Answer 403 on the app's own page, saying why (rendered here: the site's 403 page is not the app's)."""
    return render(request, "web/403.html", {"reason": reason}, status=403)


def enrolment_required_words(organizations: list[Organization]) -> str:
    """Say which organizations require two-factor sign-in of the user, and what to do."""
    names = ", ".join(o.name for o in organizations)
    return f"{names} requires two-factor sign-in: set it up here to go on."


def _enrolment_owed(request: HttpRequest, seat: Seat) -> bool:
    return seat.organization.require_two_factor and not two_factor_on(user=request.user)


def _to_enrolment(request: HttpRequest, seat: Seat) -> HttpResponse:
    """Send a member who owes a second factor to the Security page (htmx: the whole page, not a fragment)."""
    messages.warning(request, enrolment_required_words([seat.organization]))
    url = reverse("web:security")
    if request.headers.get("HX-Request"):
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url)
