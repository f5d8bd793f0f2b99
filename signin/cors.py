"""Let assistants running in a browser call sign-in's machine endpoints from their own origin.

The metadata documents, registration, the token and revocation endpoints read no cookie and no
session: what a call proves is in its body (a PKCE verifier, a client secret, a token), so any
origin may read their answers. A browser-hosted MCP client (the MCP Inspector, a web IDE) has
to, and it sends headers such as MCP-Protocol-Version and a JSON body, so the browser asks first
with a preflight OPTIONS request. The consent screen is not among them: it runs on the user's
session and stays same-origin.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBase

View = Callable[..., HttpResponseBase]

# What a client may send besides the CORS-safelisted headers: a JSON body, client_secret_basic,
# and the MCP protocol version the SDKs add to every discovery request.
ALLOWED_HEADERS = "Authorization, Content-Type, MCP-Protocol-Version"
# Headers a client reads from an answer: how long to wait after a 429, and a bearer challenge.
EXPOSED_HEADERS = "Retry-After, WWW-Authenticate"
PREFLIGHT_MAX_AGE = 86_400


def open_to_any_origin(*methods: str) -> Callable[[View], View]:
    """Answer the view's preflight requests and let any origin read its answers to ``methods``."""
    allowed_methods = ", ".join((*methods, "OPTIONS"))

    def decorate(view: View) -> View:
        @wraps(view)
        def answer(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if request.method == "OPTIONS":
                response: HttpResponseBase = HttpResponse(status=204)
                response["Access-Control-Allow-Methods"] = allowed_methods
                response["Access-Control-Allow-Headers"] = ALLOWED_HEADERS
                response["Access-Control-Max-Age"] = str(PREFLIGHT_MAX_AGE)
            else:
                response = view(request, *args, **kwargs)
            response["Access-Control-Allow-Origin"] = "*"
            response["Access-Control-Expose-Headers"] = EXPOSED_HEADERS
            return response

        return answer

    return decorate
