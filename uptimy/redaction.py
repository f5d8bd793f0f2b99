"""Name the secret parts of Uptimy's own URLs, so that no log line carries a live one-time token.

Pure (the standard library and ``probes.urlkeys``). A request line in an access log outlives the
token in it: an invitation is good for seven days, a password-reset link until it is used, an
acknowledge link until its incident ends. ``redact_url`` replaces, in a path or a URL:

- the secret segment of the routes in ``SECRET_PATHS`` (password reset, invitation, acknowledge
  link, a heartbeat's ping URL, a status page's subscriber confirm and unsubscribe tokens and
  badge tokens, under ``/s/<slug>/`` and at a custom domain's root);
- the value of every query parameter in ``SECRET_QUERY_KEYS`` or whose name says it carries a
  credential (``probes.urlkeys.is_key_param``, the rule that refuses a key pasted into a URL);
- a user name and password before the host;

and, in a query value that is itself a path or URL (``?next=/app/invitations/<token>/``), the same
again. ``redact_text`` applies it to every path or URL in a line of text (a request line, a
"Not Found: /path" warning, a referer). The log filters that apply it are ``uptimy.log_redaction``.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from probes.urlkeys import is_key_param

REDACTED = "[redacted]"

# Each pattern matches a path from its start; the group named "secret" is what is replaced. A
# status page's routes answer under /s/<slug>/ and, on a verified custom domain, at the root.
_PAGE = r"(?:/s/[^/?#]+)?"
SECRET_PATHS: tuple[re.Pattern[str], ...] = (
    # Django's PasswordResetConfirmView: /<uidb64>/<token>/; it then swaps the token for
    # "set-password" (kept in the session), which is no secret.
    re.compile(r"^/app/password-reset/[^/?#]+/(?P<secret>(?!set-password/)[^/?#]+)"),
    re.compile(r"^/app/invitations/(?P<secret>[^/?#]+)"),
    re.compile(r"^/alerts/ack/(?P<secret>[^/?#]+)"),
    # A heartbeat's ping id: whoever holds it can report the customer's job as done or failed.
    re.compile(r"^/ping/(?P<secret>[^/?#]+)"),
    re.compile(rf"^{_PAGE}/subscribe/confirm/(?P<secret>[^/?#]+)"),
    re.compile(rf"^{_PAGE}/unsubscribe/(?P<secret>[^/?#]+)"),
    # A badge's key is its component's badge token (a private page's badges are read by it).
    re.compile(rf"^{_PAGE}/badges/(?P<secret>[^/?#]+)/"),
)
# Query parameters that carry one of Uptimy's own one-time tokens, beside those is_key_param names.
# ("code": an OAuth authorization code, should a redirect ever bring one here.)
SECRET_QUERY_KEYS = frozenset({"invitation", "code"})

# A path or URL inside free text: from "/" or "scheme://" to the next space or quote.
_IN_TEXT = re.compile(r"""(?:[a-zA-Z][a-zA-Z0-9+.-]*://|(?<![\w.:/])/)[^\s"'<>]*""")


def redact_path(path: str) -> str:
    """Return ``path`` (no query) with the secret segment of a route in SECRET_PATHS replaced by REDACTED."""
    decoded = unquote(path)
    for pattern in SECRET_PATHS:
        found = pattern.match(decoded)
        if found is not None:
            start, end = found.span("secret")
            return decoded[:start] + REDACTED + decoded[end:]
    return path


def redact_query(query: str) -> str:
    """Return a query string with the values of its credential parameters replaced, its other pairs as they were."""
    if not query:
        return query
    pairs = []
    for pair in re.split(r"([&;])", query):
        if pair in ("&", ";") or not pair:
            pairs.append(pair)
            continue
        name, equals, value = pair.partition("=")
        if not equals:
            pairs.append(pair)
        elif is_secret_param(unquote(name.replace("+", " "))):
            pairs.append(f"{name}={REDACTED}")
        else:
            pairs.append(f"{name}={_redact_nested(value)}")
    return "".join(pairs)


def is_secret_param(name: str) -> bool:
    """Return whether a query parameter's value is a secret: one of Uptimy's token parameters, or a credential's name."""
    return name.lower() in SECRET_QUERY_KEYS or is_key_param(name)


def _redact_nested(value: str) -> str:
    """Redact a query value that is itself a path or URL (``next=/app/invitations/…/``), kept encoded as it came."""
    decoded = unquote(value.replace("+", " "))
    if not decoded.startswith("/") and "://" not in decoded:
        return value
    redacted = redact_url(decoded)
    if redacted == decoded:
        return value
    return quote(redacted, safe="/:[]")


def redact_url(url: str) -> str:
    """Return a path, a path with its query, or an absolute URL with every secret part replaced by REDACTED."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    path = redact_path(parts.path)
    query = redact_query(parts.query)
    if (netloc, path, query) == (parts.netloc, parts.path, parts.query):
        return url
    return urlunsplit((parts.scheme, netloc, path, query, parts.fragment))


def redact_text(text: str) -> str:
    """Return a line of text with every path or URL in it (a request line, a referer, "Not Found: /x") redacted."""
    if "/" not in text:
        return text
    return _IN_TEXT.sub(lambda found: redact_url(found.group(0)), text)
