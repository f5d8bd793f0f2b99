"""Route sign-in: the well-known metadata documents at the root, the OAuth endpoints under /oauth/.

Every endpoint but the consent screen is open to browser clients on other origins (``signin/cors.py``).
"""

from django.urls import path
from oauth2_provider import views as toolkit

from signin import views
from signin.cors import open_to_any_origin
from signin.discovery import MCP_PATH

well_known_urlpatterns = [
    path(
        ".well-known/oauth-authorization-server",
        open_to_any_origin("GET")(views.authorization_server),
        name="authorization-server",
    ),
    path(
        ".well-known/oauth-protected-resource" + MCP_PATH,
        open_to_any_origin("GET")(views.protected_resource),
        name="protected-resource",
    ),
]

oauth_urlpatterns = [
    path("authorize/", views.ConsentView.as_view(), name="authorize"),
    path("token/", open_to_any_origin("POST")(views.JsonTokenView.as_view()), name="token"),
    path("revoke/", open_to_any_origin("POST")(toolkit.RevokeTokenView.as_view()), name="revoke"),
    path("register/", open_to_any_origin("POST")(views.register), name="register"),
]
