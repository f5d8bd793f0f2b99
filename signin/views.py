"""Serve sign-in's endpoints: the two metadata documents, client registration and the consent screen.

The token and revocation endpoints are django-oauth-toolkit's own views (``signin/urls.py``);
the consent screen is its authorization view with Uptimy's form, template and rules.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django import forms
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.forms import AllowForm
from oauth2_provider.http import OAuth2ResponseRedirect
from oauth2_provider.models import get_application_model
from oauth2_provider.scopes import get_scopes_backend
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import AuthorizationView, TokenView
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from monitors.models import Membership
from monitors.selectors import memberships_of
from signin.consent import grantable_scopes, granted_scopes
from signin.discovery import (
    authorization_server_metadata,
    canonical_resource,
    mcp_resource,
    protected_resource_metadata,
    public_base,
)
from signin.oauth import ORGANIZATION_ATTRIBUTE
from signin.registration import RegistrationRefused, client_request
from signin.services import client_register
from signin.throttle import registration_wait_seconds

MAX_REGISTRATION_BYTES = 16 * 1024
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def _metadata(document: dict[str, Any]) -> JsonResponse:
    response = JsonResponse(document)
    response["Cache-Control"] = "public, max-age=300"
    return response


@require_GET
def authorization_server(request: HttpRequest) -> JsonResponse:
    """Answer RFC 8414's well-known URL: Uptimy's endpoints, scopes and what it supports."""
    return _metadata(authorization_server_metadata(public_base(request)))


@require_GET
def protected_resource(request: HttpRequest) -> JsonResponse:
    """Answer RFC 9728's well-known URL for the MCP server: its resource identifier and who signs in for it."""
    return _metadata(protected_resource_metadata(public_base(request)))


