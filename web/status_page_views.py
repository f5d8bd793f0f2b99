"""The status pages' settings in the web app: pages, their components and groups, incidents, subscribers.

Thin like the rest of the app: each form goes through the owners' API serializer
(``statuspages.api.serializers``) and the statuspages services, so every rule and message is the API's.

Over 600 lines on purpose: one page family, the settings of a status page (the page, its
components and groups, its incidents and their updates, its subscribers), all opened from the
page's detail form and sharing its lookups (``_page``, ``_on_page``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC
from typing import Any, TypeVar

from django.contrib import messages
from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.text import Truncator
from django.views.decorators.http import require_http_methods, require_POST

from monitors import selectors
from monitors.errors import ServiceError
from statuspages import selectors as page_selectors
from statuspages import services as page_services
from statuspages.api.serializers import (
    ComponentGroupSerializer,
    ComponentSerializer,
    IncidentUpdateSerializer,
    PublishedIncidentSerializer,
    StatusPageSerializer,
    SubscriberSerializer,
)
from statuspages.dns import txt_records
from statuspages.models import (
    Component,
    ComponentGroup,
    ComponentStatus,
    IncidentUpdate,
    PublishedIncident,
    StatusPage,
    Subscriber,
)
from web.access import Seat, member_view
from web.api_errors import field_errors, saved
from web.confirm import confirm_delete

_Row = TypeVar("_Row", bound=Model)

PAGE_FIELDS = ("slug", "title", "description", "time_zone", "access", "password")
# The settings only a page that exists has: its logo, its own domain (verified by DNS), drafted incidents.
SETTINGS_FIELDS = (*PAGE_FIELDS, "logo_url", "custom_domain", "draft_incidents")
# The resolver "Verify now" asks, as the API's verify-domain action; tests replace it with a fake.
resolver = txt_records
IMPACTS = PublishedIncident.Impact.values
STATUSES = PublishedIncident.Status.values
INCIDENTS_SHOWN = 20
# The newest subscribers listed on the page (a page may have thousands); the count says how many in all.
SUBSCRIBERS_SHOWN = 100
SUBSCRIBER_KINDS = Subscriber.Kind.values


def _page(seat: Seat, public_id: str) -> StatusPage:
    """Return the organization's status page; another organization's (or none) is a 404."""
    try:
        return page_selectors.status_pages_of(organization=seat.organization).get(public_id=public_id)
    except (StatusPage.DoesNotExist, ValueError):
        raise Http404("No such status page.") from None


def _typed(data: Mapping[str, Any], fields: tuple[str, ...]) -> dict[str, str]:
    return {name: str(data.get(name, "")) for name in fields}


def _list_page(
    request: HttpRequest,
    seat: Seat,
    values: dict[str, str] | None = None,
    errors: dict[str, list[str]] | None = None,
) -> HttpResponse:
    context = {
        "seat": seat,
        "pages": list(page_selectors.status_pages_of(organization=seat.organization).order_by("title", "id")),
        "values": values or {"access": "public", "time_zone": "UTC"},
        "errors": errors or {},
    }
    return render(request, "web/status_pages/list.html", context, status=400 if errors else 200)


@require_http_methods(["GET", "HEAD", "POST"])
@member_view()
def status_pages(request: HttpRequest, seat: Seat) -> HttpResponse:
    """List the organization's status pages; create one."""
    if request.method != "POST":
        return _list_page(request, seat)
    values = _typed(request.POST, PAGE_FIELDS)
    body = {key: value for key, value in values.items() if value or key in {"slug", "title"}}
    serializer = StatusPageSerializer(data=body)
    page, errors = saved(
        serializer,
        lambda: page_services.status_page_create(
            organization=seat.organization, changes=serializer.validated_data
        ),
    )
    if page is None:
        return _list_page(request, seat, values, errors)
    messages.success(request, f"Created the status page {page.title}; add components to show on it.")
    return redirect("web:status-page", public_id=page.public_id)


