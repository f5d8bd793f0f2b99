"""Tell a key pasted into a URL: a query parameter whose name says it carries a credential, or userinfo.

Pure, and the one rule every way in applies before a URL is stored (the REST API and the web
form through ``monitors.services``, Uptimy's MCP tools, uptimyctl's file check): a URL is
stored, shown and sent in clear, so a key belongs in a request header, which is encrypted.

Names are compared as words: case and separators folded ("accessToken", "access-token",
"ACCESS_TOKEN" and "Access.Token" are the words access, token). A name carries a credential when
it holds a word only secrets have (secret, password, apikey, …), or ends in a credential word
(token, key, auth, signature, …), unless the word before it says what kind of non-secret it is
(a page token is a cursor, a sort key an ordering). Glued lower-case names ("accesstoken",
"apikey") are read by their known prefixes, so "monkey", "keyword" and "tokenizer" pass.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# Words only a secret is named by, wherever they stand in the name (secret_id, passwordHash).
SECRET_WORDS = frozenset({"secret", "password", "passwd", "passphrase", "apikey", "jwt", "bearer"})
# Words that name a credential when they end the name (x_api_key, id_token, basic_auth, X-Amz-Signature).
CREDENTIAL_ENDINGS = frozenset(
    {
        "token",
        "key",
        "auth",
        "authorization",
        "signature",
        "sig",
        "hmac",
        "credential",
        "credentials",
        "pwd",
        "pass",
    }
)
# What a token is when the word before it is one of these: a cursor (Google's pageToken, AWS's NextToken).
CURSOR_WORDS = frozenset(
    {"page", "next", "prev", "previous", "continuation", "sync", "cursor", "resume", "start", "delta"}
)
# What a key is when the word before it is one of these: an ordering, an identifier, a public half.
NON_SECRET_KEYS = frozenset(
    {
        "sort",
        "order",
        "cache",
        "primary",
        "partition",
        "foreign",
        "range",
        "hash",
        "shard",
        "row",
        "index",
        "lookup",
        "group",
        "search",
        "object",
        "entity",
        "record",
        "item",
        "dedup",
        "dedupe",
        "idempotency",
        "unique",
        "composite",
        "translation",
        "message",
        "i18n",
        "public",
        "publishable",
        "map",
        "config",
        "setting",
    }
)
# Prefixes that, glued to "key" or "auth" in one lower-case word, make a credential (apikey, accesskey).
CREDENTIAL_PREFIXES = (
    "api",
    "access",
    "secret",
    "private",
    "auth",
    "client",
    "app",
    "application",
    "dev",
    "developer",
    "master",
    "session",
    "license",
    "licence",
    "subscription",
    "user",
    "sdk",
    "write",
    "ingest",
    "service",
    "signing",
    "encryption",
    "integration",
    "consumer",
    "admin",
    "account",
    "server",
    "routing",
    "basic",
    "http",
)
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def name_words(name: str) -> list[str]:
    """Return a parameter name's words, lower-cased: "X-API-Key" → x, api, key; "accessToken" → access, token."""
    return [word.lower() for word in _WORD.findall(name)]


def is_key_param(name: str) -> bool:
    """Return whether a query parameter's name says its value is a credential."""
    words = name_words(name)
    if not words:
        return False
    if SECRET_WORDS.intersection(words):
        return True
    last = words[-1]
    before = words[-2] if len(words) > 1 else ""
    if last in CREDENTIAL_ENDINGS:
        if last == "token" and before in CURSOR_WORDS:
            return False
        return not (last == "key" and before in NON_SECRET_KEYS)
    return _glued_credential(last)


def _glued_credential(word: str) -> bool:
    """Return whether one lower-case word glues a credential's name together ("accesstoken", "clientsecret")."""
    if word.endswith(("password", "passwd", "secret", "apikey", "signature")):
        return True
    if word.endswith("token") and len(word) > len("token"):
        return not word.removesuffix("token").endswith(tuple(CURSOR_WORDS))
    for suffix in ("key", "auth"):
        if word.endswith(suffix) and word.removesuffix(suffix) in CREDENTIAL_PREFIXES:
            return True
    return False


def key_in_url(url: str) -> str | None:
    """Return which part of ``url`` carries a key ("a user name or password", "the query parameter token"), or None."""
    try:
        parts = urlsplit(url)
        has_userinfo = parts.username is not None or parts.password is not None
    except ValueError:
        return None  # not a URL: the check type's own parser says what is wrong with it
    if has_userinfo:
        return "a user name or password"
    names = [name for name, _ in parse_qsl(parts.query, keep_blank_values=True) if is_key_param(name)]
    if names:
        return f"the query parameter {names[0]}"
    return None


def without_key(url: str) -> str:
    """Return ``url`` without its user name, password and key parameters."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    query = urlencode(
        [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not is_key_param(k)]
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def key_in_url_words(url: str) -> str | None:
    """Return the refusal of a URL that carries a key, the same sentence for every way in, or None."""
    part = key_in_url(url)
    if part is None:
        return None
    return (
        f"It carries a key ({part}): a URL is stored and shown in clear. Leave it out "
        f"({without_key(url)}) and send the key as a request header, which is stored encrypted."
    )
