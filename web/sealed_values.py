"""Carry a secret the user typed through a form's re-render without writing it into the page.

When the healthcheck form comes back (Test now, or an error), a header value typed in it must
not be echoed into the page source, yet must not be lost either. The value travels in a hidden
field as ciphertext (``monitors.secrets``, UPTIMY_SECRETS_KEY) bound to the organization and to
the URL's origin: header values are only ever sent to that origin, so a sealed value copied
into another organization's form, or a form whose URL now points elsewhere, does not open.
It also expires: a form left open for a day asks for the value again.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from monitors.secrets import SecretUnreadable, decrypt_document, encrypt_document

MAX_AGE_SECONDS = 6 * 3600
PURPOSE = "healthcheck-form-header"


class SealBroken(Exception):
    """The sealed value can't be opened here: expired, for another origin or organization, or altered."""


def origin_of(url: str) -> str:
    """Return ``scheme://host:port`` of ``url`` (default port filled in), or "" when it has no host."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return ""
    if not parts.hostname:
        return ""
    scheme = parts.scheme.lower()
    return f"{scheme}://{parts.hostname.lower()}:{port or {'http': 80, 'https': 443}.get(scheme, 0)}"


def seal(value: str, *, organization_id: str, origin: str) -> str:
    """Return ``value`` encrypted for this organization and origin."""
    return encrypt_document([PURPOSE, organization_id, origin, value])


def unseal(token: str, *, organization_id: str, origin: str) -> str:
    """Return the value ``token`` seals; raise SealBroken when it is not this organization's and origin's."""
    try:
        document = decrypt_document(token, what="typed header value", max_age=MAX_AGE_SECONDS)
    except SecretUnreadable:
        raise SealBroken from None
    if (
        not isinstance(document, list)
        or len(document) != 4
        or document[:3] != [PURPOSE, organization_id, origin]
        or not isinstance(document[3], str)
    ):
        raise SealBroken
    return document[3]
