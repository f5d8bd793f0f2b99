"""The DNS record check (type 4): ask a nameserver for a name's records and judge the answer.

The check sends one query (A, AAAA, CNAME, MX, TXT, NS, SOA or CAA) over UDP, and again over
TCP when the UDP answer comes back truncated, with dnspython's asyncio queries on the check's
own loop (no thread pool, no system resolver). It goes to the nameserver the config names,
which passes the address guard like any other target, or else to the resolvers Uptimy is
configured with (``ProbeEnv.nameservers``; empty: resolv.conf's), which are the operator's own
and are not guarded. The answer's records are normalized (names lower-case with their final
dot, MX as "10 mail.example.", a TXT record's strings joined, CAA as ``0 issue "ca.example"``)
so that the expected values compare as people write them.

Down with ``dns`` when the server answers an error (NXDOMAIN, SERVFAIL, REFUSED), no record of
the type, or nothing at all; ``dns_answer`` when the records lack the expected values or a
DNSSEC-validated answer was required and the resolver did not set the AD bit; ``timeout``
when no server answered within the check's time.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import time
from dataclasses import dataclass, field, replace
from typing import Any

import dns.asyncquery
import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.rdata
import dns.rdatatype
import dns.resolver

from probes.checks.form import FormField, Widget
from probes.checks.registry import CheckKind, register
from probes.config import (
    DEFAULT_TIMEOUT,
    TIMEOUT_SCHEMA,
    ConfigError,
    boolean_field,
    config_fields,
    text_problem,
    timeout_field,
)
from probes.connection import CheckFailed, Connection, sanitize
from probes.redact import clip
from probes.types import FailureKind, Headers, ProbeOutcome, Status, Timings
from probes.wire import os_error_words

RECORD_TYPES = ("A", "AAAA", "CNAME", "MX", "TXT", "NS", "SOA", "CAA")
EXPECT_OPS = ("contains", "equals")
CONFIG_KEYS = frozenset({"name", "recordType", "nameserver", "expect", "dnssec", "timeout"})
DNS_PORT = 53
MAX_EXPECTED = 50
MAX_VALUE_CHARS = 2048
# What the result keeps of an answer: its first records, each cut.
MAX_ANSWER_RECORDS = 50
MAX_RECORD_CHARS = 512
# How many records a reason names before "and N more".
SHOWN_RECORDS = 5
# The EDNS buffer size of DNS Flag Day 2020: answers larger than this come back truncated, and
# the check asks again over TCP. A TCP answer is at most 64 KiB by its length prefix.
EDNS_PAYLOAD = 1232
# A label as DNS names are written for these records: letters, digits, hyphens and the
# underscores of service names (_dmarc, _acme-challenge).
_LABEL = re.compile(r"^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$")
_CAA = re.compile(r"^(\d{1,3})\s+([A-Za-z0-9]{1,15})\s+(.*)$", re.DOTALL)

_RCODE_WORDS = {
    dns.rcode.NXDOMAIN: "the name does not exist",
    dns.rcode.SERVFAIL: "the server failed to answer",
    dns.rcode.REFUSED: "the server refused the query",
    dns.rcode.FORMERR: "the server could not read the query",
    dns.rcode.NOTIMP: "the server does not support the query",
}


@dataclass(frozen=True, slots=True)
class Expectation:
    """What the answer must hold: ``contains`` every value, or ``equals`` the set of values."""

    op: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DnsConfig:
    """Hold one DNS check's settings, already validated by :func:`parse_dns_config`."""

    name: str
    record_type: str = "A"
    # The nameserver's address and port, or None: the configured resolvers.
    nameserver: tuple[str, int] | None = None
    expect: Expectation | None = None
    dnssec: bool = False
    timeout: float = float(DEFAULT_TIMEOUT)
    headers: Headers = field(default=())

    @property
    def target(self) -> str:
        where = f" @{server_words(*self.nameserver)}" if self.nameserver else ""
        return f"{self.name} {self.record_type}{where}"

    @property
    def host(self) -> str:
        # The per-host cap is the nameserver's: it is what a batch of these checks would crowd.
        return self.nameserver[0] if self.nameserver else ""


