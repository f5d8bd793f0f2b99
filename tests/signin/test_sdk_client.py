"""The official MCP SDK's OAuth client signs in to a live Uptimy, the way an assistant does.

``mcp.client.auth.OAuthClientProvider`` (not written here) meets a 401 from the MCP endpoint,
reads the protected resource metadata it names, then the authorization server's metadata,
registers itself (RFC 7591), sends its user to the consent screen with a PKCE challenge and the
resource, and exchanges the code. The user's part (sign in at /app/login/, choose the organization,
Allow) is played over HTTP by the redirect handler, as a browser would post the forms.

The MCP endpoint is being built beside this work, so ``/mcp`` here is a stand-in that answers
exactly as the real one will: 401 with the RFC 9728 challenge, or 200 once ``oauth_grant``
accepts the token for ``<base>/mcp``.
"""

from __future__ import annotations

import asyncio
import re
from html.parser import HTMLParser
from importlib import import_module
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import httpx2
import pytest
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from monitors.models import Membership
from monitors.services import membership_add
from probes.checks.mcp import McpConfig
from probes.runner import ProbeEnv, run_check_sync
from probes.types import Access
from signin.discovery import RESOURCE_METADATA_PATH, mcp_resource, public_base
from signin.tokens import oauth_grant

PASSWORD = "a-long-test-password-42"
CALLBACK = "http://127.0.0.1:45871/callback"


@csrf_exempt
def stand_in_mcp(request: HttpRequest) -> HttpResponse:
    """Answer as the MCP endpoint will: the RFC 9728 challenge without a good token, the grant with one."""
    base = public_base(request)
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    grant = oauth_grant(token, resource=mcp_resource(base)) if scheme.lower() == "bearer" else None
    if grant is None:
        challenge = f'Bearer resource_metadata="{base}{RESOURCE_METADATA_PATH}", scope="read write"'
        return HttpResponse(status=401, headers={"WWW-Authenticate": challenge})
    return JsonResponse({"organization_id": grant.organization_id, "scopes": sorted(grant.scopes)})


urlpatterns = [path("mcp", stand_in_mcp), path("", include("uptimy.urls"))]


class MemoryStorage:
    """Keep the SDK's tokens and registration in memory (its TokenStorage protocol)."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class _Form(HTMLParser):
    """Collect a page's form inputs (hidden fields and the CSRF token) and the first select's chosen option."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "input" and values.get("type") == "hidden" and values.get("name"):
            self.fields[values["name"] or ""] = values.get("value") or ""


def form_fields(html: str) -> dict[str, str]:
    parser = _Form()
    parser.feed(html)
    return parser.fields


class Person:
    """Play the user in a browser: sign in when sent to the login page, then allow for one organization."""

    def __init__(self, base: str, username: str, organization_id: str) -> None:
        self.base = base
        self.username = username
        self.organization_id = organization_id
        self.answer: dict[str, str] | None = None

    async def open(self, authorization_url: str) -> None:
        # A blocking client on a thread of its own: the live server answers on another thread.
        self.answer = await asyncio.to_thread(self._consent, authorization_url)

    def _consent(self, authorization_url: str) -> dict[str, str]:
        with httpx.Client(base_url=self.base, follow_redirects=False, timeout=30) as browser:
            sent_to = browser.get(authorization_url)
            assert sent_to.status_code == 302
            assert "/app/login/" in sent_to.headers["Location"]
            login_url = urljoin(self.base, sent_to.headers["Location"])
            login_page = browser.get(login_url)
            fields = form_fields(login_page.text)
            fields.update(username=self.username, password=PASSWORD)
            signed_in = browser.post(login_url, data=fields)
            assert signed_in.status_code == 302, signed_in.text[:500]
            consent_url = urljoin(self.base, signed_in.headers["Location"])
            consent_page = browser.get(consent_url)
            assert consent_page.status_code == 200, consent_page.text[:500]
            assert "Uptimy test assistant" in consent_page.text
            fields = form_fields(consent_page.text)
            fields.update(organization=self.organization_id, allow="Authorize")
            allowed = browser.post(consent_url, data=fields)
            assert allowed.status_code == 302, allowed.text[:500]
            location = allowed.headers["Location"]
            assert location.startswith(CALLBACK + "?")
            return {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}

    async def callback(self) -> AuthorizationCodeResult:
        assert self.answer is not None
        return AuthorizationCodeResult(
            code=self.answer["code"], state=self.answer.get("state"), iss=self.answer.get("iss")
        )


