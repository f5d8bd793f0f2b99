"""Decide whether an MCP server's sign-in is discoverable, the way an assistant discovers it.

Keyless checks that meet a 401 come here. Discovery follows the 2025-11-25 order: the
protected resource metadata (RFC 9728) named by ``resource_metadata`` in WWW-Authenticate,
then the path-aware well-known URL, then the root one; then the first authorization server's
RFC 8414 or OpenID Connect metadata, in the order for issuers with and without a path. When
no location has protected resource metadata at all, it falls back, as the official SDK clients
do, to the 2025-03-26 rule: the MCP server's own origin is the authorization server, and the
result says so (:class:`~probes.types.SigninDiscovery`). It never registers a client and never
signs in. Every URL fetched goes through the same connection layer, so the address guard sees
each one.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import httpx

from probes import jsonrpc
from probes.connection import (
    REDIRECT_STATUSES,
    CheckFailed,
    Connection,
    media_type,
    redirect_target,
    same_origin,
    shown_url,
)
from probes.types import FailureKind, SigninDiscovery
from probes.wire import Response

MAX_METADATA_BYTES = 1024 * 1024
MAX_METADATA_REDIRECTS = 3
PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"

_TOKEN_CHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_TOKEN68_CHARS = _TOKEN_CHARS | frozenset("/=")


@dataclass(frozen=True, slots=True)
class Challenge:
    """Hold one WWW-Authenticate challenge: its scheme and its auth-params (names lower-cased)."""

    scheme: str
    params: dict[str, str] = field(default_factory=dict)
    token68: str | None = None


@dataclass(frozen=True, slots=True)
class SignIn:
    """Report a discoverable sign-in: the authorization server's issuer, the rule that found it,
    and what a strict client would mind."""

    issuer: str
    warnings: tuple[str, ...] = ()
    discovery: SigninDiscovery = SigninDiscovery.RESOURCE_METADATA


@dataclass(frozen=True, slots=True)
class _NoResourceMetadata:
    """Say that no RFC 9728 location served usable metadata: what each answered, and whether
    one of those answers (a server error, a failed connection) proves nothing either way."""

    tried: tuple[str, ...]
    inconclusive: str | None = None
    # Every location answered "not here" (a 4xx, an HTML page): nothing of a sign-in is published.
    all_absent: bool = True


def parse_www_authenticate(values: list[str]) -> list[Challenge]:
    """Return every challenge in the WWW-Authenticate field values (RFC 9110 §11.6.1), in order.

    Several challenges may share one field value, separated by commas that also separate
    auth-params, so a comma followed by ``token =`` continues the current challenge and any
    other token starts the next one. Malformed pieces are skipped, never fatal.
    """
    challenges: list[Challenge] = []
    for value in values:
        challenges.extend(_challenges_in(value))
    return challenges


def _challenges_in(text: str) -> list[Challenge]:
    challenges: list[Challenge] = []
    pos, end = 0, len(text)
    while pos < end:
        pos = _skip(text, pos, " \t,")
        scheme, pos = _token(text, pos)
        if not scheme:
            pos += 1
            continue
        params: dict[str, str] = {}
        token68: str | None = None
        pos = _skip(text, pos, " \t")
        if not _param_ahead(text, pos):
            candidate, after = _token68(text, pos)
            if candidate and _skip(text, after, " \t") in (end, _index(text, ",", after)):
                token68, pos = candidate, after
        while _param_ahead(text, pos):
            name, pos = _token(text, pos)
            pos = _skip(text, pos, " \t") + 1
            pos = _skip(text, pos, " \t")
            value, pos = _param_value(text, pos)
            params.setdefault(name.lower(), value)
            pos = _skip(text, pos, " \t")
            if pos < end and text[pos] == ",":
                follow = _skip(text, pos + 1, " \t,")
                if _param_ahead(text, follow):
                    pos = follow
        challenges.append(Challenge(scheme, params, token68))
    return challenges


def _skip(text: str, pos: int, chars: str) -> int:
    while pos < len(text) and text[pos] in chars:
        pos += 1
    return pos


def _index(text: str, char: str, pos: int) -> int:
    found = text.find(char, pos)
    return found if found != -1 else len(text)


def _token(text: str, pos: int) -> tuple[str, int]:
    start = pos
    while pos < len(text) and text[pos] in _TOKEN_CHARS:
        pos += 1
    return text[start:pos], pos


def _token68(text: str, pos: int) -> tuple[str, int]:
    start = pos
    while pos < len(text) and text[pos] in _TOKEN68_CHARS:
        pos += 1
    return text[start:pos], pos


def _param_ahead(text: str, pos: int) -> bool:
    """Return whether ``token BWS "=" BWS`` starts at ``pos`` (and is not a token68's padding)."""
    name, after = _token(text, pos)
    if not name:
        return False
    after = _skip(text, after, " \t")
    if after >= len(text) or text[after] != "=":
        return False
    rest = _skip(text, after + 1, " \t")
    return rest < len(text) and text[rest] not in ",="


def _param_value(text: str, pos: int) -> tuple[str, int]:
    if pos < len(text) and text[pos] == '"':
        out: list[str] = []
        pos += 1
        while pos < len(text) and text[pos] != '"':
            if text[pos] == "\\" and pos + 1 < len(text):
                pos += 1
            out.append(text[pos])
            pos += 1
        return "".join(out), pos + 1
    # Lenient like the SDKs: an unquoted URL (not a valid token) runs to a comma or space.
    start = pos
    while pos < len(text) and text[pos] not in ", \t":
        pos += 1
    return text[start:pos], pos


def resource_metadata_url(challenges: list[Challenge]) -> str | None:
    """Return the ``resource_metadata`` a challenge names, preferring a Bearer challenge."""
    ordered = sorted(challenges, key=lambda c: c.scheme.lower() != "bearer")
    for challenge in ordered:
        url = challenge.params.get("resource_metadata")
        if url:
            return url
    return None


def _origin(url: httpx.URL) -> str:
    return f"{url.scheme}://{url.netloc.decode('ascii')}"


def prm_candidates(mcp_url: httpx.URL, header_url: str | None) -> list[tuple[httpx.URL, str]]:
    """Return the protected resource metadata URLs to try, each with the resource it must name."""
    origin = _origin(mcp_url)
    endpoint = _without_fragment(mcp_url)
    candidates: list[tuple[httpx.URL, str]] = []
    if header_url:
        with contextlib.suppress(httpx.InvalidURL):
            candidates.append((mcp_url.join(header_url), endpoint))
    path = mcp_url.path
    if path not in ("", "/"):
        query = f"?{mcp_url.query.decode()}" if mcp_url.query else ""
        for variant in dict.fromkeys((path, path.rstrip("/"))):
            if variant:
                candidates.append(
                    (httpx.URL(f"{origin}{PRM_WELL_KNOWN}{variant}{query}"), f"{origin}{variant}")
                )
    candidates.append((httpx.URL(f"{origin}{PRM_WELL_KNOWN}"), origin))
    unique: dict[str, tuple[httpx.URL, str]] = {}
    for url, expected in candidates:
        unique.setdefault(str(url), (url, expected))
    return list(unique.values())


def as_metadata_urls(issuer: httpx.URL) -> list[httpx.URL]:
    """Return the RFC 8414 / OIDC metadata URLs for ``issuer`` in the order 2025-11-25 prescribes."""
    origin = _origin(issuer)
    path = issuer.path.rstrip("/")
    if not path:
        return [httpx.URL(origin + OAUTH_WELL_KNOWN), httpx.URL(origin + OIDC_WELL_KNOWN)]
    return [
        httpx.URL(f"{origin}{OAUTH_WELL_KNOWN}{path}"),
        httpx.URL(f"{origin}{OIDC_WELL_KNOWN}{path}"),
        httpx.URL(f"{origin}{path}{OIDC_WELL_KNOWN}"),
    ]


def resource_verdict(resource: str, mcp_url: httpx.URL, expected: str) -> tuple[bool, str | None]:
    """Return whether a PRM ``resource`` may be used for ``mcp_url``, and a warning if only just.

    RFC 9728 wants an identical string; real servers get the trailing slash wrong both ways
    and SDK clients accept a same-origin parent path, so those pass with a warning. Another
    origin never passes.
    """
    endpoint = _without_fragment(mcp_url)
    if resource in (expected, endpoint):
        return True, None
    try:
        named = httpx.URL(resource)
    except httpx.InvalidURL:
        return False, None
    if not named.is_absolute_url or not same_origin(named, mcp_url):
        return False, None
    mine, theirs = mcp_url.path.rstrip("/"), named.path.rstrip("/")
    if mine == theirs:
        return (
            True,
            f"The protected resource metadata names {resource}, which differs from {endpoint} only by a trailing slash; strict clients reject that",
        )
    if not theirs or mine.startswith(theirs + "/"):
        return (
            True,
            f"The protected resource metadata names the parent {resource} of {endpoint}; strict clients reject that",
        )
    return False, None


def _without_fragment(url: httpx.URL) -> str:
    return str(url.copy_with(fragment=None))


def _not_discoverable(step: str) -> CheckFailed:
    return CheckFailed(
        FailureKind.SIGNIN_NOT_DISCOVERABLE, f"Sign-in isn't discoverable: {step}", http_status=401
    )


async def discover_signin(conn: Connection, mcp_url: httpx.URL, www_authenticate: list[str]) -> SignIn:
    """Return the discovered sign-in for ``mcp_url``, or raise CheckFailed naming the step that failed."""
    warnings: list[str] = []
    header_url = resource_metadata_url(parse_www_authenticate(www_authenticate))
    found = await _find_prm(conn, mcp_url, header_url, warnings)
    if isinstance(found, _NoResourceMetadata):
        return await _legacy_signin(conn, mcp_url, found, warnings, named_metadata=header_url is not None)
    prm, prm_url = found
    servers = prm.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], str) or not servers[0]:
        raise _not_discoverable(f"the protected resource metadata at {prm_url} names no authorization server")
    issuer = servers[0]
    try:
        issuer_url = httpx.URL(issuer)
    except httpx.InvalidURL:
        raise _not_discoverable(f"the authorization server {issuer!r} is not a URL") from None
    if issuer_url.scheme not in ("http", "https") or not issuer_url.host:
        raise _not_discoverable(f"the authorization server {issuer!r} is not an http(s) URL")
    metadata, metadata_url = await _find_as_metadata(conn, issuer_url)
    _check_issuer(metadata, metadata_url, issuer, warnings)
    _check_endpoints(metadata, metadata_url)
    warnings.extend(_client_warnings(metadata))
    return SignIn(issuer=issuer, warnings=tuple(warnings))


