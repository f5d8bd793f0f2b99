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
from dataclasses import dataclass

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


# A badge is drawn again at most this often (and at once after an owner's write to its page):
# a component's new status shows within it, as on the page. README renderers and image proxies
# ask for badges far more often than people open pages, and keep them BADGE_MAX_AGE themselves.
BADGE_SECONDS = 30
# How long an address (a slug path or a custom domain) is remembered to name a page.
ADDRESS_SECONDS = 3600


@dataclass(frozen=True)
class BadgeSlot:
    """Say where a badge URL's drawing is kept: under the page its address named when last drawn, at that page's version.

    The version is read before the component is, as for the HTML: a write that lands meanwhile
    bumps it again on commit, so what was drawn from older rows is kept under a version no
    reader asks for. An address not yet seen keeps nothing the first time: its page is learnt.
    """

    address: str
    page_id: int | None
    key: str | None


def badge_slot(address: str, key: str, name: str, fmt: str) -> BadgeSlot:
    """Return where the badge ``name``.``fmt`` of ``key`` at ``address`` is kept, reading the page's version now."""
    page_id = cache.get(_address_key(address))
    if page_id is None:
        return BadgeSlot(address, None, None)
    digest = hashlib.sha256(f"{address}\n{key}\n{name}\n{fmt}".encode()).hexdigest()[:24]
    return BadgeSlot(address, page_id, f"statuspages:badge:{page_id}:{page_version(page_id)}:{digest}")


def kept_badge(slot: BadgeSlot) -> tuple[bytes, str] | None:
    """Return the badge's kept body and content type, or None."""
    if slot.key is None:
        return None
    kept = cache.get(slot.key)
    return (kept[0], kept[1]) if kept is not None else None


def keep_badge(slot: BadgeSlot, page_id: int, body: bytes, content_type: str) -> None:
    """Keep a badge drawn for the component of page ``page_id``, or learn that its address names that page."""
    if slot.key is not None and slot.page_id == page_id:
        cache.set(slot.key, (body, content_type), BADGE_SECONDS)
    else:
        cache.set(_address_key(slot.address), page_id, ADDRESS_SECONDS)


def _address_key(address: str) -> str:
    return "statuspages:address:" + hashlib.sha256(address.encode()).hexdigest()[:32]


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
