"""Read an organization's audit log, newest first, by actor, object, action and time."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from django.db.models import QuerySet

from monitors.models import AuditEvent, Organization


def audit_events_of(
    *,
    organization: Organization,
    person: str | None = None,
    api_key: UUID | None = None,
    oauth_client: str | None = None,
    target_type: str | None = None,
    target_id: str | None = None,
    action: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[AuditEvent]:
    """Return the organization's events, newest first, narrowed by each filter given.

    ``person`` is the person's email (the one signed in, or the one an OAuth client acts for);
    ``api_key`` the key's public id; ``oauth_client`` the client's ``client_id``. ``action`` is a
    whole action (``healthcheck.updated``) or a type's every action (``healthcheck``). ``since``
    is inclusive, ``until`` exclusive.
    """
    events = AuditEvent.objects.filter(organization=organization)
    if person:
        events = events.filter(actor_email__iexact=person)
    if api_key is not None:
        events = events.filter(actor_api_key_public_id=api_key)
    if oauth_client:
        events = events.filter(actor_oauth_client_id=oauth_client)
    if target_type:
        events = events.filter(target_type=target_type)
    if target_id:
        events = events.filter(target_id=target_id)
    if action:
        events = (
            events.filter(action=action) if "." in action else events.filter(action__startswith=f"{action}.")
        )
    if since is not None:
        events = events.filter(at__gte=since)
    if until is not None:
        events = events.filter(at__lt=until)
    return events.order_by("-at", "-id")