def _registration_error(error: str, description: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": error, "error_description": description}, status=status, headers=NO_STORE)


@csrf_exempt
@require_POST
def register(request: HttpRequest) -> JsonResponse:
    """Register an assistant as an OAuth client (RFC 7591), open to anyone but limited per address."""
    wait = registration_wait_seconds(request)
    if wait:
        response = _registration_error(
            "temporarily_unavailable",
            f"Too many registrations from this address; try again in {wait} s.",
            429,
        )
        response["Retry-After"] = str(wait)
        return response
    if int(request.META.get("CONTENT_LENGTH") or 0) > MAX_REGISTRATION_BYTES:
        return _registration_error(
            "invalid_client_metadata", f"The body may be at most {MAX_REGISTRATION_BYTES} bytes."
        )
    if request.content_type != "application/json":
        return _registration_error("invalid_client_metadata", "Send the client metadata as application/json.")
    try:
        body = json.loads(request.body)
        client = client_request(body)
    except ValueError:
        return _registration_error("invalid_client_metadata", "The body is not valid JSON.")
    except RegistrationRefused as refused:
        return _registration_error(refused.error, refused.description)
    registered = client_register(client=client)
    application = registered.application
    answer: dict[str, Any] = {
        "client_id": application.client_id,
        "client_id_issued_at": int(application.created.timestamp()),
        "redirect_uris": list(client.redirect_uris),
        "grant_types": list(client.grant_types),
        "response_types": ["code"],
        "token_endpoint_auth_method": client.auth_method,
    }
    if client.client_name:
        answer["client_name"] = client.client_name
    if client.scope:
        answer["scope"] = client.scope
    if registered.client_secret is not None:
        answer["client_secret"] = registered.client_secret
        answer["client_secret_expires_at"] = 0
    return JsonResponse(answer, status=201, headers=NO_STORE)


class ConsentForm(AllowForm):  # type: ignore[misc]  # django-oauth-toolkit is untyped
    """The toolkit's authorization form (hidden request fields, allow) plus the organization chosen."""

    organization = forms.CharField(required=False)


class ConsentView(AuthorizationView):  # type: ignore[misc]  # django-oauth-toolkit is untyped
    """Ask the signed-in user whether an assistant may act in one of their organizations, and with which scopes.

    The toolkit validates the request (client, redirect URI, PKCE, scopes) before the page is shown
    and again when it is posted; this view adds the organization (one of the user's own), narrows
    the scopes to what their role there allows, and binds the code to Uptimy's MCP resource.
    """

    template_name = "signin/consent.html"
    form_class = ConsentForm
    # What an Allow grants, once checked: (organization id, scopes, resources).
    _granted: tuple[int, str, list[str]] | None = None

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if "approval_prompt" in request.GET:
            # The toolkit skips the screen on approval_prompt=auto when an earlier token covers
            # the scopes; Uptimy asks every time, as the organization is chosen there.
            query = request.GET.copy()
            query.pop("approval_prompt")
            request.GET = query  # type: ignore[assignment]  # django-stubs types GET as immutable
        base = public_base(request)
        foreign = [r for r in request.GET.getlist("resource") if canonical_resource(r, base) is None]
        if not foreign:
            return super().get(request, *args, **kwargs)  # type: ignore[no-any-return]
        # RFC 8707 §2: a resource this server does not protect is invalid_target, sent back to
        # the client once the toolkit has checked the client and its redirect URI.
        try:
            _scopes, credentials = self.validate_authorization_request(request)
        except OAuthToolkitError as error:
            return self.error_response(error, application=None)  # type: ignore[no-any-return]
        application = get_application_model().objects.get(client_id=credentials["client_id"])
        wrong_target = OAuthToolkitError(
            error=CustomOAuth2Error(
                error="invalid_target",
                description=f"Uptimy signs in for its MCP server only ({mcp_resource(base)}).",
                state=credentials.get("state"),
            ),
            redirect_uri=credentials["redirect_uri"],
        )
        return self.error_response(wrong_target, application)  # type: ignore[no-any-return]

    def form_valid(self, form: ConsentForm) -> HttpResponseBase:
        self._granted = None
        if form.cleaned_data.get("allow"):
            problem = self._grant_problem(form)
            if problem:
                form.add_error(None, problem)
                return self.form_invalid(form)
        return super().form_valid(form)  # type: ignore[no-any-return]

    def form_invalid(self, form: ConsentForm) -> HttpResponse:
        response = super().form_invalid(form)
        response.status_code = 400
        return response  # type: ignore[no-any-return]

    def _grant_problem(self, form: ConsentForm) -> str | None:
        """Check the organization, the scopes and the resource of an Allow; keep the grant, or say what is wrong."""
        chosen = self._membership(form.cleaned_data.get("organization") or "")
        if chosen is None:
            return "Choose one of your organizations."
        asked_scopes = form.cleaned_data["scope"].split()
        scopes = granted_scopes(asked_scopes, chosen.role)
        if not scopes:
            grantable = " and ".join(sorted(grantable_scopes(chosen.role)))
            return (
                f"As {chosen.role} of {chosen.organization.name} you can grant {grantable} only, "
                f"and this assistant asked for {' '.join(asked_scopes)}."
            )
        base = public_base(self.request)
        asked = form.cleaned_data.get("resource", "").split() or [mcp_resource(base)]
        resources = {canonical_resource(resource, base) for resource in asked}
        if None in resources:
            return f"Uptimy signs in for its MCP server only ({mcp_resource(base)})."
        self._granted = (chosen.organization_id, " ".join(scopes), [mcp_resource(base)])
        return None

    def _membership(self, public_id: str) -> Membership | None:
        return next(
            (m for m in memberships_of(user=self.request.user) if str(m.organization.public_id) == public_id),
            None,
        )

    def create_authorization_response(
        self, request: HttpRequest, scopes: str, credentials: dict[str, Any], allow: bool
    ) -> Any:
        if allow and self._granted is not None:
            organization_id, scopes, resources = self._granted
            credentials[ORGANIZATION_ATTRIBUTE] = organization_id
            credentials["resource"] = resources
        return super().create_authorization_response(request, scopes, credentials, allow)

    def redirect(self, redirect_to: str, application: Any) -> HttpResponseBase:
        # RFC 9207: name the issuer in every answer to the client, so a client talking to several
        # servers can tell whose answer this is.
        parts = urlsplit(redirect_to)
        query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "iss"]
        query.append(("iss", public_base(self.request)))
        target = urlunsplit(parts._replace(query=urlencode(query)))
        response: HttpResponseBase = OAuth2ResponseRedirect(target, redirect_schemes(application))
        return response

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        memberships = list(memberships_of(user=self.request.user))
        form = context.get("form")
        if "application" not in context and form is not None and form.is_bound:
            # A refused post is drawn again from the form's hidden fields, the toolkit having set nothing.
            client_id = form.data.get("client_id", "")
            context["application"] = get_application_model().objects.filter(client_id=client_id).first()
            context["scopes"] = [s for s in form.data.get("scope", "").split() if s in ("read", "write")]
        all_scopes = get_scopes_backend().get_all_scopes()
        context["scope_rows"] = [(scope, all_scopes.get(scope, "")) for scope in context.get("scopes", [])]
        context["organizations"] = [_organization_choice(m) for m in memberships]
        chosen = form.data.get("organization") if form is not None and form.is_bound else None
        context["chosen_organization"] = chosen or (
            context["organizations"][0]["public_id"] if memberships else None
        )
        redirect_uri = (
            form.data.get("redirect_uri") if form is not None and form.is_bound else None
        ) or context.get("redirect_uri", "")
        redirect = urlsplit(redirect_uri or "")
        context["redirect_host"] = redirect.netloc
        context["redirect_app_scheme"] = (
            redirect.scheme if redirect.scheme not in ("http", "https", "") else ""
        )
        context["redirect_origin"] = form_action_source(redirect_uri or "")
        context["client_host"] = metadata_host(context.get("application"))
        return context  # type: ignore[no-any-return]

    def render_to_response(self, context: dict[str, Any], **kwargs: Any) -> HttpResponse:
        response = super().render_to_response(context, **kwargs)
        if context.get("redirect_origin"):
            # The web app's policy lets forms go to this origin only, and browsers apply form-action
            # to the redirect that answers the post: the assistant's redirect URI must be allowed too.
            response._csp_update = {"form-action": [context["redirect_origin"]]}
        return response  # type: ignore[no-any-return]


