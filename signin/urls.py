"""Route sign-in: the well-known metadata documents at the root, the OAuth endpoints under /oauth/."""

from django.urls import path
from oauth2_provider import views as toolkit

from signin import views
from signin.discovery import MCP_PATH

well_known_urlpatterns = [
    path(".well-known/oauth-authorization-server", views.authorization_server, name="authorization-server"),
    path(
        ".well-known/oauth-protected-resource" + MCP_PATH,
        views.protected_resource,
        name="protected-resource",
    ),
]

oauth_urlpatterns = [
    path("authorize/", views.ConsentView.as_view(), name="authorize"),
    path("token/", views.JsonTokenView.as_view(), name="token"),
    path("revoke/", toolkit.RevokeTokenView.as_view(), name="revoke"),
    path("register/", views.register, name="register"),
]
