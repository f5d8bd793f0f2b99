"""Read a Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document) into what Uptimy stores.

Pure: a client_id URL and the bytes fetched from it in, a ``ClientDocument`` out, or a
``ClientMetadataRefused`` naming the problem. An assistant that signs in with an https URL as its
client_id publishes its metadata there instead of registering (RFC 7591): the document's
``client_id`` must be that URL exactly, its ``redirect_uris`` pass the same rules as a registration's
(``signin.registration.redirect_uri_problem``), and it must be a public client (no secret can be
shared with a document anyone may read). How long a fetched document stays fresh is
:func:`freshness_seconds`, from its Cache-Control header within Uptimy's bounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from probes.jsonrpc import JsonTooDeep, read_json
from signin.registration import RegistrationRefused, client_request

# The draft asks servers to bound what they read; 5 KiB is its suggested size, and real
# documents (Claude's, VS Code's) are a few hundred bytes.
MAX_DOCUMENT_BYTES = 5 * 1024
# The toolkit's Application.client_id column holds 255 characters.
MAX_CLIENT_ID_LENGTH = 255
MIN_FRESH_SECONDS = 5 * 60
MAX_FRESH_SECONDS = 24 * 3600
# Shared-secret methods the draft forbids, and the asymmetric one Uptimy cannot check.
SECRET_METHODS = frozenset({"client_secret_basic", "client_secret_post", "client_secret_jwt"})

RefusalReason = Literal[
    "bad_url",
    "blocked_address",
    "unreachable",
    "timeout",
    "redirect",
    "http_status",
    "not_json",
    "too_large",
    "too_deep",
    "client_id_mismatch",
    "secret_in_document",
    "auth_method",
    "invalid_document",
]


class ClientMetadataRefused(Exception):
    """Refuse a client's metadata document (or its fetch) with a short reason name and a sentence for the user."""

    def __init__(self, reason: RefusalReason, description: str) -> None:
        super().__init__(description)
        self.reason = reason
        self.description = description


@dataclass(frozen=True, slots=True)
class ClientDocument:
    """Say what a client's metadata document declares, checked."""

    client_id: str
    client_name: str
    redirect_uris: tuple[str, ...]
    scope: str | None

    @property
    def host(self) -> str:
        """Return who publishes this client: its metadata URL's host, shown on the consent screen."""
        return urlsplit(self.client_id).hostname or ""


def is_metadata_url(client_id: str) -> bool:
    """Return whether ``client_id`` names a metadata document (an https URL) rather than a registered client."""
    return client_id[:8].lower() == "https://"


def client_id_url_problem(client_id: str) -> str | None:
    """Return why ``client_id`` cannot be a metadata document's URL (the draft's §3 rules), or None when it can."""
    if len(client_id) > MAX_CLIENT_ID_LENGTH:
        return f"is longer than {MAX_CLIENT_ID_LENGTH} characters"
    if any(not character.isprintable() or character.isspace() for character in client_id):
        return "contains spaces or control characters"
    try:
        parts = urlsplit(client_id)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        return "is not a URL"
    if parts.scheme != "https" or not parts.hostname:
        return "must be an https URL with a host"
    if parts.username is not None or parts.password is not None:
        return "must not carry a user name or password"
    if parts.fragment or "#" in client_id:
        return "must not have a fragment"
    if parts.query or "?" in client_id:
        return "must not have a query string"
    if parts.path in ("", "/"):
        return "must have a path (https://host/ alone is not a client)"
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        return "must not have . or .. path segments"
    return None


def client_document(client_id: str, body: bytes) -> ClientDocument:
    """Return the checked document fetched from ``client_id``, or raise ``ClientMetadataRefused`` naming the first problem."""
    if len(body) > MAX_DOCUMENT_BYTES:
        raise ClientMetadataRefused("too_large", f"The document is larger than {MAX_DOCUMENT_BYTES} bytes.")
    try:
        document = read_json(body)
    except JsonTooDeep:
        raise ClientMetadataRefused("too_deep", "The document nests arrays and objects too deep.") from None
    except (ValueError, UnicodeError):
        raise ClientMetadataRefused("not_json", "The document is not valid JSON.") from None
    if not isinstance(document, dict):
        raise ClientMetadataRefused("invalid_document", "The document must be a JSON object.")
    if document.get("client_id") != client_id:
        raise ClientMetadataRefused(
            "client_id_mismatch",
            f"The document's client_id must be exactly the URL it is published at ({client_id}).",
        )
    secrets = sorted({"client_secret", "client_secret_expires_at"} & document.keys())
    if secrets:
        raise ClientMetadataRefused(
            "secret_in_document",
            f"The document must not hold {' or '.join(secrets)}: anyone can read it.",
        )
    _check_auth_method(document.get("token_endpoint_auth_method", "none"))
    name = document.get("client_name")
    if not isinstance(name, str) or not name.strip():
        raise ClientMetadataRefused(
            "invalid_document",
            "The document must give a client_name, shown to the user on the consent screen.",
        )
    try:
        # The same rules as a registration (redirect URIs, name, grant types, scope): one place.
        checked = client_request({**document, "token_endpoint_auth_method": "none"})
    except RegistrationRefused as refused:
        raise ClientMetadataRefused("invalid_document", f"The document's {refused.description}") from None
    return ClientDocument(
        client_id=client_id,
        client_name=checked.client_name,
        redirect_uris=checked.redirect_uris,
        scope=checked.scope,
    )


def _check_auth_method(method: Any) -> None:
    if method == "none":
        return
    if method == "private_key_jwt":
        raise ClientMetadataRefused(
            "auth_method",
            "token_endpoint_auth_method private_key_jwt is not supported: Uptimy does not read client keys"
            " (jwks or jwks_uri); publish the client as public (none) with PKCE.",
        )
    if method in SECRET_METHODS:
        raise ClientMetadataRefused(
            "auth_method",
            f"token_endpoint_auth_method {method} needs a shared secret, which a public document cannot hold;"
            " use none.",
        )
    raise ClientMetadataRefused("auth_method", "token_endpoint_auth_method must be none.")


def freshness_seconds(cache_control: str | None) -> int:
    """Return how long a fetched document stays fresh: its Cache-Control max-age, within Uptimy's bounds.

    no-store and no-cache (and a document that says nothing) get the shortest time: Uptimy keeps
    the client's row either way, and fetches again once it is stale.
    """
    seconds = MIN_FRESH_SECONDS
    directives = [d.strip().lower() for d in (cache_control or "").split(",")]
    if not {"no-store", "no-cache"} & set(directives):
        for directive in directives:
            name, _, value = directive.partition("=")
            value = value.strip().strip('"')
            if name.strip() == "max-age" and value.isascii() and value.isdigit():
                seconds = int(value[:9])
    return max(MIN_FRESH_SECONDS, min(seconds, MAX_FRESH_SECONDS))