async def _find_prm(
    conn: Connection, mcp_url: httpx.URL, header_url: str | None, warnings: list[str]
) -> tuple[dict[str, object], str] | _NoResourceMetadata:
    """Return the first usable protected resource metadata and where it was, or what each location said.

    A document that names another resource ends discovery (the SDKs refuse it too); only the
    absence of metadata everywhere leads to the 2025-03-26 fallback.
    """
    tried: list[str] = []
    inconclusive: str | None = None
    all_absent = True
    header_candidate = mcp_url.join(header_url) if header_url else None
    for url, expected in prm_candidates(mcp_url, header_url):
        fetched = await _fetch(conn, url)
        document, problem = fetched.document, fetched.problem
        if document is None:
            tried.append(f"{shown_url(url)}: {problem}")
            all_absent = all_absent and fetched.absent
            if not fetched.conclusive and inconclusive is None:
                inconclusive = f"{shown_url(url)} answered {problem}"
            if header_candidate is not None and url == header_candidate:
                warnings.append(f"The resource_metadata URL in WWW-Authenticate is broken ({problem})")
            continue
        resource = document.get("resource")
        if not isinstance(resource, str) or not resource:
            raise _not_discoverable(f"the protected resource metadata at {shown_url(url)} has no resource")
        usable, warning = resource_verdict(resource, mcp_url, expected)
        if not usable:
            raise _not_discoverable(
                f"the protected resource metadata at {shown_url(url)} is for {resource}, not for {_without_fragment(mcp_url)}"
            )
        if warning:
            warnings.append(warning)
        return document, shown_url(url)
    return _NoResourceMetadata(tuple(tried), inconclusive, all_absent)


