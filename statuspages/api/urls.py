"""Declare /api/v1/status-pages/: pages, and under each its components, groups, incidents and their updates."""

from typing import Any

from django.urls import path

from statuspages.api import views

LIST: dict[str, Any] = {"get": "list", "post": "create"}
DETAIL: dict[str, Any] = {"get": "retrieve", "put": "update", "patch": "partial_update", "delete": "destroy"}
VERIFY: dict[str, Any] = {"post": "verify_domain"}
ROTATE: dict[str, Any] = {"post": "rotate_badge_token"}
UPDATE_DETAIL: dict[str, Any] = {"get": "retrieve", "delete": "destroy"}
PUBLISH: dict[str, Any] = {"post": "publish"}

urlpatterns = [
    path("", views.StatusPageViewSet.as_view(LIST), name="status-page-list"),
    path("<uuid:id>/", views.StatusPageViewSet.as_view(DETAIL), name="status-page-detail"),
    path(
        "<uuid:id>/verify-domain/",
        views.StatusPageViewSet.as_view(VERIFY),
        name="status-page-verify-domain",
    ),
    path(
        "<uuid:page_id>/components/", views.ComponentViewSet.as_view(LIST), name="status-page-component-list"
    ),
    path(
        "<uuid:page_id>/components/<uuid:id>/",
        views.ComponentViewSet.as_view(DETAIL),
        name="status-page-component-detail",
    ),
    path(
        "<uuid:page_id>/components/<uuid:id>/rotate-badge-token/",
        views.ComponentViewSet.as_view(ROTATE),
        name="status-page-component-rotate-badge-token",
    ),
    path("<uuid:page_id>/groups/", views.ComponentGroupViewSet.as_view(LIST), name="status-page-group-list"),
    path(
        "<uuid:page_id>/groups/<uuid:id>/",
        views.ComponentGroupViewSet.as_view(DETAIL),
        name="status-page-group-detail",
    ),
    path(
        "<uuid:page_id>/incidents/",
        views.PublishedIncidentViewSet.as_view(LIST),
        name="status-page-incident-list",
    ),
    path(
        "<uuid:page_id>/incidents/<uuid:id>/",
        views.PublishedIncidentViewSet.as_view(DETAIL),
        name="status-page-incident-detail",
    ),
    path(
        "<uuid:page_id>/incidents/<uuid:id>/publish/",
        views.PublishedIncidentViewSet.as_view(PUBLISH),
        name="status-page-incident-publish",
    ),
    path(
        "<uuid:page_id>/subscribers/",
        views.SubscriberViewSet.as_view({"get": "list", "post": "create"}),
        name="status-page-subscriber-list",
    ),
    path(
        "<uuid:page_id>/subscribers/<uuid:id>/",
        views.SubscriberViewSet.as_view(UPDATE_DETAIL),
        name="status-page-subscriber-detail",
    ),
    path(
        "<uuid:page_id>/incidents/<uuid:incident_id>/updates/",
        views.IncidentUpdateViewSet.as_view(LIST),
        name="status-page-incident-update-list",
    ),
    path(
        "<uuid:page_id>/incidents/<uuid:incident_id>/updates/<uuid:id>/",
        views.IncidentUpdateViewSet.as_view(UPDATE_DETAIL),
        name="status-page-incident-update-detail",
    ),
]
