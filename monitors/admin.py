"""Cover every model in the Django admin; secrets stay hidden there too."""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, TypeVar

from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest

from monitors.models import (
    ApiKey,
    AuditEvent,
    CauseChange,
    CertificateChange,
    Healthcheck,
    HealthcheckListing,
    HealthcheckTag,
    Heartbeat,
    Invitation,
    MaintenanceWindow,
    MaintenanceWindowTag,
    Membership,
    Organization,
    OutboxBatch,
    Ping,
    Plan,
    ProbeResult,
    RateCounter,
    RecoveryCode,
    Region,
    RegionState,
    Rollup,
    SignInSession,
    SlotVerdict,
    StatusChange,
    ToolChange,
    ToolList,
    ToolListVersion,
    TwoFactor,
)

_ModelT = TypeVar("_ModelT", bound=Model)
_ParentT = TypeVar("_ParentT", bound=Model)

if TYPE_CHECKING:
    ModelAdmin = admin.ModelAdmin
    TabularInline = admin.TabularInline
else:
    # django-stubs types the admin classes by model, but Django's own have no __class_getitem__,
    # so ``admin.ModelAdmin[Region]`` fails at runtime. django-stubs-ext's monkeypatch() would
    # add one to Django's classes, at the cost of a production dependency; these subclasses only
    # accept the type arguments (and ignore them) and change nothing else.
    class ModelAdmin(admin.ModelAdmin, Generic[_ModelT]):
        pass

    class TabularInline(admin.TabularInline, Generic[_ModelT, _ParentT]):
        pass


@admin.register(Region)
class RegionAdmin(ModelAdmin[Region]):
    list_display = ["slug", "name", "enabled"]
    list_filter = ["enabled"]


@admin.register(Plan)
class PlanAdmin(ModelAdmin[Plan]):
    list_display = ["slug", "name", "max_healthchecks", "min_interval_seconds", "retention_days"]
    filter_horizontal = ["allowed_regions"]