def _detail(
    request: HttpRequest,
    seat: Seat,
    page: StatusPage,
    *,
    form: str = "",
    values: dict[str, Any] | None = None,
    errors: dict[str, list[str]] | None = None,
    secret: dict[str, Any] | None = None,
) -> HttpResponse:
    """Render a page's settings, components, groups, incidents and subscribers.

    ``form`` names the form ``values`` and ``errors`` belong to; ``secret`` is a new webhook
    subscriber's signing secret, shown this once.
    """
    components = list(
        Component.objects.filter(page=page).select_related("healthcheck", "group").order_by("position", "id")
    )
    subscribers = Subscriber.objects.filter(page=page)
    incidents = list(
        PublishedIncident.with_drafts.filter(page=page)
        .prefetch_related("components__healthcheck", "updates__affected__component__healthcheck")
        .order_by("-created_at", "-id")[:INCIDENTS_SHOWN]
    )
    settings_values = {
        "slug": page.slug,
        "title": page.title,
        "description": page.description,
        "time_zone": page.time_zone,
        "access": page.access,
        "password": "",
        "logo_url": page.logo_url,
        "custom_domain": page.custom_domain or "",
        "draft_incidents": "true" if page.draft_incidents else "false",
    }
    posted = (values or {}).get("components") if form.startswith("update-") else None
    chosen: dict[str, str] = posted if isinstance(posted, dict) else {}
    context = {
        "seat": seat,
        "page": page,
        "components": components,
        "incidents": incidents,
        "healthchecks": list(
            selectors.healthchecks_of(organization=seat.organization)
            .order_by("name")
            .values_list("public_id", "name")
        ),
        "groups": list(ComponentGroup.objects.filter(page=page).order_by("position", "id")),
        "subscribers": list(
            subscribers.prefetch_related("components").order_by("-created_at", "-id")[:SUBSCRIBERS_SHOWN]
        ),
        "subscriber_count": subscribers.count(),
        # The TXT record to publish, as the API names it: (name, token, verified), None without a domain.
        "domain": _domain_record(page),
        "subscriber_kinds": SUBSCRIBER_KINDS,
        "secret": secret,
        "impacts": IMPACTS,
        "statuses": STATUSES,
        "component_statuses": ComponentStatus.choices,
        # The update form's selects: each component, its id, and the status chosen in a refused post.
        "declared_components": [(c, str(c.public_id), chosen.get(str(c.public_id), "")) for c in components],
        "form": form,
        "update_for": form.removeprefix("update-") if form.startswith("update-") else "",
        "edit_for": form.removeprefix("edit-") if form.startswith("edit-") else "",
        "group_edit_for": form.removeprefix("group-edit-") if form.startswith("group-edit-") else "",
        "settings": values if form == "settings" and values else settings_values,
        "values": values or {},
        "errors": errors or {},
    }
    response = render(request, "web/status_pages/detail.html", context, status=400 if errors else 200)
    if secret:
        response["Cache-Control"] = "no-store"  # a webhook subscriber's secret is shown once, here
    return response


def _domain_record(page: StatusPage) -> dict[str, Any] | None:
    shown = StatusPageSerializer(page).data
    if not shown["domain_record"]:
        return None
    return {
        "name": shown["domain_record"],
        "token": shown["domain_token"],
        "verified": shown["domain_verified"],
    }


