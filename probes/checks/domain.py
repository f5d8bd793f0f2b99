"""The domain check (type 6): a registration's expiry, read through RDAP (RFC 9083).

The registry's RDAP service is found in IANA's bootstrap registry (``probes.rdap``); its answer
for the domain is read through the check's :class:`~probes.connection.Connection` (the address
guard, redirects through it, a 1 MiB cap). A registration that expires within ``warnDays`` is
degraded, an expired or missing one is down. What the check can't measure is never down: a
domain whose registry publishes no RDAP service or no expiry date, or a registry that does not
answer, is up with a warning saying what was not checked, since paging a customer for a
registry's outage would be a false alarm. Answers are cached for a few hours per process, and
domain checks run at most hourly (``min_interval_seconds``): registries ask for few lookups.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from probes import netguard, rdap
from probes.checks.form import FormField, Widget
from probes.checks.registry import CheckKind, register
from probes.config import (
    DEFAULT_TIMEOUT,
    TIMEOUT_SCHEMA,
    ConfigError,
    config_fields,
    timeout_field,
    validate_host,
    whole_number,
)
from probes.connection import REDIRECT_STATUSES, CheckFailed, Connection, ascii_host, redirect_target
from probes.jsonrpc import JsonTooDeep, read_json
from probes.types import FailureKind, Headers, ProbeOutcome, Status

CONFIG_KEYS = frozenset({"domain", "warnDays", "timeout"})
DEFAULT_WARN_DAYS = 30
MAX_ANSWER_BYTES = 1024 * 1024
MAX_REDIRECTS = 3
# RDAP answers change once a day at most (a renewal); a worker asks again after this.
CACHE_SECONDS = 6 * 3600
MIN_INTERVAL_SECONDS = 3600
RDAP_ACCEPT = "application/rdap+json, application/json;q=0.9"


@dataclass(frozen=True, slots=True)
class DomainConfig:
    """Hold one domain check's settings, validated by :func:`parse_domain_config`."""

    domain: str
    warn_days: int = DEFAULT_WARN_DAYS
    timeout: float = float(DEFAULT_TIMEOUT)
    headers: Headers = ()

    @property
    def target(self) -> str:
        return self.domain

    @property
    def host(self) -> str:
        # The registry is the host the check reaches, and all of a TLD's checks share it.
        return "rdap:" + self.domain.rsplit(".", 1)[-1]


def parse_domain_config(raw: object) -> DomainConfig:
    """Return a DomainConfig from ``{"domain", "warnDays", "timeout"}``."""
    data, errors = config_fields(raw, CONFIG_KEYS)
    domain = ""
    if "domain" not in data:
        errors["domain"] = "This field is required."
    else:
        try:
            domain = ascii_host(validate_host(data["domain"])).rstrip(".")
        except ValueError as exc:
            errors["domain"] = str(exc)
        else:
            if netguard.parse_ip(domain) is not None or "." not in domain:
                errors["domain"] = (
                    "Enter a registered domain name, e.g. example.com (not an address or a TLD)."
                )
    warn = whole_number(data.get("warnDays", DEFAULT_WARN_DAYS), "warnDays", 0, 365, errors, unit="days")
    timeout = timeout_field(data.get("timeout", DEFAULT_TIMEOUT), errors)
    if errors:
        raise ConfigError(errors)
    return DomainConfig(domain=domain, warn_days=DEFAULT_WARN_DAYS if warn is None else warn, timeout=timeout)


def domain_config_to_api(config: DomainConfig) -> dict[str, Any]:
    """Return the API shape of ``config``."""
    return {"domain": config.domain, "warnDays": config.warn_days, "timeout": config.timeout}


CONFIG_SCHEMA: dict[str, Any] = {
    "title": "Domain check config (type 6)",
    "type": "object",
    "additionalProperties": False,
    "required": ["domain"],
    "properties": {
        "domain": {"type": "string", "description": "The registered domain name.", "example": "example.com"},
        "warnDays": {
            "type": "integer",
            "minimum": 0,
            "maximum": 365,
            "default": DEFAULT_WARN_DAYS,
            "description": "Degraded when the registration expires within this many days.",
        },
        "timeout": TIMEOUT_SCHEMA,
    },
}

FORM = (
    FormField("domain", "domain", "Domain", Widget.TEXT, placeholder="example.com", required=True),
    FormField(
        "warnDays", "warn_days", "Warn this many days before expiry", Widget.INTEGER, help="Default 30."
    ),
    FormField("timeout", "timeout", "Timeout (seconds)", Widget.NUMBER),
)


def judge(
    config: DomainConfig, expires_at: datetime | None, *, now: datetime
) -> tuple[Status, FailureKind | None, str]:
    """Return the run's status, kind and reason from the registration's expiry (the rules, pure)."""
    if expires_at is None:
        return Status.UP, None, ""
    left = expires_at - now
    days = left.days
    date = f"{expires_at:%Y-%m-%d}"
    if left.total_seconds() <= 0:
        ago = (now - expires_at).days
        return (
            Status.DOWN,
            FailureKind.DOMAIN_EXPIRED,
            f"The registration of {config.domain} expired {_days(ago)} ago ({date})"
            if ago
            else f"The registration of {config.domain} expired today ({date})",
        )
    if days < config.warn_days:
        return (
            Status.DEGRADED,
            FailureKind.DOMAIN_EXPIRING,
            f"The registration of {config.domain} expires in {_days(days)} ({date})",
        )
    return Status.UP, None, ""


