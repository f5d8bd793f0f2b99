"""Refuse targets on private, loopback and other non-public networks (the SSRF guard).

A customer's URL, and every URL a server hands back (protected resource metadata, an
authorization server, a legacy SSE endpoint, a redirect), is resolved by the engine itself;
each resolved address passes through :func:`address_problem` before a socket is opened, and
the connection goes to the address that was checked, so a rebinding DNS server gets no
second answer to change.
"""

from __future__ import annotations

import ipaddress
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network

IPAddress = IPv4Address | IPv6Address

# Order matters only for the wording: the first matching network names the reason.
_V4_RULES: tuple[tuple[IPv4Network, str], ...] = tuple(
    (IPv4Network(net), why)
    for net, why in (
        ("0.0.0.0/8", "an unspecified ('this network') address"),
        ("127.0.0.0/8", "a loopback address"),
        ("10.0.0.0/8", "a private address"),
        ("172.16.0.0/12", "a private address"),
        ("192.168.0.0/16", "a private address"),
        ("100.64.0.0/10", "a carrier-grade NAT (shared) address"),
        ("169.254.0.0/16", "a link-local address"),
        ("192.0.0.0/24", "a reserved (IETF protocol assignments) address"),
        ("192.0.2.0/24", "a reserved (documentation) address"),
        ("198.51.100.0/24", "a reserved (documentation) address"),
        ("203.0.113.0/24", "a reserved (documentation) address"),
        ("198.18.0.0/15", "a reserved (benchmarking) address"),
        ("192.88.99.0/24", "a reserved (6to4 relay) address"),
        ("224.0.0.0/4", "a multicast address"),
        ("240.0.0.0/4", "a reserved address"),
    )
)

_V6_RULES: tuple[tuple[IPv6Network, str], ...] = tuple(
    (IPv6Network(net), why)
    for net, why in (
        ("::/128", "an unspecified address"),
        ("::1/128", "a loopback address"),
        ("64:ff9b:1::/48", "a local-use NAT64 address"),
        ("fc00::/7", "a unique-local (private) address"),
        ("fe80::/10", "a link-local address"),
        ("fec0::/10", "a site-local (deprecated private) address"),
        ("ff00::/8", "a multicast address"),
        ("2001:db8::/32", "a reserved (documentation) address"),
        ("100::/64", "a reserved (discard-only) address"),
        ("2001:2::/48", "a reserved (benchmarking) address"),
        ("2001:10::/28", "a reserved (ORCHID) address"),
        ("2001:20::/28", "a reserved (ORCHIDv2) address"),
    )
)

# Prefixes that carry an IPv4 address inside an IPv6 one: the v4 address decides.
_V4_MAPPED = IPv6Network("::ffff:0:0/96")
_V4_COMPAT = IPv6Network("::/96")
_NAT64 = IPv6Network("64:ff9b::/96")
_SIX_TO_FOUR = IPv6Network("2002::/16")
_TEREDO = IPv6Network("2001::/32")
_GLOBAL_UNICAST = IPv6Network("2000::/3")


def parse_ip(text: str) -> IPAddress | None:
    """Return the address ``text`` spells (brackets and an IPv6 zone allowed), or None for a name."""
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None


def address_problem(address: IPAddress) -> str | None:
    """Return why ``address`` is refused ("a private address", …), or None when it is public."""
    if isinstance(address, IPv4Address):
        return _v4_problem(address)
    return _v6_problem(address)


def _v4_problem(address: IPv4Address) -> str | None:
    for network, why in _V4_RULES:
        if address in network:
            return why
    if not address.is_global:
        return "a non-public address"
    return None


def _v6_problem(address: IPv6Address) -> str | None:
    embedded = _embedded_v4(address)
    if embedded is not None:
        inner = _v4_problem(embedded)
        return f"an IPv6 address embedding {embedded}, {inner}" if inner else None
    for network, why in _V6_RULES:
        if address in network:
            return why
    if address not in _GLOBAL_UNICAST:
        return "a reserved address"
    return None


def _embedded_v4(address: IPv6Address) -> IPv4Address | None:
    """Return the IPv4 address an IPv4-mapped, -compatible, NAT64, 6to4 or Teredo address carries."""
    if address in _V4_MAPPED or address in _NAT64:
        return IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _V4_COMPAT and int(address) > 1:
        return IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _SIX_TO_FOUR:
        return IPv4Address((int(address) >> 80) & 0xFFFFFFFF)
    if address in _TEREDO:
        teredo = address.teredo
        return teredo[1] if teredo else None
    return None


def refusal(host: str, addresses: list[IPAddress]) -> str | None:
    """Return the sentence refusing ``host`` when any of its addresses is not public, else None.

    One bad address refuses the name: a name that resolves to a public and a private address
    is how a rebinding or split-horizon trick would reach the inside.
    """
    for address in addresses:
        why = address_problem(address)
        if why is None:
            continue
        if parse_ip(host) == address:
            return f"{address} is {why}; Uptimy only checks public addresses"
        return f"{host} resolves to {address}, {why}; Uptimy only checks public addresses"
    return None
