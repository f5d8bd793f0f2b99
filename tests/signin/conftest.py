"""An assistant's side of sign-in, driven through Django's test client: register, consent, exchange."""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from monitors.models import Membership, Organization
from monitors.services import membership_add
from tests.browser_support import chromium  # noqa: F401  (fixture: Chromium through Playwright, per module)

BASE = "http://testserver"
RESOURCE = BASE + "/mcp"
REDIRECT_URI = "http://127.0.0.1:33418/callback"
PASSWORD = "a-long-test-password-42"


def challenge_of(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


@dataclass
class Assistant:
    """One registered public client and the PKCE verifier of its current sign-in."""

    http: Client
    client_id: str
    redirect_uri: str = REDIRECT_URI
    verifier: str = field(default_factory=lambda: secrets.token_urlsafe(48))
    state: str = field(default_factory=lambda: secrets.token_urlsafe(16))

    def authorize_url(self, **overrides: Any) -> str:
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "state": self.state,
            "code_challenge": challenge_of(self.verifier),
            "code_challenge_method": "S256",
            "scope": "read write",
            "resource": RESOURCE,
        }
        params.update(overrides)
        return "/oauth/authorize/?" + urlencode({k: v for k, v in params.items() if v is not None})

    def exchange(self, code: str, **overrides: Any) -> Any:
        data = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "client_id": self.client_id,
            "code_verifier": self.verifier,
            "resource": RESOURCE,
        }
        data.update(overrides)
        return self.http.post("/oauth/token/", {k: v for k, v in data.items() if v is not None})

    def refresh(self, refresh_token: str, **overrides: Any) -> Any:
        data = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": self.client_id}
        data.update(overrides)
        return self.http.post("/oauth/token/", {k: v for k, v in data.items() if v is not None})


def consent_form_fields(html: str) -> dict[str, str]:
    """Return the consent form's hidden fields, as a browser would post them back."""
    from html.parser import HTMLParser

    class Fields(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.fields: dict[str, str] = {}

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            values = dict(attrs)
            if tag == "input" and values.get("type") == "hidden" and values.get("name"):
                self.fields[values["name"] or ""] = values.get("value") or ""

    parser = Fields()
    parser.feed(html)
    return parser.fields


def redirect_params(response: Any) -> dict[str, str]:
    assert response.status_code == 302, (response.status_code, response.content[:500])
    location = response["Location"]
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


@pytest.fixture
def make_user(db) -> Callable[..., Any]:
    counter = iter(range(1, 10_000))

    def make(*memberships: tuple[Organization, str]) -> Any:
        name = f"person{next(counter)}@example.com"
        user = get_user_model().objects.create_user(username=name, email=name, password=PASSWORD)
        for organization, role in memberships:
            membership_add(organization=organization, user=user, role=role)
        return user

    return make


@pytest.fixture
def owner_user(make_user, org) -> Any:
    return make_user((org, Membership.Role.OWNER))


@pytest.fixture
def browser(owner_user) -> Client:
    http = Client()
    http.force_login(owner_user)
    return http


@pytest.fixture
def register() -> Callable[..., Assistant]:
    """Register a public client through the registration endpoint, as an assistant does."""

    def make(http: Client, **metadata: Any) -> Assistant:
        body = {
            "redirect_uris": [REDIRECT_URI],
            "client_name": "Test Assistant",
            "token_endpoint_auth_method": "none",
        }
        body.update(metadata)
        response = Client().post("/oauth/register/", body, content_type="application/json")
        assert response.status_code == 201, response.content
        return Assistant(http=http, client_id=response.json()["client_id"])

    return make


@pytest.fixture
def consent() -> Callable[..., Any]:
    """Open the consent screen for ``url`` and answer it; return the response to the answer."""

    def answer(
        assistant: Assistant, url: str, *, organization: Organization | str | None, allow: bool = True
    ) -> Any:
        page = assistant.http.get(url)
        assert page.status_code == 200, page.content[:800]
        fields = consent_form_fields(page.content.decode())
        if organization is not None:
            fields["organization"] = str(getattr(organization, "public_id", organization))
        if allow:
            fields["allow"] = "Authorize"
        return assistant.http.post(url, fields)

    return answer


@pytest.fixture
def sign_in(register, consent, browser) -> Callable[..., dict[str, Any]]:
    """Run the whole flow for the signed-in owner; return the token answer."""

    def run(organization: Organization, **authorize: Any) -> dict[str, Any]:
        assistant = register(browser)
        answer = consent(assistant, assistant.authorize_url(**authorize), organization=organization)
        code = redirect_params(answer)["code"]
        response = assistant.exchange(code)
        assert response.status_code == 200, response.content
        return response.json()

    return run
