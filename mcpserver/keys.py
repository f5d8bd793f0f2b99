"""Tell a key pasted into a monitor's URL: add_monitors never takes one, so keys never pass through a chat.

Pure: a URL in, which part carries a key (or None) and the URL without it out.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# Query parameters that carry a credential by their name, as APIs spell them (compared lowercased,
# "-" read as "_"); any name ending in one of KEY_SUFFIXES too (x_api_key, client_secret, id_token).
KEY_PARAMS = frozenset(
    {
        "key",
        "apikey",
        "api_key",
        "token",
        "access_token",
        "auth",
        "authorization",
        "secret",
        "password",
        "sig",
        "signature",
    }
)
KEY_SUFFIXES = ("_key", "_token", "_secret", "apikey")


def _is_key_param(name: str) -> bool:
    normal = name.strip().lower().replace("-", "_")
    return normal in KEY_PARAMS or normal.endswith(KEY_SUFFIXES)


def key_in_url(url: str) -> str | None:
    """Return which part of ``url`` carries a key ("a user name or password", "the query parameter token"), or None."""
    try:
        parts = urlsplit(url)
        has_userinfo = parts.username is not None or parts.password is not None
    except ValueError:
        return None  # not a URL: the check type's own parser says what is wrong with it
    if has_userinfo:
        return "a user name or password"
    names = [name for name, _ in parse_qsl(parts.query, keep_blank_values=True) if _is_key_param(name)]
    if names:
        return f"the query parameter {names[0]}"
    return None


def without_key(url: str) -> str:
    """Return ``url`` without its user name, password and key parameters."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    query = urlencode(
        [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _is_key_param(k)]
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
