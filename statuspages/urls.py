"""Route a status page's public addresses; mounted under /s/<slug>/ and, by Host, at a custom domain's root."""

from django.urls import path

from statuspages import views

urlpatterns = [
    path("", views.page, name="page"),
    path("history/", views.history, name="history"),
    path("incidents/<uuid:incident_id>/", views.incident, name="incident"),
    path("login/", views.login, name="login"),
    path("subscribe/", views.subscribe, name="subscribe"),
    path("subscribe/confirm/<str:token>/", views.confirm, name="subscribe-confirm"),
    path("unsubscribe/<str:token>/", views.unsubscribe, name="unsubscribe"),
    path("history.rss", views.history_feed, {"fmt": "rss"}, name="history-rss"),
    path("history.atom", views.history_feed, {"fmt": "atom"}, name="history-atom"),
    *(
        path(f"api/v2/{endpoint}.json", views.public_json, {"endpoint": endpoint}, name=f"api-{endpoint}")
        for endpoint in views.ENDPOINTS
    ),
    # A badge's name is checked by the view, so an unknown one is still answered with a badge.
    path("badges/<str:key>/<str:name>.svg", views.badge, {"fmt": "svg"}, name="badge"),
    path("badges/<str:key>/<str:name>.json", views.badge, {"fmt": "json"}, name="badge-json"),
]