def server_words(address: str, port: int) -> str:
    """Return ``address:port`` as it is written ("192.0.2.53:53", "[2001:db8::53]:53")."""
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


# --- config: parse, API shape, schema ------------------------------------------------------


def parse_dns_config(raw: object) -> DnsConfig:
    """Return a DnsConfig from the DNS check's API mapping; raise ConfigError naming each bad field."""
    data, errors = config_fields(raw, CONFIG_KEYS)
    name = _name_field(data, errors)
    record_type = data.get("recordType", "A")
    if not isinstance(record_type, str) or record_type.strip().upper() not in RECORD_TYPES:
        errors["recordType"] = f"Must be one of {', '.join(RECORD_TYPES)}."
        record_type = "A"
    record_type = record_type.strip().upper()
    nameserver = _nameserver_field(data.get("nameserver"), errors)
    expect = _expect_field(data.get("expect"), record_type if "recordType" not in errors else None, errors)
    dnssec = boolean_field(data, "dnssec", False, errors)
    timeout = timeout_field(data.get("timeout", DEFAULT_TIMEOUT), errors)
    if errors:
        raise ConfigError(errors)
    return DnsConfig(
        name=name,
        record_type=record_type,
        nameserver=nameserver,
        expect=expect,
        dnssec=dnssec,
        timeout=timeout,
    )


def _name_field(data: dict[str, Any], errors: dict[str, str]) -> str:
    if "name" not in data:
        errors["name"] = "This field is required."
        return ""
    try:
        return dns_name(data["name"]).to_text(omit_final_dot=True)
    except ValueError as exc:
        errors["name"] = str(exc)
        return ""


def dns_name(raw: object) -> dns.name.Name:
    """Return the absolute, lower-case DNS name ``raw`` spells (IDNA for non-ASCII); raise ValueError."""
    if not isinstance(raw, str) or not raw.strip():
        raise ValueError("Enter a DNS name, e.g. example.com.")
    text = raw.strip()
    if text_problem(text) or any(ch.isspace() for ch in text) or "\\" in text:
        raise ValueError("Must not contain spaces, backslashes or control characters.")
    if len(text) > 254:
        raise ValueError("Must be at most 253 characters.")
    try:
        name = dns.name.from_text(text) if text.isascii() else dns.name.from_unicode(text)
    except (dns.exception.DNSException, UnicodeError, ValueError):
        raise ValueError(
            "Not a valid DNS name (an empty or too long label, or characters IDNA refuses)."
        ) from None
    labels = [label.decode("ascii").lower() for label in name.labels if label]
    if not labels:
        raise ValueError("Enter a DNS name, not the root.")
    for label in labels:
        if not _LABEL.match(label):
            raise ValueError(
                f"Not a valid DNS name: the label {label[:63]!r} has characters DNS names can't hold."
            )
    return dns.name.from_text(".".join(labels) + ".")


def _nameserver_field(raw: object, errors: dict[str, str]) -> tuple[str, int] | None:
    if raw is None or raw == "":
        return None
    try:
        return parse_server(raw)
    except ValueError as exc:
        errors["nameserver"] = str(exc)
        return None


def parse_server(raw: object) -> tuple[str, int]:
    """Return (address, port) from "ip", "ip:port" or "[ipv6]:port"; raise ValueError for anything else."""
    message = (
        'Must be an IP address, optionally with a port ("192.0.2.53", "192.0.2.53:5353", '
        '"[2001:db8::53]:5353"); a host name is not allowed (finding it would need another DNS server).'
    )
    if not isinstance(raw, str) or not raw.strip() or text_problem(raw):
        raise ValueError(message)
    text = raw.strip()
    host, port_text = text, ""
    if text.startswith("["):
        host, close, rest = text[1:].partition("]")
        if not close or (rest and not rest.startswith(":")):
            raise ValueError(message)
        port_text = rest[1:] if rest else ""
        if rest and not port_text:
            raise ValueError(message)
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
        if not port_text:
            raise ValueError(message)
    if "%" in host:
        raise ValueError("An IPv6 zone (%…) names an interface of one machine; use a routable address.")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise ValueError(message) from None
    port = DNS_PORT
    if port_text:
        if not (port_text.isascii() and port_text.isdigit()) or not 1 <= int(port_text) <= 65535:
            raise ValueError("The port must be a number from 1 to 65535.")
        port = int(port_text)
    return str(address), port


