"""The certificate rules as pure functions: judge, name matching, parsing; and the TLS check's config."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from probes.certificates import Certificate, Failure, Problem, describe, judge, matches, parse, problem_of
from probes.checks.tls import TlsConfig, parse_tls_config, tls_config_to_api
from probes.config import ConfigError
from probes.types import FailureKind, Status

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def cert(
    *,
    names: tuple[str, ...] = ("a.example",),
    common_name: str | None = "a.example",
    not_before: timedelta = -10 * DAY,
    not_after: timedelta = 60 * DAY,
) -> Certificate:
    return Certificate(
        subject=f"CN={common_name}" if common_name else "O=Example",
        common_name=common_name,
        names=names,
        issuer="CN=Example CA",
        not_before=NOW + not_before,
        not_after=NOW + not_after,
        serial="1f",
        sha256="AB:CD",
        self_issued=False,
    )


@pytest.mark.parametrize(
    ("certificate", "warn_days", "status", "kind", "reason"),
    [
        (cert(), 14, Status.UP, None, ""),
        (cert(not_after=15 * DAY), 14, Status.UP, None, ""),
        (
            cert(not_after=14 * DAY),
            14,
            Status.DEGRADED,
            FailureKind.CERTIFICATE_EXPIRING,
            "Certificate expires in 14 days (2026-03-15 12:00 UTC)",
        ),
        (
            cert(not_after=DAY + timedelta(hours=1)),
            14,
            Status.DEGRADED,
            FailureKind.CERTIFICATE_EXPIRING,
            "Certificate expires in 1 day (2026-03-02 13:00 UTC)",
        ),
        (
            cert(not_after=timedelta(hours=5)),
            14,
            Status.DEGRADED,
            FailureKind.CERTIFICATE_EXPIRING,
            "Certificate expires in less than a day (2026-03-01 17:00 UTC)",
        ),
        (cert(not_after=timedelta(hours=5)), 0, Status.UP, None, ""),
        (
            cert(not_after=300 * DAY),
            365,
            Status.DEGRADED,
            FailureKind.CERTIFICATE_EXPIRING,
            "Certificate expires in 300 days",
        ),
        # Verified by OpenSSL, yet past its dates by the check's clock: the clock decides.
        (
            cert(not_after=-3 * DAY),
            14,
            Status.DOWN,
            FailureKind.CERTIFICATE,
            "Certificate expired 3 days ago (not after 2026-02-26 12:00 UTC)",
        ),
        (
            cert(not_after=-timedelta(hours=1)),
            14,
            Status.DOWN,
            FailureKind.CERTIFICATE,
            "Certificate expired less than a day ago",
        ),
        (
            cert(not_before=2 * DAY),
            14,
            Status.DOWN,
            FailureKind.CERTIFICATE,
            "Certificate is not valid yet: it starts in 2 days (not before 2026-03-03 12:00 UTC)",
        ),
        (None, 14, Status.UP, None, ""),
    ],
)
def test_judge_a_verified_certificate(certificate, warn_days, status, kind, reason):
    verdict = judge(certificate, now=NOW, server_name="a.example", warn_days=warn_days)

    assert (verdict.status, verdict.kind) == (status, kind)
    assert verdict.reason.startswith(reason)
    assert bool(verdict.reason) == bool(reason)


@pytest.mark.parametrize(
    ("code", "certificate", "reason"),
    [
        (10, cert(not_after=-3 * DAY), "Certificate expired 3 days ago (not after 2026-02-26 12:00 UTC)"),
        (9, cert(not_before=5 * DAY), "Certificate is not valid yet: it starts in 5 days"),
        (
            62,
            cert(names=("a.example", "b.example")),
            "Certificate is for a.example, b.example, not c.example",
        ),
        (
            62,
            cert(names=("a", "b", "c", "d", "e")),
            "Certificate is for a, b, c and 2 more, not c.example",
        ),
        (62, cert(names=(), common_name="old.example"), "Certificate is for old.example, not c.example"),
        (64, cert(names=("192.0.2.1",)), "Certificate is for 192.0.2.1, not c.example"),
        (18, cert(), "Certificate is self-signed (CN=a.example), not issued by a trusted authority"),
        (19, cert(), "Certificate chain ends in an untrusted root: issued by CN=Example CA"),
        (
            20,
            cert(),
            "Certificate chain does not verify: its issuer CN=Example CA is neither sent by the server",
        ),
        (21, cert(), "Certificate chain does not verify"),
        (26, cert(), "Certificate does not verify: unsuitable certificate purpose"),
        (20, None, "Certificate does not verify: unsuitable certificate purpose"),
    ],
)
def test_judge_a_certificate_that_did_not_verify(code, certificate, reason):
    failure = Failure(code, "unsuitable certificate purpose")

    verdict = judge(certificate, now=NOW, server_name="c.example", failure=failure)

    assert (verdict.status, verdict.kind) == (Status.DOWN, FailureKind.CERTIFICATE)
    assert verdict.reason.startswith(reason), verdict.reason


def test_problems_come_from_openssl_codes():
    assert [problem_of(code) for code in (10, 9, 18, 19, 20, 21, 62, 64, None, 999)] == [
        Problem.EXPIRED,
        Problem.NOT_YET_VALID,
        Problem.SELF_SIGNED,
        Problem.UNTRUSTED_ROOT,
        Problem.INCOMPLETE_CHAIN,
        Problem.INCOMPLETE_CHAIN,
        Problem.NAME_MISMATCH,
        Problem.NAME_MISMATCH,
        Problem.OTHER,
        Problem.OTHER,
    ]


@pytest.mark.parametrize(
    ("names", "common_name", "server_name", "expected"),
    [
        (("a.example",), None, "a.example", True),
        (("a.example",), None, "A.Example.", True),
        (("*.example.com",), None, "www.example.com", True),
        (("*.example.com",), None, "example.com", False),
        (("*.example.com",), None, "a.b.example.com", False),
        (("*.com",), None, "example.com", False),
        (("a.example",), None, "b.example", False),
        ((), "a.example", "a.example", True),  # no SAN: the common name counts
        (("b.example",), "a.example", "a.example", False),  # a SAN: the common name does not
        (("192.0.2.1",), None, "192.0.2.1", True),
        (("192.0.2.1",), None, "192.0.2.2", False),
        (("a.example",), None, "192.0.2.1", False),
        (("2001:db8::1",), None, "2001:db8:0::1", True),
    ],
)
def test_names_match_as_rfc_6125_says(names, common_name, server_name, expected):
    assert matches(cert(names=names, common_name=common_name), server_name) is expected


def _der(common_name: str, names: list[x509.GeneralName], units: int = 0) -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
        + [x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "u" * 60) for _ in range(units)]
    )
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(0xABCDEF)
        .not_valid_before(NOW - DAY)
        .not_valid_after(NOW + 3 * DAY)
    )
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.DER)


def test_parse_reads_the_leaf_and_describe_gives_its_json():
    import ipaddress

    der = _der("a.example", [x509.DNSName("a.example"), x509.IPAddress(ipaddress.ip_address("192.0.2.1"))])

    parsed = parse(der)

    assert parsed is not None
    assert (parsed.subject, parsed.common_name, parsed.names) == (
        "CN=a.example",
        "a.example",
        ("a.example", "192.0.2.1"),
    )
    assert (parsed.serial, parsed.not_after, parsed.self_issued) == ("abcdef", NOW + 3 * DAY, True)
    assert describe(parsed, now=NOW, server_name="a.example") == {
        "subject": "CN=a.example",
        "common_name": "a.example",
        "names": ["a.example", "192.0.2.1"],
        "issuer": "CN=a.example",
        "not_before": "2026-02-28T12:00:00+00:00",
        "not_after": "2026-03-04T12:00:00+00:00",
        "days_left": 3,
        "serial": "abcdef",
        "sha256": parsed.sha256,
        "chain_valid": True,
        "name_matches": True,
    }
    failed = describe(
        parsed, now=NOW, server_name="b.example", failure=Failure(20, "unable to get local issuer")
    )
    assert (failed["chain_valid"], failed["name_matches"]) == (False, False)


def test_parse_cleans_hostile_text_and_caps_the_names():
    der = _der("evil\n\x1b[31mname", [x509.DNSName(f"n{i}.example") for i in range(80)], units=10)

    parsed = parse(der)

    assert parsed is not None
    assert parsed.common_name is not None
    assert parsed.common_name == "evil [31mname"
    assert len(parsed.subject) <= 200
    assert len(parsed.names) == 50


def test_parse_refuses_what_is_no_certificate():
    assert parse(b"\x30\x03\x02\x01\x00") is None


# --- the TLS check's config ------------------------------------------------------------------------


def errors_of(raw: object) -> dict[str, str]:
    with pytest.raises(ConfigError) as caught:
        parse_tls_config(raw)
    return caught.value.errors


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({}, "host"),
        ({"host": ""}, "host"),
        ({"host": "bad host"}, "host"),
        ({"host": 7}, "host"),
        ({"host": "a.example", "port": 0}, "port"),
        ({"host": "a.example", "port": 70000}, "port"),
        ({"host": "a.example", "port": "443"}, "port"),
        ({"host": "a.example", "port": True}, "port"),
        ({"host": "a.example", "starttls": "ftp"}, "starttls"),
        ({"host": "a.example", "serverName": "not a name"}, "serverName"),
        ({"host": "a.example", "warnDays": -1}, "warnDays"),
        ({"host": "a.example", "warnDays": 366}, "warnDays"),
        ({"host": "a.example", "warnDays": 1.5}, "warnDays"),
        ({"host": "a.example", "timeout": 0}, "timeout"),
        ({"host": "a.example", "uri": "https://a.example/"}, "uri"),
        ({"host": "a.example", "headers": {"X-Key": "1"}}, "headers"),
        ({"host": "a.example", "headers": {}}, "headers"),
    ],
)
def test_bad_fields_are_named(raw, field):
    assert field in errors_of(raw)


def test_defaults_and_the_api_shape_round_trip():
    config = parse_tls_config({"host": "A.Example."})

    assert config == TlsConfig(host="a.example", port=443)
    assert (config.target, config.sni, config.headers) == ("a.example:443", "a.example", ())
    assert parse_tls_config(tls_config_to_api(config)) == config
    assert tls_config_to_api(config) == {
        "host": "a.example",
        "port": 443,
        "starttls": None,
        "serverName": None,
        "warnDays": 14,
        "timeout": 10.0,
    }


@pytest.mark.parametrize(("starttls", "port"), [("smtp", 25), ("imap", 143), ("pop3", 110), (None, 443)])
def test_starttls_picks_its_default_port(starttls, port):
    assert parse_tls_config({"host": "mail.example", "starttls": starttls}).port == port


def test_an_ipv6_host_and_a_server_name():
    config = parse_tls_config(
        {"host": "[2001:db8::1]", "serverName": "a.example", "port": 8443, "warnDays": 0}
    )

    assert (config.host, config.target, config.sni, config.warn_days) == (
        "2001:db8::1",
        "[2001:db8::1]:8443",
        "a.example",
        0,
    )
