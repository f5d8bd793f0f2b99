"""The official MCP SDK's OAuth client signs in to a live Uptimy, the way an assistant does.

``mcp.client.auth.OAuthClientProvider`` (not written here) meets a 401 from the MCP endpoint,
reads the protected resource metadata it names, then the authorization server's metadata,
registers itself (RFC 7591), sends its user to the consent screen with a PKCE challenge and the
resource, and exchanges the code. The user's part (sign in at /app/login/, choose the organization,
Allow) is played over HTTP by the redirect handler, as a browser would post the forms.

pytest-django's live server speaks WSGI and the real ``/mcp`` is ASGI, so ``/mcp`` here is a
stand-in that takes its grant from the real endpoint's ``mcpserver.auth.grant_for``: 401 with the
RFC 9728 challenge, or 200 with the grant. tests/mcpserver/test_mcp_oauth_live.py signs in to the
real endpoint of a running ``manage.py serve`` and uses its tools.
"""

from __future__ import annotations

import asyncio
import re

import httpx2
import pytest
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import OAuthClientMetadata

from mcpserver.auth import grant_for
from monitors.models import Membership
from monitors.services import membership_add
from probes.checks.mcp import McpConfig
from probes.runner import ProbeEnv, run_check_sync
from probes.types import Access
from signin.discovery import RESOURCE_METADATA_PATH, mcp_resource, public_base
from signin.tokens import oauth_grant
from tests.oauth_person import CALLBACK, CLIENT_NAME, MemoryStorage, Person

PASSWORD = "a-long-test-password-42"


@csrf_exempt
def stand_in_mcp(request: HttpRequest) -> HttpResponse:
    """Answer as the MCP endpoint will: the RFC 9728 challenge without a good token, the grant with one."""
    base = public_base(request)
    grant = grant_for(request.headers.get("Authorization"), resource=mcp_resource(base))
    if grant is None:
        challenge = f'Bearer resource_metadata="{base}{RESOURCE_METADATA_PATH}", scope="read write"'
        return HttpResponse(status=401, headers={"WWW-Authenticate": challenge})
    return JsonResponse({"organization_id": grant.organization_id, "scopes": sorted(grant.scopes)})


urlpatterns = [path("mcp", stand_in_mcp), path("", include("uptimy.urls"))]


# As every live-server test here: the flush after a plain transactional test re-creates content
# types (post_migrate) under new ids, which a later serialized_rollback test (the browser tests)
# can no longer restore over; serialized, the database is restored as migrations left it, plans included.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture
def base(live_server, settings) -> str:
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False
    return str(live_server.url)


async def sdk_request(
    base: str, person: Person, storage: MemoryStorage, auth_method: str | None
) -> httpx2.Response:
    metadata = OAuthClientMetadata(
        client_name=CLIENT_NAME,
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
    person = Person(base, "ada@example.com", PASSWORD, str(organization.public_id))
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
        sdk_request(
            base, Person(base, "ada@example.com", PASSWORD, str(organization.public_id)), storage, "none"
        )
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