def _expect_field(raw: object, record_type: str | None, errors: dict[str, str]) -> Expectation | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) - {"op", "values"}:
        errors["expect"] = 'Must be an object {"op": "contains" or "equals", "values": [...]}, or null.'
        return None
    op = raw.get("op", "contains")
    if op not in EXPECT_OPS:
        errors["expect.op"] = f"Must be one of {', '.join(EXPECT_OPS)}."
    values = raw.get("values")
    if not isinstance(values, list) or not values or len(values) > MAX_EXPECTED:
        errors["expect.values"] = f"Must be a list of 1 to {MAX_EXPECTED} values."
        return None
    if record_type is None:
        return None  # the values are read by the record type, which is wrong
    normalized: list[str] = []
    for value in values:
        try:
            item = expected_value(record_type, value)
        except ValueError as exc:
            errors["expect.values"] = str(exc)
            return None
        if item not in normalized:
            normalized.append(item)
    if "expect.op" in errors:
        return None
    return Expectation(op=str(op), values=tuple(normalized))


def expected_value(record_type: str, value: object) -> str:
    """Return ``value`` in the form the answer's records are normalized to; raise ValueError naming it."""
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_VALUE_CHARS:
        raise ValueError(f"Each value must be a non-empty string of at most {MAX_VALUE_CHARS} characters.")
    if text_problem(value):
        raise ValueError("A value must not contain control characters.")
    text = value.strip()
    shown = repr(text[:100])
    if record_type in ("A", "AAAA"):
        kind = ipaddress.IPv4Address if record_type == "A" else ipaddress.IPv6Address
        try:
            return str(kind(text))
        except ValueError:
            raise ValueError(f"{shown} is not an IPv{4 if record_type == 'A' else 6} address.") from None
    if record_type in ("CNAME", "NS"):
        return _name_value(text, shown)
    if record_type == "MX":
        preference, _, exchange = text.partition(" ")
        if (
            not (preference.isascii() and preference.isdigit())
            or int(preference) > 65535
            or not exchange.strip()
        ):
            raise ValueError(
                f'{shown} is not an MX value: write the preference and the host, "10 mail.example.com".'
            )
        return f"{int(preference)} {_name_value(exchange.strip(), shown)}"
    if record_type == "SOA":
        parts = text.split()
        if len(parts) != 7 or not all(part.isascii() and part.isdigit() for part in parts[2:]):
            raise ValueError(
                f"{shown} is not an SOA value: write mname, rname, serial, refresh, retry, expire and minimum."
            )
        return " ".join(
            [_name_value(parts[0], shown), _name_value(parts[1], shown), *(str(int(p)) for p in parts[2:])]
        )
    if record_type == "CAA":
        match = _CAA.match(text)
        if match is None or int(match.group(1)) > 255:
            raise ValueError(f'{shown} is not a CAA value: write flags, tag and value, 0 issue "ca.example".')
        caa_value = match.group(3).strip()
        if len(caa_value) >= 2 and caa_value[0] == caa_value[-1] == '"':
            caa_value = caa_value[1:-1]
        return f'{int(match.group(1))} {match.group(2).lower()} "{caa_value}"'
    return value  # TXT: the text itself, compared exactly


def _name_value(text: str, shown: str) -> str:
    try:
        return dns_name(text).to_text()
    except ValueError:
        raise ValueError(f"{shown} is not a DNS name.") from None