async def _legacy_signin(
    conn: Connection,
    mcp_url: httpx.URL,
    absent: _NoResourceMetadata,
    warnings: list[str],
    *,
    named_metadata: bool,
) -> SignIn:
    """Return the sign-in the 2025-03-26 rule finds at the MCP server's origin, or raise CheckFailed.

    The 2025-06-18+ specifications drop this rule ("MCP clients MUST use OAuth 2.0 Protected
    Resource Metadata for authorization server discovery"), but both official SDK clients still
    take it when no protected resource metadata exists; reference/mcp-protocol.md §5.3:

        "No PRM found at all. The 2025-06-18+ spec says to abort or use pre-configured values.
        Both SDKs still fall back to the 2025-03-26 rule: treat the MCP server's origin as the
        AS. Python fetches only <origin>/.well-known/oauth-authorization-server; TS uses
        new URL('/', serverUrl) with the full list above. [...] Monitor: report it as "legacy
        (2025-03-26) sign-in only", distinct from "discoverable per 2025-06-18+"."

    which is the 2025-03-26 basic/authorization.mdx, "Authorization Base URL":

        "The authorization base URL MUST be determined from the MCP server URL by discarding any
        existing path component. For example: If the MCP server URL is
        https://api.example.com/v1/mcp, then: The authorization base URL is
        https://api.example.com. The metadata endpoint MUST be at
        https://api.example.com/.well-known/oauth-authorization-server"

    So the URLs are the TS client's (RFC 8414 first, then OpenID, both at the origin; the Python
    client reads the first only). The document must list both endpoints (the Python client's
    ``OAuthMetadata`` requires them) and name the origin as its issuer (the Python client's
    ``_expected_issuer`` on this path, which also takes the origin with a trailing "/", as the
    TS client's ``new URL('/', serverUrl)`` spells it). The 2025-03-26 default endpoints
    (``/authorize``, ``/token`` at the origin with no metadata at all) are not counted: nothing
    proves a sign-in is there.
    """
    tried_prm = "no protected resource metadata (tried " + "; ".join(absent.tried) + ")"
    if absent.inconclusive is not None:
        # The Python SDK client's rule: a server error "says nothing about whether the resource
        # publishes metadata, so it must not send the flow down the legacy path".
        raise _not_discoverable(
            f"{tried_prm}; {absent.inconclusive}, which does not show that the server has none, "
            "so the 2025-03-26 fallback to the server's origin was not tried"
        )
    origin = _origin(mcp_url)
    tried: list[str] = []
    all_absent = absent.all_absent
    for url in as_metadata_urls(httpx.URL(origin)):
        fetched = await _fetch(conn, url)
        document, problem = fetched.document, fetched.problem
        if document is None:
            tried.append(f"{shown_url(url)}: {problem}")
            all_absent = all_absent and fetched.absent
            continue
        metadata_url = shown_url(url)
        named = document.get("issuer")
        if named not in (origin, origin + "/"):
            shown = named if isinstance(named, str) else "no issuer"
            raise _not_discoverable(
                f"{tried_prm}, and the 2025-03-26 fallback failed: issuer mismatch: the metadata at "
                f"{metadata_url} names {shown}, expected the server's origin {origin}"
            )
        _check_endpoints(document, metadata_url, f"{tried_prm}, and the 2025-03-26 fallback failed: ")
        legacy = [
            "Sign-in was found only through the 2025-03-26 fallback: the server publishes no protected "
            f"resource metadata (RFC 9728), so its origin {origin} was taken as the authorization server "
            f"({metadata_url}); the SDK clients still sign in this way, clients that follow 2025-06-18 "
            "or later strictly will not find the sign-in"
        ]
        if not url.path.startswith(OAUTH_WELL_KNOWN):
            legacy.append(
                f"The 2025-03-26 fallback found only OpenID metadata; the Python SDK client reads only "
                f"{origin}{OAUTH_WELL_KNOWN} there and would use {origin}/authorize and {origin}/token"
            )
        return SignIn(
            issuer=origin,
            warnings=(*legacy, *warnings, *_client_warnings(document)),
            discovery=SigninDiscovery.LEGACY_FALLBACK,
        )
    if all_absent and not named_metadata:
        raise credentials_required()
    raise _not_discoverable(
        f"{tried_prm}, and no 2025-03-26 authorization server metadata at the server's origin "
        "(tried " + "; ".join(tried) + ")"
    )


