"""Declare /api/v1/reports/: the report itself, the organization's settings, a healthcheck's target."""

from django.urls import path

from reports.api import views

urlpatterns = [
    path("", views.ReportView.as_view(), name="report"),
    path("settings/", views.ReportSettingsView.as_view(), name="report-settings"),
    path("targets/<uuid:id>/", views.HealthcheckTargetView.as_view(), name="report-target"),
]