def dns_config_to_api(config: DnsConfig) -> dict[str, Any]:
    """Return the API shape of ``config``."""
    nameserver = None
    if config.nameserver is not None:
        address, port = config.nameserver
        nameserver = address if port == DNS_PORT else server_words(address, port)
    return {
        "name": config.name,
        "recordType": config.record_type,
        "nameserver": nameserver,
        "expect": (
            None if config.expect is None else {"op": config.expect.op, "values": list(config.expect.values)}
        ),
        "dnssec": config.dnssec,
        "timeout": config.timeout,
    }


CONFIG_SCHEMA: dict[str, Any] = {
    "title": "DNS record check config (type 4)",
    "type": "object",
    "additionalProperties": False,
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "description": "The DNS name to query.", "example": "example.com"},
        "recordType": {"type": "string", "enum": list(RECORD_TYPES), "default": "A"},
        "nameserver": {
            "type": ["string", "null"],
            "description": (
                'The nameserver to ask: an IP address, optionally with a port ("192.0.2.53:5353"); '
                "null: Uptimy's resolvers. Private and loopback addresses are refused."
            ),
        },
        "expect": {
            "type": ["object", "null"],
            "additionalProperties": False,
            "required": ["values"],
            "properties": {
                "op": {"type": "string", "enum": list(EXPECT_OPS), "default": "contains"},
                "values": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "maxItems": MAX_EXPECTED,
                },
            },
            "description": (
                'Values the answer must contain (or equal, as a set): addresses, names ("mail.example.com"), '
                'MX as "10 mail.example.com", TXT as the joined text, CAA as \'0 issue "ca.example"\'.'
            ),
        },
        "dnssec": {
            "type": "boolean",
            "default": False,
            "description": "Require a DNSSEC-validated answer (the AD bit from a validating resolver).",
        },
        "timeout": TIMEOUT_SCHEMA,
    },
}


FORM = (
    FormField("name", "dns_name", "Record name", Widget.TEXT, placeholder="example.com", required=True),
    FormField("recordType", "record_type", "Record type", Widget.CHOICE, choices=RECORD_TYPES),
    FormField(
        "nameserver",
        "nameserver",
        "Nameserver",
        Widget.TEXT,
        help="An IP address, optionally with a port (192.0.2.53:5353); empty: Uptimy's resolvers.",
    ),
    FormField(
        "expect",
        "dns_expect",
        "Expected answer",
        Widget.JSON,
        help='{"op": "contains" or "equals", "values": ["192.0.2.1"]}; empty: any answer.',
        placeholder='{"op": "contains", "values": ["192.0.2.1"]}',
    ),
    FormField("dnssec", "dnssec", "Require DNSSEC (the AD bit)", Widget.CHECKBOX),
    FormField("timeout", "timeout", "Timeout (seconds)", Widget.NUMBER),
)


# --- the check -------------------------------------------------------------------------------


_system_servers: list[tuple[str, int]] | None = None


def system_nameservers() -> list[tuple[str, int]]:
    """Return resolv.conf's nameservers (read once per process, as the c-ares channels are)."""
    global _system_servers
    if _system_servers is None:
        try:
            resolver = dns.resolver.Resolver(configure=True)
        except dns.resolver.NoResolverConfiguration:
            return []
        _system_servers = [(str(server), resolver.port) for server in resolver.nameservers]
    return list(_system_servers)


@dataclass(slots=True)
class _Progress:
    """What the run learned so far: the timeout sentence and the details need it."""

    server: str = ""
    dns_ms: float | None = None


async def check_dns(config: DnsConfig, conn: Connection, *, deadline: float) -> ProbeOutcome:
    """Return the outcome of one DNS check; ``deadline`` is the loop time the whole check ends by."""
    started = time.perf_counter()
    progress = _Progress()
    try:
        async with asyncio.timeout_at(deadline):
            outcome = await _run(config, conn, progress, deadline)
    except CheckFailed as failed:
        outcome = ProbeOutcome(status=Status.DOWN, kind=failed.kind, reason=failed.reason)
    except TimeoutError:
        outcome = _timed_out(config, progress.server)
    total_ms = (time.perf_counter() - started) * 1000
    timings = Timings(dns_ms=_round(progress.dns_ms), total_ms=_round(total_ms))
    return replace(outcome, timings=timings)


