"""Read a TLS leaf certificate and judge it: the one place HTTPS, MCP and TLS checks share.

:func:`parse` turns the DER bytes a handshake received into a :class:`Certificate` (subject,
names, issuer, dates, serial, fingerprint), :func:`describe` into the JSON dict results keep as
``details["certificate"]``, and :func:`judge` decides what a check says about it: down when it
is expired, not yet valid, its chain does not verify or its name does not match; degraded when
it expires within the warning window; up otherwise. All three are pure (no sockets, no clock
of their own): ``now`` comes from the caller, by default :func:`utc_now`, which tests replace.

Everything read from a certificate was written by whoever made it, so each text is put on one
line, cut, and lists are capped.
"""

from __future__ import annotations

import functools
import ipaddress
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.x509.oid import ExtensionOID, NameOID

from probes.redact import clip
from probes.types import FailureKind, Status

MAX_NAMES = 50
MAX_TEXT = 200
DEFAULT_WARN_DAYS = 14
_SPACE = re.compile(r"\s+")


def utc_now() -> datetime:
    """Return the time now, in UTC: what days left are counted from (tests replace it)."""
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Certificate:
    """Hold what a leaf certificate says, its texts cleaned."""

    subject: str
    common_name: str | None
    names: tuple[str, ...]  # subjectAltName DNS names and IP addresses, capped at MAX_NAMES
    issuer: str
    not_before: datetime
    not_after: datetime
    serial: str  # lower-case hex
    sha256: str  # upper-case hex pairs joined by ':'
    self_issued: bool

    @property
    def shown_names(self) -> str:
        """Return the names the certificate is for, as a reason shows them ("a.example, b.example")."""
        names = self.names or ((self.common_name,) if self.common_name else ())
        if not names:
            return "no name"
        shown = ", ".join(names[:3])
        return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")


class Problem(StrEnum):
    """Name why a certificate did not verify, from OpenSSL's verify code."""

    EXPIRED = "expired"
    NOT_YET_VALID = "not_yet_valid"
    SELF_SIGNED = "self_signed"
    UNTRUSTED_ROOT = "untrusted_root"
    INCOMPLETE_CHAIN = "incomplete_chain"
    NAME_MISMATCH = "name_mismatch"
    OTHER = "other"


# OpenSSL's X509_V_ERR_* codes (include/openssl/x509_vfy.h), stable across versions.
_PROBLEMS = {
    2: Problem.INCOMPLETE_CHAIN,  # unable to get issuer certificate
    9: Problem.NOT_YET_VALID,
    10: Problem.EXPIRED,
    18: Problem.SELF_SIGNED,  # depth zero self-signed certificate
    19: Problem.UNTRUSTED_ROOT,  # self-signed certificate in certificate chain
    20: Problem.INCOMPLETE_CHAIN,  # unable to get local issuer certificate
    21: Problem.INCOMPLETE_CHAIN,  # unable to verify the first certificate
    62: Problem.NAME_MISMATCH,  # hostname mismatch
    64: Problem.NAME_MISMATCH,  # IP address mismatch
}


def problem_of(verify_code: int | None) -> Problem:
    """Return the problem OpenSSL's verify code names (OTHER for the rest)."""
    return _PROBLEMS.get(verify_code or 0, Problem.OTHER)


@dataclass(frozen=True, slots=True)
class Failure:
    """Say why a handshake's verification failed: OpenSSL's code and its words."""

    code: int | None
    message: str

    @property
    def problem(self) -> Problem:
        return problem_of(self.code)


@dataclass(frozen=True, slots=True)
class Verdict:
    status: Status
    kind: FailureKind | None = None
    reason: str = ""


def _clean(text: str, limit: int = MAX_TEXT) -> str:
    cleaned = "".join(ch if ch.isprintable() else " " for ch in text[: limit * 4])
    return clip(_SPACE.sub(" ", cleaned).strip(), limit)


@functools.lru_cache(maxsize=512)
def parse(der: bytes) -> Certificate | None:
    """Return what the DER certificate says, or None when it does not parse.

    Cached: the checks of one host (and every HTTPS check of a batch) meet the same few certificates.
    """
    try:
        cert = x509.load_der_x509_certificate(der)
        subject = cert.subject.rfc4514_string()
        issuer = cert.issuer.rfc4514_string()
        common = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        common_name = str(common[0].value) if common else None
        names = _alt_names(cert)
        return Certificate(
            subject=_clean(subject),
            common_name=_clean(common_name) if common_name else None,
            names=names,
            issuer=_clean(issuer),
            not_before=cert.not_valid_before_utc,
            not_after=cert.not_valid_after_utc,
            serial=f"{cert.serial_number:x}",
            sha256=cert.fingerprint(hashes.SHA256()).hex(":").upper(),
            self_issued=cert.subject == cert.issuer,
        )
    except ValueError:
        return None


def _alt_names(cert: x509.Certificate) -> tuple[str, ...]:
    try:
        extension = cert.extensions.get_extension_for_oid(ExtensionOID.SUBJECT_ALTERNATIVE_NAME)
    except x509.ExtensionNotFound:
        return ()
    value = extension.value
    assert isinstance(value, x509.SubjectAlternativeName)
    names: list[str] = [_clean(name, 253) for name in value.get_values_for_type(x509.DNSName)]
    names += [str(address) for address in value.get_values_for_type(x509.IPAddress)]
    return tuple(names[:MAX_NAMES])


def days_left(certificate: Certificate, now: datetime) -> int:
    """Return the whole days until the certificate expires (negative once it has)."""
    return math.floor((certificate.not_after - now) / timedelta(days=1))


