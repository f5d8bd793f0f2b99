"""The address guard: which addresses a check may connect to, and the sentence when it may not."""

from __future__ import annotations

import ipaddress

import pytest

from probes.netguard import address_problem, parse_ip, refusal


@pytest.mark.parametrize(
    "address",
    [
        "93.184.216.34",
        "8.8.8.8",
        "1.1.1.1",
        "2606:4700::1111",
        "2001:4860:4860::8888",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
    ],
)
def test_public_addresses_pass(address):
    assert address_problem(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1", "loopback"),
        ("127.9.9.9", "loopback"),
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),
        ("100.64.0.1", "carrier-grade NAT"),
        ("100.127.255.254", "carrier-grade NAT"),
        ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "reserved"),
        ("192.0.2.10", "documentation"),
        ("198.18.0.1", "benchmarking"),
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fe80::1", "link-local"),
        ("fc00::1", "unique-local"),
        ("fd12:3456::1", "unique-local"),
        ("fec0::1", "site-local"),
        ("ff02::1", "multicast"),
        ("2001:db8::1", "documentation"),
        ("::ffff:127.0.0.1", "embedding 127.0.0.1, a loopback"),
        ("::ffff:10.0.0.1", "embedding 10.0.0.1, a private"),
        ("::10.0.0.1", "embedding 10.0.0.1"),
        ("64:ff9b::a9fe:a9fe", "embedding 169.254.169.254"),
        ("64:ff9b:1::1", "local-use NAT64"),
        ("2002:c0a8:0101::1", "embedding 192.168.1.1"),
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "embedding 10.0.0.1"),
        ("4000::1", "reserved"),
    ],
)
def test_non_public_addresses_are_refused_with_a_reason(address, why):
    problem = address_problem(ipaddress.ip_address(address))
    assert problem is not None
    assert why in problem


@pytest.mark.parametrize(
    ("text", "expected"),
    [("[::1]", "::1"), ("10.0.0.1", "10.0.0.1"), ("fe80::1%eth0", "fe80::1%eth0"), ("example.com", None)],
)
def test_parse_ip_reads_literals_only(text, expected):
    parsed = parse_ip(text)
    assert (str(parsed) if parsed else None) == expected


def test_a_scoped_link_local_address_is_still_link_local():
    assert "link-local" in address_problem(ipaddress.ip_address("fe80::1%eth0"))


def test_a_name_with_any_private_address_is_refused_naming_it():
    addresses = [ipaddress.ip_address("93.184.216.34"), ipaddress.ip_address("10.0.0.5")]
    assert refusal("mcp.example.com", addresses) == (
        "mcp.example.com resolves to 10.0.0.5, a private address; Uptimy only checks public addresses"
    )


def test_a_literal_address_is_named_once():
    assert refusal("127.0.0.1", [ipaddress.ip_address("127.0.0.1")]) == (
        "127.0.0.1 is a loopback address; Uptimy only checks public addresses"
    )


def test_public_names_pass():
    assert refusal("mcp.example.com", [ipaddress.ip_address("93.184.216.34")]) is None