def _timed_out(config: DnsConfig, server: str) -> ProbeOutcome:
    at = f" at {server}" if server else ""
    return ProbeOutcome(
        status=Status.DOWN,
        kind=FailureKind.TIMEOUT,
        reason=f"DNS query for {config.record_type} {config.name}{at} got no answer within {config.timeout:g} s",
    )


async def _servers(config: DnsConfig, conn: Connection) -> list[tuple[str, int]]:
    """Return the nameservers to ask, in order: the config's (guarded), or the configured resolvers."""
    if config.nameserver is not None:
        address, port = config.nameserver
        await conn.addresses(address, port)  # the address guard: CheckFailed blocked_address
        return [config.nameserver]
    servers: list[tuple[str, int]] = []
    for text in conn.nameservers:
        try:
            servers.append(parse_server(text))
        except ValueError:
            continue
    servers = servers or system_nameservers()
    if not servers:
        raise CheckFailed(FailureKind.DNS, "No DNS servers are configured (resolv.conf names none)")
    return servers


async def _run(config: DnsConfig, conn: Connection, progress: _Progress, deadline: float) -> ProbeOutcome:
    servers = await _servers(config, conn)
    rdtype = dns.rdatatype.from_text(config.record_type)
    query = dns.message.make_query(
        dns.name.from_text(config.name), rdtype, use_edns=0, payload=EDNS_PAYLOAD, want_dnssec=config.dnssec
    )
    # RFC 6840 §5.7: a query with AD set asks a validating resolver to say whether it validated.
    query.flags |= dns.flags.AD
    loop = asyncio.get_running_loop()
    failures: list[str] = []
    timeouts = 0
    for index, (address, port) in enumerate(servers):
        progress.server = server_words(address, port)
        # Each server gets its share of the time left, the last one all of it.
        budget = max(0.05, (deadline - loop.time()) / (len(servers) - index))
        started = time.perf_counter()
        try:
            response, used_tcp = await dns.asyncquery.udp_with_fallback(
                query, address, timeout=budget, port=port, ignore_unexpected=True
            )
        except dns.exception.Timeout:
            timeouts += 1
            failures.append(f"{progress.server} did not answer")
            continue
        except OSError as exc:
            failures.append(f"{progress.server}: {os_error_words(exc)}")
            continue
        except dns.exception.DNSException as exc:
            failures.append(
                f"{progress.server} sent an answer that is not valid DNS ({sanitize(str(exc), 100)})"
            )
            continue
        progress.dns_ms = (time.perf_counter() - started) * 1000
        conn.check_deadline()
        return judge(config, response, server=progress.server, used_tcp=used_tcp)
    if timeouts == len(servers):
        return _timed_out(config, progress.server if len(servers) == 1 else "")
    return ProbeOutcome(
        status=Status.DOWN,
        kind=FailureKind.DNS,
        reason=f"DNS query for {config.record_type} {config.name} failed: {'; '.join(failures)}",
    )


