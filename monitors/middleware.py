"""Hold who is asking, for the audit log, for the length of each request (monitors.audit)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from monitors.audit import Actor, acting_as, api_via

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def request_actor(request: HttpRequest) -> Actor:
    """Return the actor of a request: the person signed in, else anonymous; the API's authentication refines it."""
    address = request.META.get("REMOTE_ADDR") or None
    agent = str(request.META.get("HTTP_USER_AGENT", ""))
    via = api_via(agent) if request.path.startswith("/api/") else "web"
    # A read changes nothing: don't load the session's user for it (public pages, badges).
    user = getattr(request, "user", None) if request.method not in SAFE_METHODS else None
    if user is not None and user.is_authenticated:
        actor = Actor(kind="person", via=via, user_id=user.pk)
    else:
        actor = Actor(kind="anonymous", via=via)
    return actor.seen_from(address=address, user_agent=agent)


class AuditActorMiddleware:
    """Make the request's actor current while the view runs, and drop it when the answer is made."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with acting_as(request_actor(request)):
            return self.get_response(request)