CREDENTIALS_REQUIRED_WORDS = (
    "The server asks for credentials (HTTP 401) and publishes no OAuth sign-in: no protected resource "
    "metadata, no authorization server metadata. If it uses a key, add it as a request header "
    "(the monitor's Advanced settings; config.headers in the API)"
)


def credentials_required() -> CheckFailed:
    """Return the failure of a keyless check whose 401 comes with no OAuth sign-in anywhere.

    No ``resource_metadata`` in WWW-Authenticate, no RFC 9728 document at any well-known
    location (each answer conclusive: a 404, not a 5xx) and no RFC 8414 / OpenID document at the
    origin: nothing an assistant could sign in with, so the server wants credentials of its own
    (an API key, Basic). Said as such, not as a sign-in that failed to be found.
    """
    return CheckFailed(FailureKind.CREDENTIALS_REQUIRED, CREDENTIALS_REQUIRED_WORDS, http_status=401)


async def _find_as_metadata(conn: Connection, issuer: httpx.URL) -> tuple[dict[str, object], str]:
    tried: list[str] = []
    for url in as_metadata_urls(issuer):
        document, problem = await fetch_json(conn, url)
        if document is not None:
            return document, shown_url(url)
        tried.append(f"{shown_url(url)}: {problem}")
    raise _not_discoverable(f"no authorization server metadata for {issuer} (tried " + "; ".join(tried) + ")")