@pytest.fixture(autouse=True)
def _seeded_plans_and_regions(transactional_db) -> None:
    # A flush between live-server tests empties the plans migration 0002 seeded; seeding is idempotent.
    from django.apps import apps

    import_module("monitors.migrations.0002_seed_regions_and_plans").seed(apps, None)


@pytest.fixture
def base(live_server, settings) -> str:
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False
    return str(live_server.url)


async def sdk_request(
    base: str, person: Person, storage: MemoryStorage, auth_method: str | None
) -> httpx2.Response:
    metadata = OAuthClientMetadata(
        client_name="Uptimy test assistant",
        redirect_uris=[CALLBACK],
        token_endpoint_auth_method=auth_method,
    )
    provider = OAuthClientProvider(
        server_url=base + "/mcp",
        client_metadata=metadata,
        storage=storage,
        redirect_handler=person.open,
        callback_handler=person.callback,
    )
    async with httpx2.AsyncClient(auth=provider, timeout=30) as client:
        return await client.get(base + "/mcp")


@pytest.mark.urls(__name__)
@pytest.mark.parametrize(
    "auth_method", ["none", None], ids=["public client", "client_secret_basic (RFC 7591 default)"]
)
def test_the_sdk_signs_in_and_its_token_is_granted_for_the_mcp_resource(base, make_org, auth_method):
    organization = make_org(slug="acme")
    user = get_user_model().objects.create_user(
        username="ada@example.com", email="ada@example.com", password=PASSWORD
    )
    membership_add(organization=organization, user=user, role=Membership.Role.MEMBER)
    person = Person(base, "ada@example.com", str(organization.public_id))
    storage = MemoryStorage()

    answer = asyncio.run(sdk_request(base, person, storage, auth_method))

    assert answer.status_code == 200, answer.text
    assert answer.json() == {"organization_id": organization.pk, "scopes": ["read", "write"]}
    assert person.answer is not None
    assert person.answer["iss"] == base
    assert storage.client_info is not None
    assert (storage.client_info.client_secret is None) == (auth_method == "none")
    assert storage.tokens is not None
    assert storage.tokens.refresh_token
    grant = oauth_grant(storage.tokens.access_token, resource=base + "/mcp")
    assert grant is not None
    assert (grant.organization_id, grant.user_id, grant.scopes) == (
        organization.pk,
        user.pk,
        {"read", "write"},
    )


@pytest.mark.urls(__name__)
def test_a_viewer_grants_the_sdk_read_only_and_its_token_is_refused_for_another_resource(base, make_org):
    organization = make_org(slug="acme")
    user = get_user_model().objects.create_user(
        username="ada@example.com", email="ada@example.com", password=PASSWORD
    )
    membership_add(organization=organization, user=user, role=Membership.Role.VIEWER)
    storage = MemoryStorage()

    answer = asyncio.run(
        sdk_request(base, Person(base, "ada@example.com", str(organization.public_id)), storage, "none")
    )

    assert answer.status_code == 200
    assert answer.json()["scopes"] == ["read"]
    assert storage.tokens is not None
    assert oauth_grant(storage.tokens.access_token, resource=re.sub(r":\d+", ":1", base) + "/mcp") is None


@pytest.mark.urls(__name__)
def test_uptimys_own_mcp_check_finds_the_sign_in_with_no_warning_but_plain_http(base):
    # The check engine's discovery (probes/oauth.py) is stricter than the SDK: exact resource and
    # issuer, S256 advertised, a registration endpoint. Uptimy's own documents pass it cleanly.
    outcome = run_check_sync(McpConfig(uri=base + "/mcp", timeout=20.0), ProbeEnv(allow_private=True))

    assert outcome.access is Access.OAUTH
    assert outcome.signin_server == base
    # The live server speaks plain http, which the engine rightly notes; nothing else.
    assert [w for w in outcome.warnings if not w.endswith("is not https")] == []