def _days(count: int) -> str:
    return f"{count} day{'s' if count != 1 else ''}"


# (base URL, domain) -> (when fetched on the monotonic clock, the answer's JSON).
_cache: dict[tuple[str, str], tuple[float, Any]] = {}


def clear_cache() -> None:
    """Forget every cached RDAP answer (tests; a refreshed bootstrap)."""
    _cache.clear()


async def check_domain(config: DomainConfig, conn: Connection, *, deadline: float) -> ProbeOutcome:
    """Return the outcome of one domain check; ``deadline`` is the loop time the whole check ends by."""
    started = time.perf_counter()
    bases = rdap.bootstrap().bases_for(config.domain)
    if not bases:
        tld = config.domain.rsplit(".", 1)[-1]
        return _unmeasured(
            conn,
            started,
            f"The .{tld} registry publishes no RDAP service; the expiry of {config.domain} was not checked",
        )
    try:
        async with asyncio.timeout_at(deadline):
            data = await _answer(conn, bases[0], config.domain)
    except CheckFailed as failed:
        if failed.kind is FailureKind.BLOCKED_ADDRESS:
            return conn.finished(
                started, ProbeOutcome(status=Status.DOWN, kind=failed.kind, reason=failed.reason)
            )
        if failed.http_status == 404:
            reason = f"The registry has no registration for {config.domain} (RDAP answered 404)"
            outcome = ProbeOutcome(
                status=Status.DOWN, kind=FailureKind.DOMAIN_EXPIRED, reason=reason, http_status=404
            )
            return conn.finished(started, outcome)
        return _unmeasured(
            conn, started, f"The registry's RDAP service failed ({failed.reason}); the expiry was not checked"
        )
    except TimeoutError:
        return _unmeasured(
            conn,
            started,
            f"The registry's RDAP service did not answer within {config.timeout:g} s; the expiry was not checked",
        )
    try:
        registration = rdap.registration_of(data)
    except ValueError as exc:
        return _unmeasured(
            conn, started, f"The registry's answer was not usable ({exc}); the expiry was not checked"
        )
    details: dict[str, Any] = {
        "registry": bases[0],
        "expires_at": registration.expires_at.isoformat() if registration.expires_at else None,
        "registrar": registration.registrar,
        "statuses": list(registration.statuses),
    }
    now = datetime.now(UTC)
    if registration.expires_at is None:
        warning = f"The registry publishes no expiry date for {config.domain}; it was not checked"
        return conn.finished(started, ProbeOutcome(status=Status.UP, warnings=(warning,), details=details))
    details["days_left"] = (registration.expires_at - now).days
    status, kind, reason = judge(config, registration.expires_at, now=now)
    return conn.finished(started, ProbeOutcome(status=status, kind=kind, reason=reason, details=details))


async def _answer(conn: Connection, base: str, domain: str) -> Any:
    """Return the registry's JSON answer for ``domain``, from the cache while it is fresh."""
    key = (base, domain)
    cached = _cache.get(key)
    if cached is not None and time.monotonic() - cached[0] < CACHE_SECONDS:
        return cached[1]
    url = httpx.URL(base).join(f"domain/{domain}")
    for _hop in range(MAX_REDIRECTS + 1):
        response = await conn.send("GET", url, headers=[("Accept", RDAP_ACCEPT)])
        if response.status_code in REDIRECT_STATUSES:
            await conn.discard(response)
            url = redirect_target(url, response)
            continue
        if response.status_code != 200:
            await conn.discard(response)
            raise CheckFailed(
                FailureKind.HTTP_STATUS, f"HTTP {response.status_code}", http_status=response.status_code
            )
        body = await conn.read_body(response, MAX_ANSWER_BYTES)
        conn.check_deadline()
        try:
            data = read_json(body)
        except ValueError:
            raise CheckFailed(FailureKind.PROTOCOL, "the answer is not JSON") from None
        except JsonTooDeep as exc:
            raise CheckFailed(FailureKind.PROTOCOL, f"the answer {exc}") from None
        _cache[key] = (time.monotonic(), data)
        return data
    raise CheckFailed(FailureKind.REDIRECT_REFUSED, f"more than {MAX_REDIRECTS} redirects")


def _unmeasured(conn: Connection, started: float, warning: str) -> ProbeOutcome:
    """Return the up outcome of a run that could not measure the expiry, saying what was not checked."""
    return conn.finished(
        started, ProbeOutcome(status=Status.UP, warnings=(warning,), details={"measured": False})
    )


DOMAIN = register(
    CheckKind(
        number=6,
        name="domain",
        title="Domain check",
        config_type=DomainConfig,
        parse=parse_domain_config,
        to_api=domain_config_to_api,
        schema=CONFIG_SCHEMA,
        run=check_domain,
        form=FORM,
        min_interval_seconds=MIN_INTERVAL_SECONDS,
    )
)
