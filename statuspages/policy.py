"""Write the Content-Security-Policy of a status page's public answers: pure, one policy per kind of answer.

The pages run no script at all and load only their own stylesheet and images, plus the logo,
which a page's owner may host anywhere (``logo_url``: its origin alone is allowed). They are
not meant to be framed (Django's X-Frame-Options already says DENY; ``frame-ancestors`` says it
to browsers that read CSP only): a page is linked to, a badge is the embeddable part, and a
badge is an image, which frame-ancestors does not govern. Feeds and JSON are documents nothing
should run or frame: ``sandbox`` for the case a browser is made to render one.
"""

from __future__ import annotations

from urllib.parse import urlsplit

PAGE_DIRECTIVES: tuple[tuple[str, str], ...] = (
    ("default-src", "'none'"),
    ("style-src", "'self'"),
    ("img-src", "'self'"),
    ("form-action", "'self'"),
    ("frame-ancestors", "'none'"),
    ("base-uri", "'none'"),
)
# Where the views leave the page's logo URL on the request, for the middleware that sends the policy.
LOGO_ATTRIBUTE = "uptimy_status_page_logo"
DOCUMENT_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; sandbox"


def logo_origin(logo_url: str) -> str | None:
    """Return the origin an external logo is loaded from (``https://cdn.example``), or None when there is none."""
    if not logo_url:
        return None
    try:
        parts = urlsplit(logo_url)
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), parts.hostname
    if scheme not in ("http", "https") or not host or any(c in host for c in " ;,'\""):
        return None
    port = f":{parts.port}" if parts.port else ""
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}{port}"


def page_policy(*, logo_url: str = "") -> str:
    """Return the policy of a status page's HTML (page, history, incident, subscribe, login): no script, own styles."""
    origin = logo_origin(logo_url)
    directives = [
        (name, f"{value} {origin}" if name == "img-src" and origin else value)
        for name, value in PAGE_DIRECTIVES
    ]
    return "; ".join(f"{name} {value}" for name, value in directives)


def answer_policy(*, content_type: str, logo_url: str = "") -> str:
    """Return the policy for a status page's answer of ``content_type``: HTML gets the page's, anything else the document's."""
    if content_type.split(";", 1)[0].strip().lower() == "text/html":
        return page_policy(logo_url=logo_url)
    return DOCUMENT_POLICY