def _check_issuer(metadata: dict[str, object], metadata_url: str, issuer: str, warnings: list[str]) -> None:
    # RFC 8414 §3.3: a code-point comparison. Only a trailing slash is forgiven, with a
    # warning, because SDK clients normalise it away and real servers get it wrong.
    named = metadata.get("issuer")
    if named == issuer:
        return
    if isinstance(named, str) and named.rstrip("/") == issuer.rstrip("/"):
        warnings.append(f"The authorization server metadata names issuer {named}, not exactly {issuer}")
        return
    shown = named if isinstance(named, str) else "no issuer"
    raise _not_discoverable(
        f"issuer mismatch: the metadata at {metadata_url} names {shown}, expected {issuer}"
    )


def _check_endpoints(metadata: dict[str, object], metadata_url: str, context: str = "") -> None:
    for name in ("authorization_endpoint", "token_endpoint"):
        value = metadata.get(name)
        if not isinstance(value, str) or not value:
            raise _not_discoverable(
                f"{context}the authorization server metadata at {metadata_url} lists no {name}"
            )


def _client_warnings(metadata: dict[str, object]) -> list[str]:
    warnings: list[str] = []
    methods = metadata.get("code_challenge_methods_supported")
    if not isinstance(methods, list) or "S256" not in methods:
        warnings.append(
            "The authorization server does not advertise PKCE S256; 2025-11-25 clients refuse to sign in"
        )
    if metadata.get("client_id_metadata_document_supported") is not True and not metadata.get(
        "registration_endpoint"
    ):
        warnings.append(
            "The authorization server offers no client registration; assistants need pre-registration"
        )
    for name in ("authorization_endpoint", "token_endpoint"):
        value = metadata.get(name)
        if isinstance(value, str) and not value.startswith("https://"):
            warnings.append(f"The {name} is not https")
    return warnings


@dataclass(frozen=True, slots=True)
class _Fetched:
    """Hold a metadata document, or why there is none and whether that shows it is not there."""

    document: dict[str, object] | None
    problem: str = ""
    # False when the answer proves nothing about the document: a 5xx or 429, or no answer.
    conclusive: bool = True
    # True when the answer says plainly that nothing is here: a 4xx (not 429), or an HTML page
    # (a site's catch-all); a redirect refused, a JSON document that is no metadata, a cut
    # answer are something published, if broken.
    absent: bool = False


async def fetch_json(conn: Connection, url: httpx.URL) -> tuple[dict[str, object] | None, str]:
    """Return a metadata document at ``url`` (following a few guarded redirects), or None and why not.

    A refused address is not "not here": it ends the check as blocked_address.
    """
    fetched = await _fetch(conn, url)
    return fetched.document, fetched.problem


async def _fetch(conn: Connection, url: httpx.URL) -> _Fetched:
    for _hop in range(MAX_METADATA_REDIRECTS + 1):
        try:
            response = await conn.send("GET", url, headers=[("Accept", "application/json")])
        except CheckFailed as failed:
            if failed.kind is FailureKind.BLOCKED_ADDRESS:
                raise
            return _Fetched(None, failed.reason, conclusive=False)
        if response.status_code in REDIRECT_STATUSES:
            await conn.discard(response)
            try:
                url = redirect_target(url, response)
            except CheckFailed as refused:
                return _Fetched(None, refused.reason)
            continue
        status = response.status_code
        html = "html" in media_type(response)
        document, problem = await _json_document(conn, response)
        return _Fetched(
            document,
            problem,
            conclusive=not (status >= 500 or status == 429),
            absent=(400 <= status < 500 and status != 429) or (status == 200 and html),
        )
    return _Fetched(None, f"more than {MAX_METADATA_REDIRECTS} redirects")


async def _json_document(conn: Connection, response: Response) -> tuple[dict[str, object] | None, str]:
    status = response.status_code
    mtype = media_type(response)
    if status != 200:
        await conn.discard(response)
        return None, f"HTTP {status}"
    if "html" in mtype:
        await conn.discard(response)
        return None, "an HTML page"
    try:
        body = await conn.read_body(response, MAX_METADATA_BYTES)
    except CheckFailed as failed:
        return None, failed.reason
    try:
        document = jsonrpc.read_json(body)
    except ValueError:
        return None, "not JSON"
    except jsonrpc.JsonTooDeep as deep:
        # Not "not here, try the next URL": a server that sends this is broken or hostile.
        raise CheckFailed(FailureKind.PROTOCOL, f"The sign-in metadata from {response.host} {deep}") from None
    conn.check_deadline()
    if not isinstance(document, dict):
        return None, "not a JSON object"
    return document, ""
