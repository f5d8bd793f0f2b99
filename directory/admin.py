"""Cover the directory's listings and the registry sync's state in the Django admin."""

from __future__ import annotations

from django.contrib import admin

from directory.models import Listing, ListingRemote, RegistrySync
from monitors.admin import ModelAdmin, TabularInline


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
