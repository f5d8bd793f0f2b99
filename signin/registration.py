"""Read a client registration request (RFC 7591 §2) into what Uptimy stores, or say what is wrong.

Pure: a parsed JSON body in, a ``ClientRequest`` out, or a ``RegistrationRefused`` carrying the
RFC 7591 §3.2.2 error code and a sentence naming the field. Fields Uptimy does not use
(``logo_uri``, ``contacts``, …) are ignored, as §2 allows; a logo is never shown on the consent
screen, so a registration cannot dress up as someone else with a picture.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

AuthMethod = Literal["none", "client_secret_post", "client_secret_basic"]
AUTH_METHODS: tuple[AuthMethod, ...] = ("none", "client_secret_post", "client_secret_basic")
GRANT_TYPES = frozenset({"authorization_code", "refresh_token"})
SCOPES = frozenset({"read", "write"})
LOOPBACK_NAMES = frozenset({"localhost"})
MAX_REDIRECT_URIS = 10
MAX_URI_LENGTH = 2000
MAX_NAME_LENGTH = 200
# RFC 8252 §7.1: a native app (Cursor's cursor://…) may be sent back through a URI scheme of its
# own, which the operating system hands to that app. Schemes a browser acts on itself (running,
# showing or downloading something) are never an app's.
BROWSER_SCHEMES = frozenset(
    {"javascript", "data", "vbscript", "file", "about", "blob", "filesystem", "view-source", "jar"}
    | {"ftp", "ws", "wss", "mailto", "tel", "sms"}
)
SCHEME_SYNTAX = re.compile(r"[a-z][a-z0-9+.-]*\Z")  # RFC 3986 §3.1 (urlsplit lowercases it)


@dataclass(frozen=True, slots=True)
class ClientRequest:
    """Say what a registering client asked for, checked."""

    redirect_uris: tuple[str, ...]
    client_name: str
    auth_method: AuthMethod
    grant_types: tuple[str, ...]
    scope: str | None

    @property
    def is_public(self) -> bool:
        return self.auth_method == "none"


class RegistrationRefused(Exception):
    """Refuse a registration with an RFC 7591 error code and a sentence naming the problem."""

    def __init__(self, error: Literal["invalid_redirect_uri", "invalid_client_metadata"], description: str):
        super().__init__(description)
        self.error = error
        self.description = description


def client_request(body: Any) -> ClientRequest:
    """Return the checked registration, or raise ``RegistrationRefused`` naming the first problem."""
    if not isinstance(body, dict):
        raise RegistrationRefused("invalid_client_metadata", "The request body must be a JSON object.")
    redirect_uris = _redirect_uris(body.get("redirect_uris"))
    _check_response_types(body.get("response_types", ["code"]))
    return ClientRequest(
        redirect_uris=redirect_uris,
        client_name=_client_name(body.get("client_name")),
        # RFC 7591 §2: a client that names no method authenticates with HTTP Basic.
        auth_method=_auth_method(body.get("token_endpoint_auth_method", "client_secret_basic")),
        grant_types=_grant_types(body.get("grant_types", ["authorization_code", "refresh_token"])),
        scope=_scope(body.get("scope")),
    )


def redirect_uri_problem(uri: str) -> str | None:
    """Return why ``uri`` cannot be a redirect URI, or None when it can.

    A redirect URI is https, http to a loopback address, or an app's own scheme (RFC 8252 §7.1).
    """
    if len(uri) > MAX_URI_LENGTH:
        return f"is longer than {MAX_URI_LENGTH} characters"
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        return "is not a URL"
    web = parts.scheme in ("https", "http")
    if (web and not parts.hostname) or (
        not web and not is_app_scheme(parts.scheme, rest=parts.netloc + parts.path)
    ):
        return (
            "must be an absolute https URL (or http to a loopback address: 127.0.0.1, [::1], localhost,"
            " or an app's own scheme such as cursor://)"
        )
    if parts.fragment or "#" in uri:
        return "must not have a fragment (RFC 6749 §3.1.2)"
    if parts.username is not None or parts.password is not None:
        return "must not carry a user name or password"
    if parts.scheme == "http" and not _is_loopback(parts.hostname or ""):
        return (
            "uses http to a host that is not loopback; use https (http is for 127.0.0.1, [::1] or localhost)"
        )
    return None


def is_app_scheme(scheme: str, *, rest: str) -> bool:
    """Return whether ``scheme`` can be a native app's own (RFC 8252 §7.1), with something after it."""
    return bool(SCHEME_SYNTAX.match(scheme)) and scheme not in BROWSER_SCHEMES and bool(rest.strip("/"))


def _is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _redirect_uris(value: Any) -> tuple[str, ...]:
    if value is None:
        raise RegistrationRefused(
            "invalid_redirect_uri", "redirect_uris is required: the addresses to send the user back to."
        )
    if not isinstance(value, list) or not value:
        raise RegistrationRefused("invalid_redirect_uri", "redirect_uris must be a non-empty array of URLs.")
    if len(value) > MAX_REDIRECT_URIS:
        raise RegistrationRefused(
            "invalid_redirect_uri", f"redirect_uris may hold at most {MAX_REDIRECT_URIS} URLs."
        )
    uris = []
    for index, uri in enumerate(value):
        if not isinstance(uri, str):
            raise RegistrationRefused("invalid_redirect_uri", f"redirect_uris[{index}] must be a string.")
        problem = redirect_uri_problem(uri)
        if problem:
            raise RegistrationRefused("invalid_redirect_uri", f"redirect_uris[{index}] {problem}.")
        uris.append(uri)
    return tuple(dict.fromkeys(uris))


def _client_name(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RegistrationRefused("invalid_client_metadata", "client_name must be a string.")
    name = " ".join(value.split())
    if len(name) > MAX_NAME_LENGTH:
        raise RegistrationRefused(
            "invalid_client_metadata", f"client_name may be at most {MAX_NAME_LENGTH} characters."
        )
    if any(not character.isprintable() for character in name):
        raise RegistrationRefused("invalid_client_metadata", "client_name must be printable text.")
    return name


def _auth_method(value: Any) -> AuthMethod:
    for method in AUTH_METHODS:
        if value == method:
            return method
    raise RegistrationRefused(
        "invalid_client_metadata",
        f"token_endpoint_auth_method must be one of {', '.join(AUTH_METHODS)}.",
    )


def _grant_types(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(grant, str) for grant in value):
        raise RegistrationRefused("invalid_client_metadata", "grant_types must be an array of strings.")
    unknown = sorted(set(value) - GRANT_TYPES)
    if unknown:
        raise RegistrationRefused(
            "invalid_client_metadata",
            f"grant_types: {', '.join(unknown)} not supported; Uptimy offers authorization_code and refresh_token.",
        )
    if "authorization_code" not in value:
        raise RegistrationRefused("invalid_client_metadata", "grant_types must include authorization_code.")
    return tuple(dict.fromkeys(value))


def _check_response_types(value: Any) -> None:
    if value != ["code"]:
        raise RegistrationRefused("invalid_client_metadata", 'response_types must be ["code"].')


def _scope(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise RegistrationRefused(
            "invalid_client_metadata", "scope must be a string of space-separated scopes."
        )
    unknown = sorted(set(value.split()) - SCOPES)
    if unknown:
        raise RegistrationRefused(
            "invalid_client_metadata",
            f"scope: {', '.join(unknown)} unknown; Uptimy's scopes are read and write.",
        )
    return " ".join(value.split()) or None