@require_http_methods(["GET", "HEAD", "POST"])
@member_view()
def status_page(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    """Show a status page's settings, components and incidents; save its settings (POST)."""
    page = _page(seat, public_id)
    if request.method != "POST":
        return _detail(request, seat, page)
    values = _typed(request.POST, SETTINGS_FIELDS)
    # A blank password keeps the stored one, as the API keeps it when the field is left out.
    body = {
        key: value for key, value in values.items() if key in request.POST and (key != "password" or value)
    }
    serializer = StatusPageSerializer(page, data=body, partial=True)
    _, errors = saved(
        serializer, lambda: page_services.status_page_update(page=page, changes=serializer.validated_data)
    )
    if errors:
        page.refresh_from_db()  # as stored: a refused change leaves nothing behind
        return _detail(request, seat, page, form="settings", values=values, errors=errors)
    messages.success(request, f"Saved {page.title}.")
    return redirect("web:status-page", public_id=page.public_id)


@require_POST
@member_view()
def status_page_verify_domain(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    """Check the custom domain's TXT record as ``POST /api/v1/status-pages/{id}/verify-domain/`` does."""
    page = _page(seat, public_id)
    try:
        page_services.status_page_verify_domain(page=page, resolver=resolver, now=timezone.now())
    except ServiceError as refused:
        return _detail(request, seat, page, form="settings", errors={refused.field: [refused.message]})
    messages.success(request, f"Verified {page.custom_domain}: it serves this page once it points here.")
    return redirect("web:status-page", public_id=page.public_id)


@require_http_methods(["GET", "HEAD", "POST"])
@member_view(writers_only=True)
def status_page_delete(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    page = _page(seat, public_id)
    return confirm_delete(
        request,
        seat,
        name=page.title,
        consequence=f"/s/{page.slug}/ stops answering, with its components, incidents and subscribers.",
        delete=lambda: page_services.status_page_delete(page=page),
        done=f"Deleted the status page {page.title}.",
        done_url=reverse("web:status-pages"),
        back_url=reverse("web:status-page", kwargs={"public_id": page.public_id}),
    )


@require_POST
@member_view()
def component_add(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    """Show one of the organization's healthchecks on the page."""
    page = _page(seat, public_id)
    values = _typed(request.POST, ("healthcheck", "display_name", "group"))
    body: dict[str, Any] = {"healthcheck": values["healthcheck"] or None}
    if values["display_name"]:
        body["display_name"] = values["display_name"]
    if values["group"]:
        body["group"] = values["group"]
    serializer = ComponentSerializer(data=body)
    component, errors = saved(
        serializer, lambda: page_services.component_create(page=page, changes=serializer.to_service_changes())
    )
    if component is None:
        return _detail(request, seat, page, form="component", values=values, errors=errors)
    messages.success(
        request, f"Added {component.display_name or component.healthcheck.name} to {page.title}."
    )
    return redirect("web:status-page", public_id=page.public_id)


@require_POST
@member_view()
def component_remove(request: HttpRequest, seat: Seat, public_id: str, component_id: str) -> HttpResponse:
    page = _page(seat, public_id)
    component = _component(page, component_id)
    page_services.component_delete(component=component)
    messages.success(
        request, f"Removed {component.display_name or component.healthcheck.name} from {page.title}."
    )
    return redirect("web:status-page", public_id=page.public_id)


@require_POST
@member_view()
def incident_add(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    """Publish an incident (or keep it a draft) with its first update."""
    page = _page(seat, public_id)
    values: dict[str, Any] = _typed(request.POST, ("title", "impact", "status", "body"))
    values["components"] = request.POST.getlist("components")
    values["draft"] = request.POST.get("draft") == "on"
    serializer = PublishedIncidentSerializer(
        data={key: value for key, value in values.items() if value != ""}
    )
    errors = {} if serializer.is_valid() else field_errors(serializer.errors)
    if not errors and not serializer.validated_data.get("body"):
        errors = {"body": ["Say what is happening: the first update's text."]}
    if errors:
        return _detail(request, seat, page, form="incident", values=values, errors=errors)
    data = serializer.validated_data
    try:
        incident = page_services.incident_create(
            page=page, changes=data, body=data["body"], now=timezone.now()
        )
    except ServiceError as refused:
        return _detail(
            request, seat, page, form="incident", values=values, errors={refused.field: [refused.message]}
        )
    messages.success(request, f"{'Drafted' if incident.draft else 'Published'} {incident.title}.")
    return redirect("web:status-page", public_id=page.public_id)


def _one(rows: QuerySet[_Row], public_id: str, noun: str) -> _Row:
    """Return the row of ``rows`` with ``public_id``; one outside ``rows`` (or none, or a bad id) is a 404."""
    try:
        return rows.get(public_id=public_id)
    except (ObjectDoesNotExist, ValueError):
        raise Http404(f"No such {noun}.") from None


def _on_page(rows: QuerySet[_Row], page: StatusPage, public_id: str, noun: str) -> _Row:
    """Return the page's row of ``rows`` with ``public_id``; another page's (or none, or a bad id) is a 404."""
    return _one(rows.filter(page=page), public_id, noun)


def _incident(page: StatusPage, incident_id: str) -> PublishedIncident:
    return _on_page(PublishedIncident.with_drafts.all(), page, incident_id, "incident")


@require_POST
@member_view()
def incident_edit(request: HttpRequest, seat: Seat, public_id: str, incident_id: str) -> HttpResponse:
    """Change an incident's title, impact and affected components as ``PATCH …/incidents/{id}/`` does.

    Its status changes through an update, whose words the subscribers hear, so the form offers none;
    no box ticked means no component is affected.
    """
    page = _page(seat, public_id)
    incident = _incident(page, incident_id)
    values: dict[str, Any] = _typed(request.POST, ("title", "impact"))
    values["components"] = request.POST.getlist("components")
    serializer = PublishedIncidentSerializer(incident, data=values, partial=True)
    _, errors = saved(
        serializer,
        lambda: page_services.incident_update(
            incident=incident, changes=serializer.validated_data, now=timezone.now()
        ),
    )
    if errors:
        return _detail(request, seat, page, form=f"edit-{incident.public_id}", values=values, errors=errors)
    messages.success(request, f"Saved {incident.title}.")
    return redirect("web:status-page", public_id=page.public_id)


@require_http_methods(["GET", "HEAD", "POST"])
@member_view(writers_only=True)
def incident_delete(request: HttpRequest, seat: Seat, public_id: str, incident_id: str) -> HttpResponse:
    """Ask to confirm (GET), then delete the incident with its updates (POST)."""
    page = _page(seat, public_id)
    incident = _incident(page, incident_id)
    back = reverse("web:status-page", kwargs={"public_id": page.public_id})
    return confirm_delete(
        request,
        seat,
        name=incident.title,
        consequence=(
            "The draft goes with its updates; no reader ever saw it."
            if incident.draft
            else f"It leaves /s/{page.slug}/ and its history, with every update it had."
        ),
        delete=lambda: page_services.incident_delete(incident=incident),
        done=f"Deleted the incident {incident.title}.",
        done_url=back,
        back_url=back,
    )


@require_http_methods(["GET", "HEAD", "POST"])
@member_view(writers_only=True)
def incident_update_delete(
    request: HttpRequest, seat: Seat, public_id: str, incident_id: str, update_id: str
) -> HttpResponse:
    """Ask to confirm (GET), then delete one of an incident's updates (POST); the incident keeps its status."""
    page = _page(seat, public_id)
    incident = _incident(page, incident_id)
    update = _one(
        IncidentUpdate.objects.filter(incident=incident).select_related("incident"), update_id, "update"
    )
    back = reverse("web:status-page", kwargs={"public_id": page.public_id})
    when = f"{update.created_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    return confirm_delete(
        request,
        seat,
        name=f"the update of {when} on {incident.title}",
        consequence=(
            f"“{Truncator(update.body).chars(80)}” leaves the incident's timeline; "
            f"the incident stays {incident.status}."
        ),
        delete=lambda: page_services.incident_update_delete(update=update),
        done=f"Deleted the update of {when} on {incident.title}.",
        done_url=back,
        back_url=back,
    )


@require_POST
@member_view()
def incident_update_add(request: HttpRequest, seat: Seat, public_id: str, incident_id: str) -> HttpResponse:
    """Add an update to an incident; it takes the update's status (resolved resolves it)."""
    page = _page(seat, public_id)
    incident = _incident(page, incident_id)
    values: dict[str, Any] = _typed(request.POST, ("status", "body"))
    # One select per component of the page, ``component-<id>``: empty leaves it as it is.
    declared = {
        name.removeprefix(COMPONENT_STATUS_PREFIX): str(chosen)
        for name, chosen in request.POST.items()
        if name.startswith(COMPONENT_STATUS_PREFIX) and chosen
    }
    serializer = IncidentUpdateSerializer(data={**values, "components": declared})
    values["components"] = declared
    _, errors = saved(
        serializer,
        lambda: page_services.incident_update_add(
            incident=incident,
            status=serializer.validated_data["status"],
            body=serializer.validated_data["body"],
            now=timezone.now(),
            components=serializer.validated_data.get("components"),
        ),
    )
    if errors:
        return _detail(request, seat, page, form=f"update-{incident.public_id}", values=values, errors=errors)
    messages.success(request, f"Updated {incident.title}.")
    return redirect("web:status-page", public_id=page.public_id)


@require_POST
@member_view()
def incident_publish(request: HttpRequest, seat: Seat, public_id: str, incident_id: str) -> HttpResponse:
    """Make a draft public as it stands; the page's subscribers hear of it."""
    page = _page(seat, public_id)
    incident = page_services.incident_publish(incident=_incident(page, incident_id), now=timezone.now())
    messages.success(request, f"Published {incident.title}.")
    return redirect("web:status-page", public_id=page.public_id)


def _component(page: StatusPage, component_id: str) -> Component:
    return _on_page(Component.objects.select_related("healthcheck"), page, component_id, "component")


COMPONENT_TEXT_FIELDS = ("healthcheck", "display_name", "description", "group", "position", "declared_status")
# The update form's per-component status selects are named this and the component's id.
COMPONENT_STATUS_PREFIX = "component-"
COMPONENT_SWITCHES = ("only_show_when_not_operational", "show_mcp_details")


def _component_values(component: Component) -> dict[str, Any]:
    """Return the edit form's values of a stored component, as the API reads it."""
    shown = ComponentSerializer(component).data
    return {
        **{name: "" if shown[name] is None else str(shown[name]) for name in COMPONENT_TEXT_FIELDS},
        **{name: bool(shown[name]) for name in COMPONENT_SWITCHES},
    }


def _component_body(post: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Return the form's values and the API's ``PUT …/components/{id}/`` body they make.

    An empty name or position is left out, so the component keeps its own; a switch not
    posted (an unticked box) is off.
    """
    values: dict[str, Any] = {
        **_typed(post, COMPONENT_TEXT_FIELDS),
        **{name: name in post for name in COMPONENT_SWITCHES},
    }
    body: dict[str, Any] = {
        "healthcheck": values["healthcheck"] or None,
        "description": values["description"],
        "group": values["group"] or None,
        "declared_status": values["declared_status"],
        **{name: values[name] for name in COMPONENT_SWITCHES},
    }
    body.update({name: values[name] for name in ("display_name", "position") if values[name]})
    return values, body


def _component_page(
    request: HttpRequest,
    seat: Seat,
    page: StatusPage,
    component: Component,
    *,
    values: dict[str, Any] | None = None,
    errors: dict[str, list[str]] | None = None,
) -> HttpResponse:
    context = {
        "seat": seat,
        "page": page,
        "component": component,
        "values": values or _component_values(component),
        "component_statuses": ComponentStatus.choices,
        "errors": errors or {},
        "healthchecks": list(
            selectors.healthchecks_of(organization=seat.organization)
            .order_by("name")
            .values_list("public_id", "name")
        ),
        "groups": list(ComponentGroup.objects.filter(page=page).order_by("position", "id")),
        "badges": sorted(ComponentSerializer(component, context={"request": request}).data["badges"].items()),
    }
    response = render(request, "web/status_pages/component_edit.html", context, status=400 if errors else 200)
    # On a password page the badge URLs carry the component's token: keep them out of shared caches.
    response["Cache-Control"] = "no-store"
    return response


@require_http_methods(["GET", "HEAD", "POST"])
@member_view()
def component_edit(request: HttpRequest, seat: Seat, public_id: str, component_id: str) -> HttpResponse:
    """Show a component's settings and badge URLs (GET); change it as ``PUT …/components/{id}/`` does (POST)."""
    page = _page(seat, public_id)
    component = _component(page, component_id)
    if request.method != "POST":
        return _component_page(request, seat, page, component)
    values, body = _component_body(request.POST)
    serializer = ComponentSerializer(component, data=body)
    _, errors = saved(
        serializer,
        lambda: page_services.component_update(component=component, changes=serializer.to_service_changes()),
    )
    if errors:
        component = _component(page, component_id)  # as stored: a refused change leaves nothing behind
        return _component_page(request, seat, page, component, values=values, errors=errors)
    messages.success(request, f"Saved the component {component.display_name or component.healthcheck.name}.")
    return redirect("web:status-page", public_id=page.public_id)


@require_POST
@member_view()
def component_rotate_badge_token(
    request: HttpRequest, seat: Seat, public_id: str, component_id: str
) -> HttpResponse:
    """Give the component a new badge token as ``POST …/rotate-badge-token/`` does: the old badge URLs stop."""
    page = _page(seat, public_id)
    component = page_services.component_rotate_badge_token(component=_component(page, component_id))
    messages.success(
        request, "New badge URLs: the old ones answer 404 from now on; update where they are shown."
    )
    return redirect("web:status-page-component", public_id=page.public_id, component_id=component.public_id)


@require_POST
@member_view()
def component_group_set(request: HttpRequest, seat: Seat, public_id: str, component_id: str) -> HttpResponse:
    """Put a component in one of the page's groups, or in none (``PATCH …/components/{id}/`` with ``group``)."""
    page = _page(seat, public_id)
    component = _component(page, component_id)
    values = _typed(request.POST, ("group",))
    serializer = ComponentSerializer(component, data={"group": values["group"] or None}, partial=True)
    _, errors = saved(
        serializer,
        lambda: page_services.component_update(component=component, changes=serializer.to_service_changes()),
    )
    if errors:
        return _detail(
            request, seat, page, form=f"group-of-{component.public_id}", values=values, errors=errors
        )
    messages.success(request, f"Moved {component.display_name or component.healthcheck.name}.")
    return redirect("web:status-page", public_id=page.public_id)


@require_POST
@member_view()
def group_add(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    """Add a group (a heading components are shown under) to the page."""
    page = _page(seat, public_id)
    values = _typed(request.POST, ("name", "position"))
    serializer = ComponentGroupSerializer(data=_group_body(values))
    if not serializer.is_valid():
        return _detail(
            request, seat, page, form="group", values=values, errors=field_errors(serializer.errors)
        )
    data = serializer.validated_data
    group = page_services.group_create(page=page, name=data["name"], position=data.get("position", 0))
    messages.success(request, f"Added the group {group.name}; put components in it below.")
    return redirect("web:status-page", public_id=page.public_id)


def _group_body(values: dict[str, str]) -> dict[str, str]:
    """Return the API's group body of the form's values: a blank name is sent (and refused), a blank position not."""
    return {key: value for key, value in values.items() if value or key == "name"}


@require_POST
@member_view()
def group_edit(request: HttpRequest, seat: Seat, public_id: str, group_id: str) -> HttpResponse:
    """Rename a group or move it as ``PATCH …/groups/{id}/`` does; an empty position keeps its own."""
    page = _page(seat, public_id)
    group = _on_page(ComponentGroup.objects.all(), page, group_id, "group")
    values = _typed(request.POST, ("name", "position"))
    serializer = ComponentGroupSerializer(group, data=_group_body(values), partial=True)
    if not serializer.is_valid():
        return _detail(
            request,
            seat,
            page,
            form=f"group-edit-{group.public_id}",
            values=values,
            errors=field_errors(serializer.errors),
        )
    group = page_services.group_update(group=group, changes=serializer.validated_data)
    messages.success(request, f"Saved the group {group.name}.")
    return redirect("web:status-page", public_id=page.public_id)


@require_POST
@member_view()
def group_remove(request: HttpRequest, seat: Seat, public_id: str, group_id: str) -> HttpResponse:
    """Remove a group; its components stay on the page, ungrouped."""
    page = _page(seat, public_id)
    group = _on_page(ComponentGroup.objects.all(), page, group_id, "group")
    page_services.group_delete(group=group)
    messages.success(request, f"Removed the group {group.name}; its components stay on the page.")
    return redirect("web:status-page", public_id=page.public_id)


@require_POST
@member_view()
def subscriber_add(request: HttpRequest, seat: Seat, public_id: str) -> HttpResponse:
    """Subscribe an email address (it is sent a confirmation) or a webhook (its secret shown once)."""
    page = _page(seat, public_id)
    values: dict[str, Any] = _typed(request.POST, ("kind", "email", "url"))
    values["components"] = request.POST.getlist("components")
    body = {key: value for key, value in values.items() if value not in ("", [])}
    serializer = SubscriberSerializer(data=body)
    if not serializer.is_valid():
        return _detail(
            request, seat, page, form="subscriber", values=values, errors=field_errors(serializer.errors)
        )
    data = serializer.validated_data
    components = data.get("components") or None
    now = timezone.now()
    try:
        if data["kind"] == Subscriber.Kind.WEBHOOK:
            subscriber, secret = page_services.webhook_subscribe(
                page=page, url=data.get("url", ""), components=components, now=now
            )
        else:
            subscriber = page_services.email_subscribe(
                page=page, email=data.get("email", ""), components=components, now=now, by_owner=True
            )
    except ServiceError as refused:
        return _detail(
            request, seat, page, form="subscriber", values=values, errors={refused.field: [refused.message]}
        )
    if data["kind"] == Subscriber.Kind.WEBHOOK:
        messages.success(request, f"Subscribed {subscriber.url_shown}.")
        return _detail(request, seat, page, secret={"subscriber": subscriber, "value": secret})
    # The same words whether or not the address was subscribed already, as on the public page.
    messages.success(
        request, f"{subscriber.email} is sent a link to confirm; it hears of nothing until it does."
    )
    return redirect("web:status-page", public_id=page.public_id)


@require_POST
@member_view()
def subscriber_remove(request: HttpRequest, seat: Seat, public_id: str, subscriber_id: str) -> HttpResponse:
    page = _page(seat, public_id)
    subscriber = _on_page(Subscriber.objects.all(), page, subscriber_id, "subscriber")
    page_services.subscriber_delete(subscriber=subscriber)
    messages.success(
        request, f"Removed {subscriber.email or subscriber.url_shown}; it hears of nothing more."
    )
    return redirect("web:status-page", public_id=page.public_id)