def redirect_schemes(application: Any) -> list[str]:
    """Return the schemes a redirect to ``application`` may use: the web's, and those of its own registered URIs.

    The toolkit allows one fixed list for every client; a native app registered with its own
    scheme (``cursor://…``, checked at registration) is sent back through that scheme only.
    Every redirect here goes to a URI the toolkit has matched against the registered ones.
    """
    schemes = list(oauth2_settings.ALLOWED_REDIRECT_URI_SCHEMES)
    for uri in application.redirect_uris.split() if application is not None else []:
        scheme = urlsplit(uri).scheme
        if scheme and scheme not in schemes:
            schemes.append(scheme)
    return schemes


def metadata_host(application: Any) -> str:
    """Return who publishes a client known by its metadata document (its URL's host), or "" for any other client.

    The draft asks the consent screen to show it: a name is the client's own claim, the host is
    where Uptimy read it.
    """
    if application is None or application.registration_source != application.RegistrationSource.CIMD:
        return ""
    return urlsplit(application.client_id).hostname or ""


def form_action_source(redirect_uri: str) -> str:
    """Return the CSP source allowing the consent form's redirect to ``redirect_uri``: its origin, or an app's scheme."""
    redirect = urlsplit(redirect_uri)
    if redirect.scheme in ("http", "https"):
        return f"{redirect.scheme}://{redirect.netloc}" if redirect.netloc else ""
    return f"{redirect.scheme}:" if redirect.scheme else ""


def _organization_choice(membership: Membership) -> dict[str, Any]:
    """Return one option of the consent screen's organization list."""
    return {
        "public_id": str(membership.organization.public_id),
        "name": membership.organization.name,
        "role": membership.role,
        "read_only": "write" not in grantable_scopes(membership.role),
    }


class JsonTokenView(TokenView):  # type: ignore[misc]  # django-oauth-toolkit is untyped
    """The toolkit's token endpoint, its error answers labelled as the JSON they are.

    The toolkit raises an RFC 8707 refusal (invalid_target) as an oauthlib error without headers,
    so its JSON body went out as text/html; RFC 6749 §5.2 says application/json.
    """

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        response = super().post(request, *args, **kwargs)
        if response.get("Content-Type", "").startswith("text/html") and response.content.startswith(b"{"):
            response["Content-Type"] = "application/json"
            response["Cache-Control"] = "no-store"
        return response  # type: ignore[no-any-return]
