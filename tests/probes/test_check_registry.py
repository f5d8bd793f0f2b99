"""The check-type registry: lookups by number and name, and what a registration may not clash with."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import pytest

from probes.checks import (
    UnknownCheckKind,
    check_kind,
    check_kinds,
    kind_of_config,
    known_kinds_words,
    register,
    unregister,
)
from probes.checks.dns import DNS
from probes.checks.heartbeat import HEARTBEAT
from probes.checks.http import HTTP, HttpConfig
from probes.checks.mcp import MCP, McpConfig


@pytest.mark.parametrize(
    ("value", "expected"),
    [(13, MCP), ("13", MCP), ("mcp", MCP), (" MCP ", MCP), (1, HTTP), ("http", HTTP), ("1", HTTP)],
)
def test_a_type_is_found_by_its_number_or_its_name(value, expected):
    assert check_kind(value) is expected


@pytest.mark.parametrize("value", [0, 12, 99, "ftp", "", True, None, 13.0, "1" * 400, ["mcp"], "²", "１３"])
def test_anything_else_is_an_unknown_type_naming_the_known_ones(value):
    with pytest.raises(UnknownCheckKind, match=re.escape(f"use {known_kinds_words()}.")):
        check_kind(value)


def test_the_built_in_types_are_listed_by_number():
    kinds = check_kinds()
    assert [kind.number for kind in kinds] == sorted(kind.number for kind in kinds)
    assert {HTTP, DNS, HEARTBEAT, MCP} <= set(kinds)


def test_a_config_finds_its_type():
    assert kind_of_config(McpConfig(uri="https://x.example/mcp")) is MCP
    assert kind_of_config(HttpConfig(uri="https://x.example/")) is HTTP


@dataclass(frozen=True)
class _OtherConfig:
    uri: str
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float = 1.0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": "other", "config_type": _OtherConfig}, "clashes"),  # number 13 taken
        ({"number": 99, "config_type": _OtherConfig}, "clashes"),  # name "mcp" taken
        ({"number": 99, "name": "other"}, "clashes"),  # McpConfig taken
        ({"number": 0, "name": "other", "config_type": _OtherConfig}, "1–32767"),
        ({"number": 99, "name": "Other", "config_type": _OtherConfig}, "lower-case"),
    ],
)
def test_a_registration_that_clashes_or_is_malformed_is_refused(change, message):
    before = check_kinds()
    with pytest.raises(ValueError, match=message):
        register(replace(MCP, **change))
    assert check_kinds() == before


def test_unregistering_forgets_the_type():
    other = register(replace(MCP, number=99, name="other", config_type=_OtherConfig))
    unregister(other)
    with pytest.raises(UnknownCheckKind):
        check_kind("other")
