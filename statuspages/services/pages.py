"""Create, change and delete status pages; verify their custom domains."""

from __future__ import annotations

import functools
import re
import zoneinfo
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth.hashers import check_password, make_password
from django.db import IntegrityError, transaction

from monitors.errors import ServiceError
from monitors.models import Organization
from statuspages.cache import domain_changed, page_changed
from statuspages.models import StatusPage, domain_token
from statuspages.services.audit import audited, page_changed_sides, page_snapshot

PAGE_FIELDS = (
    "slug",
    "title",
    "description",
    "logo_url",
    "time_zone",
    "access",
    "password",
    "custom_domain",
    "draft_incidents",
)
MIN_PASSWORD_LENGTH = 8
# The name the customer publishes the verification token at, under their domain.
DOMAIN_RECORD_PREFIX = "_uptimy"
# RFC 1123 labels, at least two of them: a page's domain is a public name, never "localhost".
_DOMAIN = re.compile(r"^(?=.{4,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")

TxtResolver = Callable[[str], Sequence[str]]


@functools.cache
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def _time_zone(name: Any) -> str:
    if not isinstance(name, str) or name not in _zones():
        raise ServiceError("time_zone", "Unknown time zone: use an IANA name such as Europe/Paris or UTC.")
    return str(name)


def _logo_url(value: Any) -> str:
    url = str(value or "")
    if not url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        parts = None
    if parts is None or parts.scheme.lower() not in ("https", "http") or not parts.netloc:
        raise ServiceError("logo_url", "The logo URL must be an https:// or http:// address.")
    return url


def _custom_domain(domain: Any) -> str | None:
    if not domain:
        return None
    normal = str(domain).strip().lower().removesuffix(".")
    if not _DOMAIN.match(normal):
        raise ServiceError(
            "custom_domain", "Give a host name such as status.example.com, without scheme or path."
        )
    return normal


def _apply(page: StatusPage, changes: Mapping[str, Any]) -> None:
    for field in ("slug", "title", "description", "draft_incidents"):
        if field in changes:
            setattr(page, field, changes[field])
    if "logo_url" in changes:
        page.logo_url = _logo_url(changes["logo_url"])
    if "time_zone" in changes:
        page.time_zone = _time_zone(changes["time_zone"])
    if "custom_domain" in changes:
        domain = _custom_domain(changes["custom_domain"])
        if domain != page.custom_domain:
            # A new domain proves itself afresh, with a token no one has seen for the old one.
            page.custom_domain = domain
            page.domain_verified_at = None
            page.domain_token = domain_token()
    if "access" in changes:
        page.access = changes["access"]
    password = changes.get("password")
    if page.access == StatusPage.Access.PASSWORD:
        if password:
            if len(password) < MIN_PASSWORD_LENGTH:
                raise ServiceError("password", f"Use at least {MIN_PASSWORD_LENGTH} characters.")
            page.password_hash = make_password(password)
        elif not page.password_hash:
            raise ServiceError("password", "A password page needs a password.")
    else:
        page.password_hash = ""


def _save(page: StatusPage, audit: Callable[[], None]) -> StatusPage:
    """Save the page and, in the same transaction, record it with ``audit``."""
    if StatusPage.objects.filter(slug=page.slug).exclude(pk=page.pk).exists():
        raise ServiceError("slug", "This slug is taken; choose another.")
    if (
        page.custom_domain
        and StatusPage.objects.filter(custom_domain=page.custom_domain).exclude(pk=page.pk).exists()
    ):
        raise ServiceError("custom_domain", "This domain is already used by a status page.")
    try:
        with transaction.atomic():
            page.save()
            audit()
    except IntegrityError:
        # Two requests raced for the same slug or domain: the constraint decided.
        raise ServiceError("slug", "This slug or domain is taken; choose another.") from None
    page_changed(page.pk)
    return page


def status_page_create(*, organization: Organization, changes: Mapping[str, Any]) -> StatusPage:
    """Create a page from the API's validated ``changes`` (slug and title at least)."""
    page = StatusPage(organization=organization)
    _apply(page, changes)
    _save(page, lambda: _audit(page, "status_page.created", after=page_snapshot(page)))
    domain_changed(page.custom_domain)
    return page


def status_page_update(*, page: StatusPage, changes: Mapping[str, Any]) -> StatusPage:
    """Change the fields named in ``changes``; a changed domain must be verified again."""
    before = page.custom_domain
    snapshot, before_hash = page_snapshot(page), page.password_hash
    _apply(page, changes)

    def audit() -> None:
        old, new = page_changed_sides(page, snapshot, before_hash)
        _audit(page, "status_page.updated", before=old, after=new)

    _save(page, audit)
    domain_changed(before, page.custom_domain)
    return page


def _audit(page: StatusPage, action: str, **sides: Any) -> None:
    audited(page.organization_id, action, target=page, name=page.title, **sides)


def status_page_delete(*, page: StatusPage) -> None:
    with transaction.atomic():
        page_changed(page.pk)
        domain_changed(page.custom_domain)
        _audit(page, "status_page.deleted", before=page_snapshot(page))
        page.delete()


def password_matches(*, page: StatusPage, password: str) -> bool:
    """Return whether ``password`` opens the page (always False for a page without one)."""
    return bool(page.password_hash) and check_password(password, page.password_hash)


def domain_record_name(domain: str) -> str:
    """Return where the customer publishes the token: a TXT record at ``_uptimy.<domain>``."""
    return f"{DOMAIN_RECORD_PREFIX}.{domain}"


def status_page_verify_domain(*, page: StatusPage, resolver: TxtResolver, now: datetime) -> StatusPage:
    """Mark the page's custom domain verified when its TXT record holds the page's token.

    ``resolver`` returns the TXT strings at a name (statuspages.dns.txt_records; tests pass a fake).
    """
    if not page.custom_domain:
        raise ServiceError("custom_domain", "Set a custom domain first.")
    name = domain_record_name(page.custom_domain)
    if page.domain_token not in resolver(name):
        raise ServiceError(
            "custom_domain", f"No TXT record at {name} holds this page's verification token yet."
        )
    was_verified = page.domain_verified_at is not None
    page.domain_verified_at = now
    with transaction.atomic():
        page.save(update_fields=["domain_verified_at", "updated_at"])
        _audit(
            page,
            "status_page.domain_verified",
            before={"custom_domain": page.custom_domain, "domain_verified": was_verified},
            after={"custom_domain": page.custom_domain, "domain_verified": True},
        )
    page_changed(page.pk)
    domain_changed(page.custom_domain)
    return page