def judge(config: DnsConfig, response: dns.message.Message, *, server: str, used_tcp: bool) -> ProbeOutcome:
    """Return the outcome a DNS answer earns: its rcode, its records, the AD bit, the expected values."""
    rcode = response.rcode()
    rdtype = dns.rdatatype.from_text(config.record_type)
    records: list[str] = []
    for rrset in response.answer:
        if rrset.rdtype != rdtype:
            continue  # the CNAMEs an A answer went through, the RRSIGs of a DNSSEC answer
        for rdata in rrset:
            record = normalized(rdata)
            if record not in records:
                records.append(record)
    ad = bool(response.flags & dns.flags.AD)
    details: dict[str, Any] = {
        "answer": [
            clip(sanitize_record(record), MAX_RECORD_CHARS) for record in records[:MAX_ANSWER_RECORDS]
        ],
        "rcode": dns.rcode.to_text(rcode),
        "ad": ad,
        "nameserver": server,
        "truncated_fallback": used_tcp,
    }
    query_words = f"{config.record_type} {config.name}"

    def down(kind: FailureKind, reason: str) -> ProbeOutcome:
        return ProbeOutcome(status=Status.DOWN, kind=kind, reason=reason, details=details)

    if rcode != dns.rcode.NOERROR:
        words = _RCODE_WORDS.get(rcode, "the server answered an error")
        return down(
            FailureKind.DNS, f"DNS query for {query_words} at {server}: {words} ({dns.rcode.to_text(rcode)})"
        )
    if not records:
        return down(
            FailureKind.DNS,
            f"{config.name} has no {config.record_type} records (NOERROR, empty answer) at {server}",
        )
    if config.dnssec and not ad:
        return down(
            FailureKind.DNS_ANSWER,
            f"The {config.record_type} answer for {config.name} is not DNSSEC-validated: "
            f"{server} did not set the AD bit",
        )
    expect = config.expect
    if expect is not None:
        seen = _shown(records)
        if expect.op == "contains":
            missing = [value for value in expect.values if value not in records]
            if missing:
                return down(
                    FailureKind.DNS_ANSWER,
                    f"{config.record_type} answer was {seen}, expected to contain {_shown(missing)}",
                )
        elif set(records) != set(expect.values):
            return down(
                FailureKind.DNS_ANSWER,
                f"{config.record_type} answer was {seen}, expected to equal {_shown(list(expect.values))}",
            )
    return ProbeOutcome(status=Status.UP, details=details)


def normalized(rdata: dns.rdata.Rdata) -> str:
    """Return one record as expected values are written: lower-case names with their final dot."""
    rdtype = rdata.rdtype
    if rdtype in (dns.rdatatype.A, dns.rdatatype.AAAA):
        return str(ipaddress.ip_address(rdata.address))  # type: ignore[attr-defined]
    if rdtype in (dns.rdatatype.CNAME, dns.rdatatype.NS):
        return _name_text(rdata.target)  # type: ignore[attr-defined]
    if rdtype == dns.rdatatype.MX:
        return f"{rdata.preference} {_name_text(rdata.exchange)}"  # type: ignore[attr-defined]
    if rdtype == dns.rdatatype.TXT:
        return b"".join(rdata.strings).decode("utf-8", errors="replace")  # type: ignore[attr-defined]
    if rdtype == dns.rdatatype.SOA:
        soa: Any = rdata
        numbers = (soa.serial, soa.refresh, soa.retry, soa.expire, soa.minimum)
        return " ".join([_name_text(soa.mname), _name_text(soa.rname), *(str(n) for n in numbers)])
    if rdtype == dns.rdatatype.CAA:
        caa: Any = rdata
        tag = caa.tag.decode("ascii", errors="replace").lower()
        return f'{caa.flags} {tag} "{caa.value.decode("utf-8", errors="replace")}"'
    return rdata.to_text()


def _name_text(name: dns.name.Name) -> str:
    return name.to_text().lower()


def sanitize_record(record: str) -> str:
    """Return a record's text without control characters (a TXT record may hold any byte)."""
    return "".join(ch if ch.isprintable() else " " for ch in record[: MAX_RECORD_CHARS * 2])


def _shown(records: list[str]) -> str:
    shown = ", ".join(sanitize(record, 100) for record in records[:SHOWN_RECORDS])
    rest = len(records) - SHOWN_RECORDS
    return shown + (f" and {rest} more" if rest > 0 else "")


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


DNS = register(
    CheckKind(
        number=4,
        name="dns",
        title="DNS record check",
        config_type=DnsConfig,
        parse=parse_dns_config,
        to_api=dns_config_to_api,
        schema=CONFIG_SCHEMA,
        run=check_dns,
        form=FORM,
        address_fields=("nameserver",),
    )
)
