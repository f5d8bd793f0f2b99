"""Write a customer's own listing of their MCP healthcheck, and verify its free-tier quote (check 12).

The listing's rules live here once (the API and the web form both call :func:`listing_set`);
the quote's rules are :mod:`monitors.quotes`, the fetch :mod:`monitors.pagefetch`. A round of
verification (:func:`quotes_verify`, the beat entry ``monitors.verify_quotes``) fetches due
pricing pages one at a time, at most one page per host per round, each page at most daily,
and never inside a transaction.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction

from monitors import quotes
from monitors.errors import FieldsInvalid, ServiceError
from monitors.models import Healthcheck, HealthcheckListing
from monitors.pagefetch import FetchFailed, Page, address_problem
from probes.checks.mcp import MCP
from probes.text import text_fault

logger = logging.getLogger(__name__)

URL_MAX = 2000
NAMESPACE_MAX = 200
# The Official MCP Registry's server name: a reverse-DNS namespace, a slash, a name.
NAMESPACE_PATTERN = re.compile(r"^[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)+/[a-zA-Z0-9._-]+$")
QUOTE_INTERVAL = timedelta(days=1)
PROBLEM_MAX = 300
LISTING_FIELDS = ("namespace", "website_url", "repository_url", "pricing_url", "quote")


def _clean_text(field: str, value: object, *, limit: int) -> str:
    if not isinstance(value, str):
        raise ServiceError(field, "Must be text.")
    fault = text_fault(value)
    if fault:
        raise ServiceError(field, f"Must not contain {fault}.")
    value = value.strip()
    if len(value) > limit:
        raise ServiceError(field, f"Must be at most {limit:,} characters.")
    if any(ord(ch) < 0x20 for ch in value):
        raise ServiceError(field, "Must not contain control characters.")
    return value


def _clean_url(field: str, value: object) -> str:
    url = _clean_text(field, value, limit=URL_MAX)
    if not url:
        return ""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  # raises ValueError for a port out of range
    except ValueError:
        raise ServiceError(field, "Must be a valid http(s) URL.") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ServiceError(field, "Must be an http(s) URL with a host, e.g. https://example.com/pricing.")
    if parts.username or parts.password:
        raise ServiceError(field, "Must not carry a user name or password.")
    return url


def namespace_problem(namespace: str) -> str | None:
    """Return why ``namespace`` is not a registry-style server name, or None."""
    if not namespace:
        return "Enter the server's name as the registry spells it, e.g. io.github.owner/server or com.example/server."
    if len(namespace) < 3 or not NAMESPACE_PATTERN.match(namespace):
        return (
            "Must be a reverse-DNS namespace, a slash and a name (letters, digits, '.', '_', '-'), "
            "e.g. io.github.owner/server or com.example/server."
        )
    return None


def _cleaned(data: Mapping[str, object]) -> dict[str, str]:
    """Return the five fields cleaned, or raise FieldsInvalid naming every refused one."""
    errors: dict[str, str] = {}
    values: dict[str, str] = {}
    cleaners: dict[str, Callable[[object], str]] = {
        "namespace": lambda value: _clean_text("namespace", value, limit=NAMESPACE_MAX),
        "website_url": lambda value: _clean_url("website_url", value),
        "repository_url": lambda value: _clean_url("repository_url", value),
        "pricing_url": lambda value: _clean_url("pricing_url", value),
        "quote": lambda value: _clean_text("quote", value, limit=quotes.QUOTE_MAX),
    }
    for field, clean in cleaners.items():
        try:
            values[field] = clean(data.get(field, ""))
        except ServiceError as refused:
            errors[field] = refused.message
    if "namespace" in values and (problem := namespace_problem(values["namespace"])):
        errors["namespace"] = problem
    errors.update(_quote_problems(values))
    errors.update(_address_problems(values, errors))
    if errors:
        raise FieldsInvalid(errors)
    return values


def _address_problems(values: Mapping[str, str], errors: Mapping[str, str]) -> dict[str, str]:
    """Return the address guard's refusals of the listing's links, with the words a webhook's save gets.

    The pricing page is fetched (and checked again then: DNS answers change), and the website and
    repository are links a directory visitor follows: none may point at a private address.
    Checked on save as channels are, unless private targets are allowed (tests, self-hosting).
    """
    if settings.UPTIMY_ALLOW_PRIVATE_TARGETS:
        return {}
    problems: dict[str, str] = {}
    for field in ("website_url", "repository_url", "pricing_url"):
        url = values.get(field, "")
        if url and field not in errors:
            problem = address_problem(url, nameservers=tuple(settings.UPTIMY_DNS_SERVERS))
            if problem:
                problems[field] = problem
    return problems


def _quote_problems(values: Mapping[str, str]) -> dict[str, str]:
    """Return the pricing page's and the quote's problems together: both or neither, and what the quote says."""
    if "quote" not in values or "pricing_url" not in values:
        return {}
    quote, pricing_url = values["quote"], values["pricing_url"]
    if quote and not pricing_url:
        return {"pricing_url": "Enter the page that states the quote."}
    if pricing_url and not quote:
        return {"quote": "Enter the text the pricing page states, e.g. “Free tier: 1,000 calls a month”."}
    if not quote:
        return {}
    if len(quotes.normalised(quote)) < quotes.QUOTE_MIN:
        return {"quote": f"Must be at least {quotes.QUOTE_MIN} characters besides spaces."}
    problem = quotes.free_access_problem(quote)
    return {"quote": problem} if problem else {}


def listing_set(*, healthcheck: Healthcheck, data: Mapping[str, object], now: datetime) -> HealthcheckListing:
    """Create or replace the MCP healthcheck's listing from ``data`` (the five fields; missing ones empty).

    Raises FieldsInvalid naming every refused field (a ServiceError). A new pricing page or quote forgets what the old one
    found and is fetched on the next round; an unchanged one keeps its verification.
    """
    if healthcheck.type != MCP.number:
        raise ServiceError("healthcheck", "Only an MCP healthcheck has a listing.")
    values = _cleaned(data)
    with transaction.atomic():
        listing = HealthcheckListing.objects.select_for_update().filter(healthcheck=healthcheck).first()
        if listing is None:
            listing = HealthcheckListing(healthcheck=healthcheck)
        quote_changed = (listing.pricing_url, listing.quote) != (values["pricing_url"], values["quote"])
        for field, value in values.items():
            setattr(listing, field, value)
        if quote_changed:
            listing.quote_checked_at = None
            listing.quote_found_at = None
            listing.quote_problem = ""
            listing.quote_due_at = now if listing.pricing_url else None
        listing.save()
    return listing


def listing_clear(*, healthcheck: Healthcheck) -> bool:
    """Delete the healthcheck's listing; return whether there was one."""
    deleted, _ = HealthcheckListing.objects.filter(healthcheck=healthcheck).delete()
    return deleted > 0