def matches(certificate: Certificate, server_name: str) -> bool:
    """Return whether the certificate is for ``server_name`` (RFC 6125: SANs, one leftmost wildcard).

    The common name counts only when the certificate has no SAN at all, as browsers do.
    """
    name = server_name.lower().rstrip(".")
    try:
        address: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(name)
    except ValueError:
        address = None
    names = certificate.names or ((certificate.common_name,) if certificate.common_name else ())
    for pattern in names:
        if address is not None:
            try:
                if ipaddress.ip_address(pattern) == address:
                    return True
            except ValueError:
                continue
            continue
        pattern = pattern.lower().rstrip(".")
        if pattern == name:
            return True
        if pattern.startswith("*.") and "." in name:
            head, _, rest = name.partition(".")
            if head and rest == pattern[2:] and "." in rest:
                return True
    return False


def _date(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _days(count: int) -> str:
    return "1 day" if count == 1 else f"{count} days"


def describe(
    certificate: Certificate,
    *,
    now: datetime,
    server_name: str,
    failure: Failure | None = None,
) -> dict[str, Any]:
    """Return the JSON dict results keep as ``details["certificate"]``.

    ``chain_valid`` is True when the handshake verified, False when the chain is what failed,
    None when OpenSSL stopped before judging it (a name mismatch is found before the trust).
    """
    if failure is None:
        chain_valid: bool | None = True
    elif failure.problem in (Problem.SELF_SIGNED, Problem.UNTRUSTED_ROOT, Problem.INCOMPLETE_CHAIN):
        chain_valid = False
    elif failure.problem in (Problem.EXPIRED, Problem.NOT_YET_VALID):
        chain_valid = True  # OpenSSL checks the dates after the chain and its trust
    else:
        chain_valid = None
    return {
        "subject": certificate.subject,
        "common_name": certificate.common_name,
        "names": list(certificate.names),
        "issuer": certificate.issuer,
        "not_before": certificate.not_before.isoformat(),
        "not_after": certificate.not_after.isoformat(),
        "days_left": days_left(certificate, now),
        "serial": certificate.serial,
        "sha256": certificate.sha256,
        "chain_valid": chain_valid,
        "name_matches": matches(certificate, server_name),
    }


def judge(
    certificate: Certificate | None,
    *,
    now: datetime,
    server_name: str,
    warn_days: int = DEFAULT_WARN_DAYS,
    failure: Failure | None = None,
) -> Verdict:
    """Return what a check says about a certificate the handshake verified (``failure`` None) or not.

    ``certificate`` is None only when it could not be read at all; the verdict then rests on
    OpenSSL's words.
    """
    if failure is not None:
        return Verdict(
            Status.DOWN, FailureKind.CERTIFICATE, _failure_words(certificate, now, server_name, failure)
        )
    if certificate is None:
        return Verdict(Status.UP)
    if now >= certificate.not_after:
        return Verdict(Status.DOWN, FailureKind.CERTIFICATE, _expired_words(certificate, now))
    if now < certificate.not_before:
        return Verdict(Status.DOWN, FailureKind.CERTIFICATE, _not_yet_words(certificate, now))
    return expiry_warning(certificate, now=now, warn_days=warn_days) or Verdict(Status.UP)


def expiry_warning(certificate: Certificate, *, now: datetime, warn_days: int) -> Verdict | None:
    """Return the degraded verdict of a certificate that expires within ``warn_days`` (0: never), else None.

    For a certificate whose handshake verified: HTTPS checks (HTTP, MCP) judge only this, as the
    connection already failed on every other problem. A certificate past its end by ``now``
    (the handshake verified a moment before, or a clock set apart) still expires "in less than
    a day": OpenSSL, not this clock, decides that it is expired.
    """
    if warn_days <= 0 or certificate.not_after - now > timedelta(days=warn_days):
        return None
    days = max(days_left(certificate, now), 0)
    when = "in less than a day" if days < 1 else f"in {_days(days)}"
    return Verdict(
        Status.DEGRADED,
        FailureKind.CERTIFICATE_EXPIRING,
        f"Certificate expires {when} ({_date(certificate.not_after)})",
    )


def _expired_words(certificate: Certificate, now: datetime) -> str:
    ago = math.floor((now - certificate.not_after) / timedelta(days=1))
    when = "less than a day ago" if ago < 1 else f"{_days(ago)} ago"
    return f"Certificate expired {when} (not after {_date(certificate.not_after)})"


def _not_yet_words(certificate: Certificate, now: datetime) -> str:
    ahead = math.ceil((certificate.not_before - now) / timedelta(days=1))
    when = f"in {_days(ahead)}" if ahead > 1 else "within a day"
    return f"Certificate is not valid yet: it starts {when} (not before {_date(certificate.not_before)})"


def _failure_words(certificate: Certificate | None, now: datetime, server_name: str, failure: Failure) -> str:
    problem = failure.problem
    if certificate is None:
        return f"Certificate does not verify: {_clean(failure.message) or problem.value.replace('_', ' ')}"
    if problem is Problem.EXPIRED:
        return _expired_words(certificate, now)
    if problem is Problem.NOT_YET_VALID:
        return _not_yet_words(certificate, now)
    if problem is Problem.NAME_MISMATCH:
        return f"Certificate is for {certificate.shown_names}, not {server_name}"
    if problem is Problem.SELF_SIGNED:
        return f"Certificate is self-signed ({certificate.subject}), not issued by a trusted authority"
    if problem is Problem.UNTRUSTED_ROOT:
        return f"Certificate chain ends in an untrusted root: issued by {certificate.issuer}"
    if problem is Problem.INCOMPLETE_CHAIN:
        return (
            f"Certificate chain does not verify: its issuer {certificate.issuer} is neither sent by "
            "the server nor trusted (an incomplete chain, or a private authority)"
        )
    return f"Certificate does not verify: {_clean(failure.message) or 'unknown reason'}"
