"""Cover the status-page models in the Django admin; a page's password hash is never shown."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from monitors.admin import ModelAdmin, TabularInline
from statuspages.models import (
    AffectedComponent,
    Component,
    ComponentGroup,
    IncidentUpdate,
    Notice,
    NoticeDelivery,
    PublishedIncident,
    StatusChangeCursor,
    StatusPage,
    Subscriber,
)


class ComponentInline(TabularInline[Component, StatusPage]):
    model = Component
    extra = 0
    fields = [
        "display_name",
        "healthcheck",
        "group",
        "position",
        "only_show_when_not_operational",
        "show_mcp_details",
        "declared_status",
    ]
    raw_id_fields = ["healthcheck", "group"]


@admin.register(StatusPage)
class StatusPageAdmin(ModelAdmin[StatusPage]):
    list_display = ["slug", "title", "organization", "access", "custom_domain", "domain_verified_at"]
    list_filter = ["access"]
    search_fields = ["slug", "title", "custom_domain"]
    readonly_fields = ["public_id", "domain_token", "created_at", "updated_at"]
    exclude = ["password_hash"]
    raw_id_fields = ["organization"]
    inlines = [ComponentInline]


@admin.register(ComponentGroup)
class ComponentGroupAdmin(ModelAdmin[ComponentGroup]):
    list_display = ["name", "page", "position"]
    raw_id_fields = ["page"]


@admin.register(Component)
class ComponentAdmin(ModelAdmin[Component]):
    list_display = ["display_name", "page", "healthcheck", "group", "position"]
    search_fields = ["display_name"]
    raw_id_fields = ["page", "healthcheck", "group"]
    # Shown, as the page's domain_token is; rotated through the API (…/rotate-badge-token/).
    readonly_fields = ["public_id", "badge_token", "created_at", "updated_at"]


class IncidentUpdateInline(TabularInline[IncidentUpdate, PublishedIncident]):
    model = IncidentUpdate
    extra = 0
    fields = ["status", "body", "created_at"]


@admin.register(PublishedIncident)
class PublishedIncidentAdmin(ModelAdmin[PublishedIncident]):
    list_display = ["title", "page", "draft", "impact", "status", "created_at", "resolved_at"]
    list_filter = ["draft", "impact", "status"]
    search_fields = ["title"]
    raw_id_fields = ["page", "drafted_for"]
    filter_horizontal = ["components"]
    inlines = [IncidentUpdateInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[PublishedIncident]:
        # Drafts too: the default manager is the public readers' and leaves them out.
        return PublishedIncident.with_drafts.all()


class AffectedComponentInline(TabularInline[AffectedComponent, IncidentUpdate]):
    model = AffectedComponent
    extra = 0
    fields = ["component", "old_status", "new_status"]
    raw_id_fields = ["component"]


@admin.register(IncidentUpdate)
class IncidentUpdateAdmin(ModelAdmin[IncidentUpdate]):
    list_display = ["incident", "status", "created_at"]
    raw_id_fields = ["incident"]
    inlines = [AffectedComponentInline]


@admin.register(AffectedComponent)
class AffectedComponentAdmin(ModelAdmin[AffectedComponent]):
    list_display = ["update", "component", "old_status", "new_status"]
    list_filter = ["new_status"]
    raw_id_fields = ["update", "component"]


@admin.register(Subscriber)
class SubscriberAdmin(ModelAdmin[Subscriber]):
    """Show subscribers; a webhook's URL and secret stay encrypted (its masked URL is shown)."""

    list_display = ["__str__", "kind", "page", "confirmed_at", "disabled_reason", "created_at"]
    list_filter = ["kind"]
    search_fields = ["email", "url_shown"]
    readonly_fields = ["public_id", "kind", "url_shown", "created_at", "confirmation_sent_at"]
    exclude = ["config_encrypted"]
    raw_id_fields = ["page"]
    filter_horizontal = ["components"]


@admin.register(Notice)
class NoticeAdmin(ModelAdmin[Notice]):
    list_display = ["kind", "page", "key", "at", "fanned_out_at"]
    list_filter = ["kind"]
    raw_id_fields = ["page", "subscriber"]
    readonly_fields = ["public_id"]


@admin.register(NoticeDelivery)
class NoticeDeliveryAdmin(ModelAdmin[NoticeDelivery]):
    list_display = ["notice", "subscriber", "state", "attempts", "next_attempt_at", "sent_at"]
    list_filter = ["state"]
    raw_id_fields = ["notice", "subscriber"]
    readonly_fields = ["public_id", "created_at"]


@admin.register(StatusChangeCursor)
class StatusChangeCursorAdmin(ModelAdmin[StatusChangeCursor]):
    list_display = ["name", "position", "gap_at", "gap_since"]
