"""Find a domain's RDAP service and read its registration's expiry: pure, no network.

The registry that answers for a domain is found through IANA's bootstrap registry for DNS
(RFC 9224): a list of services, each a set of labels (TLDs, sometimes longer suffixes) and the
base URLs that answer for them. A snapshot ships in ``probes/data/rdap_dns.json``; a deployment
refreshes it (``manage.py refreshrdap``) and hands the fresh one to :func:`use_bootstrap`.
The expiry is the ``expiration`` event of the domain object (RFC 9083 §4.5).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from probes.jsonrpc import JsonTooDeep, read_json

SHIPPED_BOOTSTRAP = Path(__file__).with_name("data") / "rdap_dns.json"
# The bootstrap file is ~70 kB today; a refreshed one far past that is not IANA's.
MAX_BOOTSTRAP_BYTES = 2 * 1024 * 1024


class BootstrapInvalid(ValueError):
    """Say why a bootstrap document is not an RFC 9224 DNS registry."""


@dataclass(frozen=True, slots=True)
class Bootstrap:
    """Map domain suffixes to the RDAP base URLs that answer for them (RFC 9224 §4)."""

    publication: str
    services: Mapping[str, tuple[str, ...]]

    def bases_for(self, domain: str) -> tuple[str, ...]:
        """Return the base URLs for ``domain`` (the longest matching suffix wins), HTTPS first; () if none."""
        labels = domain.lower().rstrip(".").split(".")
        for start in range(len(labels)):
            bases = self.services.get(".".join(labels[start:]))
            if bases:
                return tuple(sorted(bases, key=lambda base: not base.startswith("https://")))
        return ()


def parse_bootstrap(document: bytes) -> Bootstrap:
    """Return the bootstrap a document describes; raise BootstrapInvalid naming what is wrong."""
    if len(document) > MAX_BOOTSTRAP_BYTES:
        raise BootstrapInvalid(f"larger than {MAX_BOOTSTRAP_BYTES // (1024 * 1024)} MiB")
    try:
        data = read_json(document)
    except ValueError as exc:
        raise BootstrapInvalid(f"not JSON ({exc})") from None
    except JsonTooDeep as exc:
        raise BootstrapInvalid(str(exc)) from None
    if not isinstance(data, Mapping) or not isinstance(data.get("services"), list):
        raise BootstrapInvalid('no "services" list')
    services: dict[str, tuple[str, ...]] = {}
    for position, service in enumerate(data["services"]):
        if not (
            isinstance(service, list)
            and len(service) == 2
            and all(isinstance(part, list) for part in service)
        ):
            raise BootstrapInvalid(f"services[{position}] is not a pair of lists")
        labels, urls = service
        bases = tuple(
            url if url.endswith("/") else url + "/"
            for url in urls
            if isinstance(url, str) and url.startswith(("https://", "http://"))
        )
        for label in labels:
            if isinstance(label, str) and label.strip("."):
                services[label.lower().strip(".")] = bases
    if not services:
        raise BootstrapInvalid("no service")
    publication = data.get("publication")
    return Bootstrap(publication if isinstance(publication, str) else "", services)


_current: Bootstrap | None = None


def bootstrap() -> Bootstrap:
    """Return the bootstrap in use: the one handed to :func:`use_bootstrap`, else the shipped snapshot."""
    global _current
    if _current is None:
        _current = parse_bootstrap(SHIPPED_BOOTSTRAP.read_bytes())
    return _current


def use_bootstrap(value: Bootstrap | None) -> None:
    """Make ``value`` the bootstrap every domain check reads (None: the shipped snapshot again)."""
    global _current
    _current = value


@dataclass(frozen=True, slots=True)
class Registration:
    """What a domain object says of its registration: its name, expiry, registrar and status words."""

    name: str
    expires_at: datetime | None
    registrar: str
    statuses: tuple[str, ...]


def registration_of(data: Any) -> Registration:
    """Return the registration an RDAP domain answer describes; missing parts are None or empty.

    Raises ValueError when the answer is not an RDAP domain object at all.
    """
    if not isinstance(data, Mapping) or data.get("objectClassName") != "domain":
        raise ValueError("the answer is not an RDAP domain object")
    expires = None
    for event in _list(data.get("events")):
        if isinstance(event, Mapping) and event.get("eventAction") == "expiration":
            expires = _instant(event.get("eventDate"))
            if expires is not None:
                break
    name = data.get("ldhName") or data.get("unicodeName") or ""
    statuses = tuple(str(item) for item in _list(data.get("status")) if isinstance(item, str))[:20]
    return Registration(str(name)[:253], expires, _registrar(data), statuses)


def _registrar(data: Mapping[str, Any]) -> str:
    """Return the registrar entity's name (its vCard ``fn``), or its handle, or ""."""
    for entity in _list(data.get("entities")):
        if not isinstance(entity, Mapping) or "registrar" not in _list(entity.get("roles")):
            continue
        card = _list(entity.get("vcardArray"))
        if len(card) == 2:
            for prop in _list(card[1]):
                if isinstance(prop, list) and len(prop) >= 4 and prop[0] == "fn" and isinstance(prop[3], str):
                    return prop[3][:200]
        handle = entity.get("handle")
        return str(handle)[:200] if isinstance(handle, str) else ""
    return ""


def _list(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list) else ()


def _instant(value: Any) -> datetime | None:
    """Return an RFC 3339 instant (RDAP's eventDate) as an aware UTC datetime, or None."""
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
