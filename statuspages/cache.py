"""Keep a page's rendered HTML for a few seconds, and forget it the moment its owner changes the page.

A page of 50 components with 90 days of history costs a couple of hundred milliseconds to
read and draw, and its readers arrive together when something breaks. The HTML is kept for
:data:`HTML_SECONDS` (the ``max-age`` the page already tells browsers and proxies), under a
version every write of the page's own data bumps (the services call :func:`page_changed`): a
published incident shows at once, a healthcheck's new status within those seconds.
"""

from __future__ import annotations

import functools
import hashlib

from django.core.cache import cache
from django.db import transaction

HTML_SECONDS = 30


def _version_key(page_id: int) -> str:
    return f"statuspages:version:{page_id}"


def page_version(page_id: int) -> int:
    """Return the page's current version (0 until its first change is noticed)."""
    return int(cache.get_or_set(_version_key(page_id), 0, None) or 0)


def _bump(page_id: int) -> None:
    try:
        cache.incr(_version_key(page_id))
    except ValueError:
        cache.set(_version_key(page_id), 1, None)


def page_changed(page_id: int) -> None:
    """Make every kept rendering of the page stale, now and again once the write commits.

    Again after the commit, because a reader between the two would have drawn the page
    before the change and kept it under the new version.
    """
    _bump(page_id)
    transaction.on_commit(functools.partial(_bump, page_id))


def html_key(page_id: int, address: str) -> str:
    """Return the key of the page's HTML as reached at ``address`` (its slug path or its domain)."""
    digest = hashlib.sha256(address.encode()).hexdigest()[:16]
    return f"statuspages:html:{page_id}:{page_version(page_id)}:{digest}"


# A custom domain's answer (verified or not) is kept this long; every write that changes a
# page's domain or its verification forgets it at once (domain_changed).
DOMAIN_SECONDS = 300
UNKNOWN_HOST_SECONDS = 60


def domain_key(domain: str) -> str:
    """Return the key under which whether ``domain`` is a verified custom domain is kept."""
    return "statuspages:domain:" + hashlib.sha256(domain.encode()).hexdigest()[:32]


def domain_changed(*domains: str | None) -> None:
    """Forget what is kept about these domains, now and again once the write commits."""
    keys = [domain_key(domain) for domain in domains if domain]
    if keys:
        cache.delete_many(keys)
        transaction.on_commit(functools.partial(cache.delete_many, keys))
