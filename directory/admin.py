"""Cover the directory in the Django admin: listings, the sync's state, licences, probing and scorecards."""

from __future__ import annotations

from django.contrib import admin

from directory.models import (
    Listing,
    ListingProbeHour,
    ListingProbeState,
    ListingRemote,
    ListingScorecard,
    ListingToolChange,
    ListingToolList,
    RegistrySync,
    RepositoryLicence,
)
from monitors.admin import ModelAdmin, ReadOnlyAdmin, TabularInline


class RemoteInline(TabularInline[ListingRemote, Listing]):
    model = ListingRemote
    extra = 0
    readonly_fields = ("position", "transport", "url", "templated", "headers_required", "header_names")


@admin.register(Listing)
class ListingAdmin(ModelAdmin[Listing]):
    list_display = ("name", "version", "is_latest", "status", "updated_at", "synced_at")
    list_filter = ("status", "is_latest")
    search_fields = ("name", "description")
    readonly_fields = ("synced_at", "raw")
    inlines = [RemoteInline]


@admin.register(RegistrySync)
class RegistrySyncAdmin(ModelAdmin[RegistrySync]):
    list_display = ("base_url", "updated_since", "last_full_at", "last_run_at", "last_error")


@admin.register(RepositoryLicence)
class RepositoryLicenceAdmin(ReadOnlyAdmin[RepositoryLicence]):
    list_display = ("owner", "repo", "status", "spdx_id", "osi_approved", "looked_up_at")
    list_filter = ("status",)
    search_fields = ("owner", "repo")


@admin.register(ListingProbeState)
class ListingProbeStateAdmin(ReadOnlyAdmin[ListingProbeState]):
    """Show each listing's probing: when it is next due and what its latest probe found."""

    list_display = ("listing", "next_probe_at", "probed_at", "tool_count", "kind", "skipped_reason")
    search_fields = ("listing__name", "url")
    list_select_related = ("listing",)


@admin.register(ListingProbeHour)
class ListingProbeHourAdmin(ReadOnlyAdmin[ListingProbeHour]):
    list_display = ("listing", "hour", "attempts", "successes", "successes_1s", "successes_3s", "skipped")
    list_select_related = ("listing",)


@admin.register(ListingToolList)
class ListingToolListAdmin(ReadOnlyAdmin[ListingToolList]):
    list_display = ("listing", "tool_count", "current_since")
    list_select_related = ("listing",)


@admin.register(ListingToolChange)
class ListingToolChangeAdmin(ReadOnlyAdmin[ListingToolChange]):
    list_display = ("listing", "at", "removed_count", "added_count", "new_required_inputs_count")
    list_select_related = ("listing",)


@admin.register(ListingScorecard)
class ListingScorecardAdmin(ReadOnlyAdmin[ListingScorecard]):
    """Show the stored scorecards the directory ranks by; they are recomputed, never edited."""

    list_display = ("listing", "remote", "passed", "total", "core_passed", "success_ratio", "computed_at")
    list_filter = ("remote",)
    search_fields = ("listing__name",)
    list_select_related = ("listing",)


@admin.register(ListingRemote)
class ListingRemoteAdmin(ReadOnlyAdmin[ListingRemote]):
    list_display = ("listing", "position", "transport", "url", "templated", "headers_required")
    search_fields = ("listing__name", "url")
    list_select_related = ("listing",)
