"""The alerts app's pages outside the API: the acknowledge link."""

from django.urls import path

from alerts.views import acknowledge_link

app_name = "alerts"

urlpatterns = [
    path("ack/<str:token>/", acknowledge_link, name="acknowledge-link"),
]
