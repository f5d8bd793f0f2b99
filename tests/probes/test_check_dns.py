"""The DNS record check (type 4) against a real DNS server on loopback (dnslib), and its config rules."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from probes.checks import check_kind
from probes.checks.dns import DnsConfig, parse_dns_config
from probes.config import ConfigError
from probes.runner import ProbeEnv, run_check
from probes.types import FailureKind, Status
from tests.dns_server import Zone, dns_server, silent_udp

RECORDS = [
    "example.test. 60 IN A 192.0.2.1",
    "example.test. 60 IN A 192.0.2.2",
    "example.test. 60 IN AAAA 2001:db8:0:0::1",
    "www.example.test. 60 IN CNAME Example.TEST.",
    "example.test. 60 IN MX 10 Mail.Example.test.",
    "example.test. 60 IN MX 20 backup.example.test.",
    'example.test. 60 IN TXT "v=spf1 " "-all"',
    "example.test. 60 IN NS ns1.example.test.",
    "example.test. 60 IN SOA ns1.example.test. hostmaster.example.test. 2026120601 7200 3600 1209600 300",
    'example.test. 60 IN CAA 0 issue "ca.example"',
    'big.example.test. 60 IN TXT "' + "x" * 200 + '"',
]
LOOPBACK = ProbeEnv(allow_private=True)


@pytest.fixture
def zone() -> Zone:
    return Zone(
        records=list(RECORDS),
        rcodes={"gone.example.test.": "NXDOMAIN", "broken.example.test.": "SERVFAIL"},
        ad={"signed.example.test."},
        truncate={"big.example.test."},
    )


@pytest.fixture
def server(zone: Zone) -> Iterator[str]:
    with dns_server(zone) as address:
        yield address


def check(server: str, name: str = "example.test", record_type: str = "A", **more: Any) -> Any:
    config = parse_dns_config(
        {"name": name, "recordType": record_type, "nameserver": server, "timeout": 3, **more}
    )
    return asyncio.run(run_check(config, LOOPBACK))


@pytest.mark.parametrize(
    ("record_type", "name", "answer"),
    [
        ("A", "example.test", ["192.0.2.1", "192.0.2.2"]),
        ("AAAA", "example.test", ["2001:db8::1"]),
        ("CNAME", "www.example.test", ["example.test."]),
        ("A", "www.example.test", ["192.0.2.1", "192.0.2.2"]),
        ("MX", "example.test", ["10 mail.example.test.", "20 backup.example.test."]),
        ("TXT", "example.test", ["v=spf1 -all"]),
        ("NS", "example.test", ["ns1.example.test."]),
        (
            "SOA",
            "example.test",
            ["ns1.example.test. hostmaster.example.test. 2026120601 7200 3600 1209600 300"],
        ),
        ("CAA", "example.test", ['0 issue "ca.example"']),
    ],
)
def test_each_record_type_is_answered_normalized(server, record_type, name, answer):
    outcome = check(server, name, record_type)

    assert outcome.status is Status.UP, outcome.reason
    assert outcome.details == {
        "answer": answer,
        "rcode": "NOERROR",
        "ad": False,
        "nameserver": server,
        "truncated_fallback": False,
    }
    assert outcome.timings.dns_ms is not None
    assert outcome.timings.total_ms >= outcome.timings.dns_ms


@pytest.mark.parametrize(
    ("record_type", "values"),
    [
        ("A", ["192.0.2.1"]),
        ("AAAA", ["2001:DB8::0:1"]),
        ("CNAME", ["EXAMPLE.test"]),
        ("MX", ["10 mail.example.test"]),
        ("TXT", ["v=spf1 -all"]),
        ("NS", ["ns1.example.test."]),
        ("CAA", ["0 issue ca.example"]),
    ],
)
def test_expected_values_compare_as_people_write_them(server, record_type, values):
    name = "www.example.test" if record_type == "CNAME" else "example.test"

    outcome = check(server, name, record_type, expect={"op": "contains", "values": values})

    assert outcome.status is Status.UP, outcome.reason


def test_an_answer_lacking_an_expected_value_is_down_naming_what_was_seen(server, zone):
    zone.records = ["example.test. 60 IN A 192.0.2.9"]

    outcome = check(server, expect={"op": "contains", "values": ["192.0.2.1"]})

    assert (outcome.status, outcome.kind) == (Status.DOWN, FailureKind.DNS_ANSWER)
    assert outcome.reason == "A answer was 192.0.2.9, expected to contain 192.0.2.1"
    assert outcome.details["answer"] == ["192.0.2.9"]


def test_equals_wants_exactly_the_values(server):
    partial = check(server, expect={"op": "equals", "values": ["192.0.2.1"]})
    exact = check(server, expect={"op": "equals", "values": ["192.0.2.2", "192.0.2.1"]})

    assert (partial.status, partial.kind) == (Status.DOWN, FailureKind.DNS_ANSWER)
    assert partial.reason == "A answer was 192.0.2.1, 192.0.2.2, expected to equal 192.0.2.1"
    assert exact.status is Status.UP


@pytest.mark.parametrize(
    ("name", "words", "rcode"),
    [
        ("gone.example.test", "the name does not exist (NXDOMAIN)", "NXDOMAIN"),
        ("broken.example.test", "the server failed to answer (SERVFAIL)", "SERVFAIL"),
    ],
)
def test_an_error_rcode_is_down_with_its_words(server, name, words, rcode):
    outcome = check(server, name)

    assert (outcome.status, outcome.kind) == (Status.DOWN, FailureKind.DNS)
    assert outcome.reason == f"DNS query for A {name} at {server}: {words}"
    assert outcome.details["rcode"] == rcode


def test_no_record_of_the_type_is_down(server):
    outcome = check(server, "ns1.example.test", "MX")

    assert (outcome.status, outcome.kind) == (Status.DOWN, FailureKind.DNS)
    assert outcome.reason == f"ns1.example.test has no MX records (NOERROR, empty answer) at {server}"


def test_a_truncated_udp_answer_is_asked_again_over_tcp(server, zone):
    outcome = check(server, "big.example.test", "TXT")

    assert outcome.status is Status.UP, outcome.reason
    assert outcome.details["answer"] == ["x" * 200]
    assert outcome.details["truncated_fallback"] is True
    assert [protocol for protocol, name, _ in zone.asked if name == "big.example.test."] == ["udp", "tcp"]


def test_dnssec_required_wants_the_ad_bit(server, zone):
    zone.records.append("signed.example.test. 60 IN A 192.0.2.7")

    signed = check(server, "signed.example.test", dnssec=True)
    unsigned = check(server, "example.test", dnssec=True)

    assert signed.status is Status.UP, signed.reason
    assert signed.details["ad"] is True
    assert (unsigned.status, unsigned.kind) == (Status.DOWN, FailureKind.DNS_ANSWER)
    assert (
        unsigned.reason
        == f"The A answer for example.test is not DNSSEC-validated: {server} did not set the AD bit"
    )
    assert unsigned.details["ad"] is False


def test_a_nameserver_that_never_answers_is_a_timeout():
    with silent_udp() as server:
        config = parse_dns_config({"name": "example.test", "nameserver": server, "timeout": 1})
        outcome = asyncio.run(run_check(config, LOOPBACK))

    assert (outcome.status, outcome.kind) == (Status.DOWN, FailureKind.TIMEOUT)
    assert outcome.reason == f"DNS query for A example.test at {server} got no answer within 1 s"


def test_a_private_nameserver_is_refused_by_the_address_guard(server, zone):
    config = parse_dns_config({"name": "example.test", "nameserver": server})

    outcome = asyncio.run(run_check(config, ProbeEnv(allow_private=False)))

    assert (outcome.status, outcome.kind) == (Status.DOWN, FailureKind.BLOCKED_ADDRESS)
    assert outcome.reason == "127.0.0.1 is a loopback address; Uptimy only checks public addresses"
    assert zone.asked == []


def test_without_a_nameserver_the_configured_resolvers_are_asked(server, zone):
    config = parse_dns_config({"name": "example.test", "timeout": 3})

    outcome = asyncio.run(run_check(config, ProbeEnv(nameservers=("not an address", server))))

    assert outcome.status is Status.UP, outcome.reason
    assert outcome.details["nameserver"] == server
    assert zone.asked == [("udp", "example.test.", "A")]


def test_a_resolver_that_does_not_answer_gives_way_to_the_next(server):
    with silent_udp() as silent:
        config = parse_dns_config({"name": "example.test", "timeout": 4})
        outcome = asyncio.run(run_check(config, ProbeEnv(nameservers=(silent, server))))

    assert outcome.status is Status.UP, outcome.reason
    assert outcome.details["nameserver"] == server


def test_hostile_txt_text_is_cleaned_and_capped(server, zone):
    zone.records = ['evil.example.test. 60 IN TXT "a\\000b\\010c" "' + "y" * 250 + '" "' + "z" * 250 + '"']

    outcome = check(server, "evil.example.test", "TXT", expect={"values": ["nothing"]})

    (record,) = outcome.details["answer"]
    assert "\x00" not in record
    assert "\x08" not in record
    assert len(record) <= 512
    assert len(outcome.reason) < 400


# --- config ----------------------------------------------------------------------------------


def parse_errors(config: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(ConfigError) as raised:
        parse_dns_config(config)
    return raised.value.errors


@pytest.mark.parametrize(
    ("config", "field", "words"),
    [
        ({"name": "example.com", "recordType": "XYZ"}, "recordType", "A, AAAA, CNAME, MX, TXT, NS, SOA, CAA"),
        ({"name": "example.com", "recordType": 1}, "recordType", "Must be one of"),
        ({}, "name", "required"),
        ({"name": "exa mple.com"}, "name", "spaces"),
        ({"name": "ex!ample.com"}, "name", "characters DNS names can't hold"),
        ({"name": "a" * 64 + ".com"}, "name", "Not a valid DNS name"),
        ({"name": "."}, "name", "not the root"),
        ({"name": 7}, "name", "Enter a DNS name"),
        (
            {"name": "example.com", "nameserver": "ns1.example.com"},
            "nameserver",
            "a host name is not allowed",
        ),
        ({"name": "example.com", "nameserver": "192.0.2.1:0"}, "nameserver", "1 to 65535"),
        ({"name": "example.com", "nameserver": "192.0.2.1:99999"}, "nameserver", "1 to 65535"),
        ({"name": "example.com", "nameserver": "[2001:db8::1"}, "nameserver", "IP address"),
        ({"name": "example.com", "nameserver": "fe80::1%eth0"}, "nameserver", "zone"),
        ({"name": "example.com", "expect": ["192.0.2.1"]}, "expect", '"op"'),
        ({"name": "example.com", "expect": {"op": "like", "values": ["x"]}}, "expect.op", "contains, equals"),
        ({"name": "example.com", "expect": {"values": []}}, "expect.values", "1 to 50"),
        ({"name": "example.com", "expect": {"values": ["192.0.2.300"]}}, "expect.values", "not an IPv4"),
        (
            {"name": "example.com", "recordType": "AAAA", "expect": {"values": ["192.0.2.1"]}},
            "expect.values",
            "IPv6",
        ),
        (
            {"name": "example.com", "recordType": "MX", "expect": {"values": ["mail.example.com"]}},
            "expect.values",
            "MX",
        ),
        (
            {"name": "example.com", "recordType": "SOA", "expect": {"values": ["ns1. a."]}},
            "expect.values",
            "SOA",
        ),
        (
            {"name": "example.com", "recordType": "CAA", "expect": {"values": ["issue"]}},
            "expect.values",
            "CAA",
        ),
        ({"name": "example.com", "dnssec": "yes"}, "dnssec", "true or false"),
        ({"name": "example.com", "timeout": 0}, "timeout", "seconds"),
        ({"name": "example.com", "headers": {"X-Key": "v"}}, "headers", "Unknown field"),
        ({"name": "example.com", "headers": {}}, "headers", "Unknown field"),
        ({"name": "example.com", "uri": "https://example.com/"}, "uri", "Unknown field"),
    ],
)
def test_bad_config_names_the_field(config, field, words):
    errors = parse_errors(config)

    assert field in errors, errors
    assert words in errors[field]


def test_a_config_round_trips_through_its_api_shape():
    kind = check_kind("dns")
    raw = {
        "name": "Bücher.Example.",
        "recordType": "mx",
        "nameserver": "[2001:db8::53]:5353",
        "expect": {"op": "equals", "values": ["10 Mail.example.com", "10 mail.example.com."]},
        "dnssec": True,
        "timeout": 5,
    }

    config = kind.parse(raw)
    shape = kind.to_api(config)

    assert (kind.number, kind.name, kind.active) == (4, "dns", True)
    assert shape == {
        "name": "xn--bcher-kva.example",
        "recordType": "MX",
        "nameserver": "[2001:db8::53]:5353",
        "expect": {"op": "equals", "values": ["10 mail.example.com."]},
        "dnssec": True,
        "timeout": 5.0,
    }
    assert kind.parse(shape) == config
    assert (config.target, config.host) == ("xn--bcher-kva.example MX @[2001:db8::53]:5353", "2001:db8::53")


def test_the_nameserver_port_defaults_to_53_and_is_shown_only_when_another():
    config = parse_dns_config({"name": "example.com", "nameserver": "192.0.2.53:53"})

    assert config == DnsConfig(name="example.com", nameserver=("192.0.2.53", 53))
    assert check_kind(4).to_api(config)["nameserver"] == "192.0.2.53"