class MembershipInline(TabularInline[Membership, Organization]):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Organization)
class OrganizationAdmin(ModelAdmin[Organization]):
    list_display = ["slug", "name", "plan", "created_at"]
    list_filter = ["plan"]
    search_fields = ["slug", "name"]
    readonly_fields = ["public_id", "created_at"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(ModelAdmin[Membership]):
    list_display = ["user", "organization", "role"]
    list_filter = ["role"]
    autocomplete_fields = ["user", "organization"]


@admin.register(Invitation)
class InvitationAdmin(ModelAdmin[Invitation]):
    """Show invitations; they are sent from the web app's members page (the link is never stored)."""

    list_display = ["email", "organization", "role", "created_at", "expires_at", "accepted_at", "revoked_at"]
    list_filter = ["role"]
    search_fields = ["email", "organization__slug"]
    readonly_fields = [
        "public_id",
        "organization",
        "email",
        "invited_by",
        "created_at",
        "accepted_at",
        "accepted_by",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(ApiKey)
class ApiKeyAdmin(ModelAdmin[ApiKey]):
    """Show keys by prefix only; keys are created with `manage.py createapikey`, never here."""

    list_display = ["prefix", "name", "organization", "scope", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["scope"]
    search_fields = ["prefix", "name", "organization__slug"]
    readonly_fields = ["public_id", "prefix", "organization", "created_at", "last_used_at"]
    fields = [
        "public_id",
        "organization",
        "name",
        "prefix",
        "scope",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


class TagInline(TabularInline[HealthcheckTag, Healthcheck]):
    model = HealthcheckTag
    extra = 0


@admin.register(Healthcheck)
class HealthcheckAdmin(ModelAdmin[Healthcheck]):
    """Show config with header values masked (the stored config never holds them)."""

    list_display = ["name", "organization", "type", "status", "interval_seconds", "paused", "next_check_at"]
    list_filter = ["type", "status", "paused", "regions"]
    search_fields = ["name", "organization__slug"]
    readonly_fields = ["public_id", "status", "status_changed_at", "created_at", "updated_at", "config"]
    exclude = ["secret_headers"]
    filter_horizontal = ["regions"]
    inlines = [TagInline]


class ReadOnlyAdmin(ModelAdmin[_ModelT]):
    """Show what the checks recorded; history is written by the workers, never edited by hand."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: _ModelT | None = None) -> bool:
        return False


@admin.register(RegionState)
class RegionStateAdmin(ReadOnlyAdmin[RegionState]):
    list_display = ["healthcheck", "region", "status", "since", "last_result_at", "kind"]
    list_filter = ["status", "region"]


@admin.register(ProbeResult)
class ProbeResultAdmin(ReadOnlyAdmin[ProbeResult]):
    list_display = ["healthcheck", "region", "slot", "attempt", "status", "kind", "total_ms"]
    list_filter = ["status", "region", "kind"]
    date_hierarchy = "slot"
    list_select_related = ["healthcheck", "region"]


@admin.register(StatusChange)
class StatusChangeAdmin(ReadOnlyAdmin[StatusChange]):
    list_display = ["healthcheck", "at", "from_status", "to_status", "reason"]
    list_filter = ["to_status"]
    date_hierarchy = "at"


@admin.register(CauseChange)
class CauseChangeAdmin(ReadOnlyAdmin[CauseChange]):
    list_display = ["healthcheck", "at", "status", "from_kind", "to_kind", "reason"]
    list_filter = ["to_kind"]
    date_hierarchy = "at"


@admin.register(SlotVerdict)
class SlotVerdictAdmin(ReadOnlyAdmin[SlotVerdict]):
    list_display = ["healthcheck", "slot", "settle_at"]
    list_select_related = ["healthcheck"]


@admin.register(Heartbeat)
class HeartbeatAdmin(ReadOnlyAdmin[Heartbeat]):
    # The ping id is the ping URL's secret: the owner reads it from the API, the admin never shows it.
    exclude = ["ping_id"]
    list_display = ["healthcheck", "ping_count", "judged_count"]
    list_select_related = ["healthcheck"]


@admin.register(Ping)
class PingAdmin(ReadOnlyAdmin[Ping]):
    list_display = ["healthcheck", "at", "kind", "exit_status", "source", "duration_seconds"]
    list_filter = ["kind"]
    list_select_related = ["healthcheck"]
    date_hierarchy = "at"


@admin.register(ToolList)
class ToolListAdmin(ReadOnlyAdmin[ToolList]):
    list_display = ["healthcheck", "digest", "first_seen_at"]


@admin.register(ToolListVersion)
class ToolListVersionAdmin(ReadOnlyAdmin[ToolListVersion]):
    list_display = ["healthcheck", "digest", "tool_count", "current_since", "replaced_at"]


@admin.register(ToolChange)
class ToolChangeAdmin(ReadOnlyAdmin[ToolChange]):
    list_display = [
        "healthcheck",
        "at",
        "region",
        "removed_count",
        "added_count",
        "new_required_inputs_count",
    ]


@admin.register(CertificateChange)
class CertificateChangeAdmin(ReadOnlyAdmin[CertificateChange]):
    list_display = ["healthcheck", "at", "region", "previous_serial", "serial", "not_after"]


@admin.register(Rollup)
class RollupAdmin(ReadOnlyAdmin[Rollup]):
    list_display = ["healthcheck", "region", "period", "start", "runs", "failures", "p50_ms", "p95_ms"]
    list_filter = ["period", "region"]


@admin.register(HealthcheckTag)
class HealthcheckTagAdmin(ModelAdmin[HealthcheckTag]):
    list_display = ["name", "healthcheck"]
    search_fields = ["name"]


@admin.register(OutboxBatch)
class OutboxBatchAdmin(ReadOnlyAdmin[OutboxBatch]):
    """Show what waits to be handed to a region's workers: a row that stays was never published."""

    list_display = ["region", "created_at", "publish_after", "republished"]
    list_filter = ["region"]


@admin.register(MaintenanceWindow)
class MaintenanceWindowAdmin(ReadOnlyAdmin[MaintenanceWindow]):
    """Show maintenance windows; they are written through the API, whose services check the schedule."""

    list_display = ["name", "organization", "starts_at", "duration", "rrule", "timezone", "ends_at"]
    search_fields = ["name", "organization__slug"]
    list_select_related = ["organization"]


@admin.register(MaintenanceWindowTag)
class MaintenanceWindowTagAdmin(ReadOnlyAdmin[MaintenanceWindowTag]):
    list_display = ["name", "window"]
    search_fields = ["name"]


@admin.register(HealthcheckListing)
class HealthcheckListingAdmin(ReadOnlyAdmin[HealthcheckListing]):
    """Show customers' own listings and their free-tier quote checks; they are written through the API."""

    list_display = [
        "healthcheck",
        "namespace",
        "pricing_url",
        "quote_found_at",
        "quote_checked_at",
        "quote_problem",
    ]
    search_fields = ["namespace", "healthcheck__name"]
    list_select_related = ["healthcheck"]


@admin.register(TwoFactor)
class TwoFactorAdmin(ReadOnlyAdmin[TwoFactor]):
    """Show who signs in with a second factor; deleting the row turns it off for a person who lost theirs.

    The secret is never shown, not even encrypted.
    """

    list_display = ["user", "created_at", "confirmed_at"]
    exclude = ["secret", "last_used_step"]
    search_fields = ["user__username", "user__email"]
    list_select_related = ["user"]


@admin.register(RecoveryCode)
class RecoveryCodeAdmin(ReadOnlyAdmin[RecoveryCode]):
    """Show how many recovery codes are used; the codes themselves exist only as hashes, never shown."""

    list_display = ["two_factor", "used_at"]
    exclude = ["code_hash"]
    list_select_related = ["two_factor__user"]


@admin.register(AuditEvent)
class AuditEventAdmin(ModelAdmin[AuditEvent]):
    """Show the audit log, never change it: no add, change or delete (the model refuses them too)."""

    list_display = [
        "at",
        "organization",
        "action",
        "target_type",
        "target_name",
        "actor_label",
        "via",
        "address",
    ]
    list_filter = ["action", "via", "actor_kind"]
    search_fields = ["target_name", "target_id", "actor_label", "actor_email"]
    date_hierarchy = "at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: AuditEvent | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: AuditEvent | None = None) -> bool:
        return False


@admin.register(SignInSession)
class SignInSessionAdmin(ReadOnlyAdmin[SignInSession]):
    """Show where people are signed in; the session key is a credential, never shown."""

    list_display = ["user", "address", "created_at", "last_seen_at"]
    exclude = ["session_key"]
    search_fields = ["user__username", "user__email", "address"]
    list_select_related = ["user"]


@admin.register(RateCounter)
class RateCounterAdmin(ReadOnlyAdmin[RateCounter]):
    """Show the embedded default's rate-limit counters (keys hash user names; nothing secret)."""

    list_display = ["key", "count", "expires_at"]
