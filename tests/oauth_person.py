"""Play an assistant's user through Uptimy's sign-in: the official SDK's OAuth client asks, this answers.

``mcp.client.auth.OAuthClientProvider`` (not written here) meets a 401 from /mcp, reads the
protected resource metadata, then the authorization server's, registers itself (RFC 7591) and sends
its user to the consent screen with a PKCE challenge and the resource. :class:`Person` is that user
in a browser, over plain HTTP: sign in at /app/login/, choose the organization, Allow. Shared by the
sign-in tests (tests/signin) and the MCP server's live tests (tests/mcpserver).
"""

from __future__ import annotations

import asyncio
from html.parser import HTMLParser
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken

CALLBACK = "http://127.0.0.1:45871/callback"
CLIENT_NAME = "Uptimy test assistant"


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
    """Collect a page's hidden inputs (the CSRF token, the authorization request) and its select's options."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, str] = {}
        self.options: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "input" and values.get("type") == "hidden" and values.get("name"):
            self.fields[values["name"] or ""] = values.get("value") or ""
        if tag == "option" and values.get("value"):
            self.options.append(values["value"] or "")


def read_form(html: str) -> _Form:
    parser = _Form()
    parser.feed(html)
    return parser


def form_fields(html: str) -> dict[str, str]:
    return read_form(html).fields


class Person:
    """Sign in when sent to the login page, then allow for one organization (the first offered when none is named)."""

    def __init__(self, base: str, username: str, password: str, organization_id: str | None = None) -> None:
        self.base = base
        self.username = username
        self.password = password
        self.organization_id = organization_id
        self.answer: dict[str, str] | None = None

    async def open(self, authorization_url: str) -> None:
        # A blocking client on a thread of its own: the server answers on another thread or process.
        self.answer = await asyncio.to_thread(self._consent, authorization_url)

    def _consent(self, authorization_url: str) -> dict[str, str]:
        with httpx.Client(base_url=self.base, follow_redirects=False, timeout=30) as browser:
            sent_to = browser.get(authorization_url)
            assert sent_to.status_code == 302
            assert "/app/login/" in sent_to.headers["Location"]
            login_url = urljoin(self.base, sent_to.headers["Location"])
            fields = form_fields(browser.get(login_url).text)
            fields.update(username=self.username, password=self.password)
            signed_in = browser.post(login_url, data=fields)
            assert signed_in.status_code == 302, signed_in.text[:500]
            consent_url = urljoin(self.base, signed_in.headers["Location"])
            consent_page = browser.get(consent_url)
            assert consent_page.status_code == 200, consent_page.text[:500]
            assert CLIENT_NAME in consent_page.text
            form = read_form(consent_page.text)
            fields = dict(form.fields)
            fields.update(organization=self.organization_id or form.options[0], allow="Authorize")
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