# --- verifying the quote ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QuoteDue:
    listing_id: int
    url: str
    quote: str


@dataclass
class QuoteReport:
    """What one round did: pages fetched, quotes found, and how many due pages wait for a later round."""

    fetched: int = 0
    found: int = 0
    deferred: int = 0


def quotes_due(*, now: datetime, limit: int) -> tuple[list[QuoteDue], int]:
    """Return up to ``limit`` listings whose pricing page is due, at most one per host, oldest first; and how many wait."""
    rows = (
        HealthcheckListing.objects.exclude(pricing_url="")
        .filter(quote_due_at__lte=now)
        .order_by("quote_due_at", "id")
        .values_list("id", "pricing_url", "quote")[: limit * 5]
    )
    chosen: list[QuoteDue] = []
    hosts: set[str] = set()
    waiting = 0
    for listing_id, url, quote in rows:
        host = (urlsplit(url).hostname or "").removeprefix("www.")
        if host in hosts or len(chosen) >= limit:
            waiting += 1
            continue
        hosts.add(host)
        chosen.append(QuoteDue(listing_id, url, quote))
    return chosen, waiting


def quote_verification_record(
    *, listing_id: int, url: str, quote: str, fetched: Page | FetchFailed, now: datetime
) -> bool:
    """Record one fetch of a listing's pricing page; return whether the quote was found.

    A fetch that does not find the quote keeps ``quote_found_at`` (check 12 passes within 90
    days of it). Nothing is recorded when the customer changed the page or the quote meanwhile.
    """
    if isinstance(fetched, FetchFailed):
        finding = quotes.Finding(False, fetched.reason)
    else:
        finding = quotes.find_quote(body=fetched.body, content_type=fetched.content_type, quote=quote)
    changes: dict[str, object] = {
        "quote_checked_at": now,
        "quote_problem": finding.problem[:PROBLEM_MAX],
        "quote_due_at": now + QUOTE_INTERVAL,
    }
    if finding.found:
        changes["quote_found_at"] = now
    HealthcheckListing.objects.filter(id=listing_id, pricing_url=url, quote=quote).update(**changes)
    return finding.found


def quotes_verify(
    *, fetch: Callable[[str], Page | FetchFailed], now: Callable[[], datetime], limit: int
) -> QuoteReport:
    """Fetch the due pricing pages one at a time and record what each says; return what the round did.

    ``fetch`` takes a URL (the settings' timeout and guard already applied); ``now`` is read as
    each fetch ends, so each record carries its own time.
    """
    report = QuoteReport()
    due, report.deferred = quotes_due(now=now(), limit=limit)
    for item in due:
        fetched = fetch(item.url)
        report.fetched += 1
        found = quote_verification_record(
            listing_id=item.listing_id, url=item.url, quote=item.quote, fetched=fetched, now=now()
        )
        report.found += found
        if not found:
            logger.info("free-tier quote not found for listing %s", item.listing_id)
    return report
