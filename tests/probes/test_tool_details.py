"""What a check keeps of each listed tool: description, inputSchema and safety hints, capped.

The scorecard judges these details, so they are kept as the server gave them; a hostile server
(NUL, lone surrogates, non-object schemas, huge lists) must neither break storage nor memory.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from probe_support import mcp, run

from probes.jsonrpc import MAX_JSON_DEPTH
from probes.mcp import tool_details_digest, tool_digest
from probes.mcp.tools import (
    MAX_TOOL_DESCRIPTION,
    MAX_TOOL_DETAILS,
    MAX_TOOL_SCHEMA,
    DetailsBudget,
    storable_tool,
    tool_info,
)
from probes.text import REPLACEMENT, json_text, storable_json
from probes.types import Status, ToolInfo


def kept(item: dict[str, Any], budget: DetailsBudget | None = None) -> ToolInfo:
    return tool_info(item.get("name", "t"), item, budget or DetailsBudget())


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        ("Search the docs.", "Search the docs."),
        ("  padded \n", "padded"),
        ("", ""),
        (None, None),
        (42, None),
        (["a list"], None),
        ({"text": "an object"}, None),
        ("nul\x00inside", "nulinside"),
        ("lone \ud800 surrogate", f"lone {REPLACEMENT} surrogate"),
        ("x" * (MAX_TOOL_DESCRIPTION + 10), "x" * MAX_TOOL_DESCRIPTION),
        # Padding is trimmed before the cut, so the words survive it.
        (" " * (MAX_TOOL_DESCRIPTION * 3) + "words", "words"),
    ],
)
def test_a_description_is_kept_trimmed_clean_and_clipped(description, expected):
    item: dict[str, Any] = {"name": "t"} if description is None else {"name": "t", "description": description}

    assert kept(item).description == expected


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (
            {"type": "object", "properties": {"q": {"type": "string"}}},
            '{"type":"object","properties":{"q":{"type":"string"}}}',
        ),
        ({"properties": {}, "type": "object"}, '{"properties":{},"type":"object"}'),  # the server's key order
        ("a string", '"a string"'),
        ([1, 2], "[1,2]"),
        (7, "7"),
        (None, "null"),
        ({"type": "object", "default": math.nan}, '{"type":"object","default":null}'),
        ({"type": "object", "max": math.inf}, '{"type":"object","max":null}'),
        ({"k\x00ey": "va\x00lue"}, '{"key":"value"}'),
        ({"d": "\udc80"}, f'{{"d":"{REPLACEMENT}"}}'),
        ({"é": "ü"}, '{"é":"ü"}'),
    ],
)
def test_an_input_schema_is_kept_as_compact_json_whatever_its_type(schema, expected):
    info = kept({"name": "t", "inputSchema": schema})

    assert info.input_schema == expected
    assert info.schema_kept is True


def test_an_absent_input_schema_is_none_and_counts_as_kept():
    info = kept({"name": "t"})

    assert (info.input_schema, info.schema_kept) == (None, True)


def test_a_schema_over_its_cap_is_dropped_whole_and_the_description_stays():
    big = {"type": "object", "description": "x" * MAX_TOOL_SCHEMA}

    info = kept({"name": "t", "description": "Fetch a page.", "inputSchema": big})

    assert (info.input_schema, info.schema_kept) == (None, False)
    assert (info.description, info.description_kept) == ("Fetch a page.", True)


def test_a_schema_at_its_cap_is_kept():
    filler = "x" * (MAX_TOOL_SCHEMA - len(json_text({"d": ""})))

    info = kept({"name": "t", "inputSchema": {"d": filler}})

    assert len(info.input_schema or "") == MAX_TOOL_SCHEMA
    assert info.schema_kept is True


@pytest.mark.parametrize(
    ("annotations", "read_only", "destructive"),
    [
        ({"readOnlyHint": True}, True, None),
        ({"readOnlyHint": False, "destructiveHint": True}, False, True),
        ({"destructiveHint": False}, None, False),
        ({}, None, None),
        ({"readOnlyHint": "true", "destructiveHint": 1}, None, None),
        ({"readOnlyHint": None}, None, None),
        ("not an object", None, None),
        ([True], None, None),
    ],
)
def test_safety_hints_are_kept_only_as_declared_booleans(annotations, read_only, destructive):
    info = kept({"name": "t", "annotations": annotations})

    assert (info.read_only_hint, info.destructive_hint) == (read_only, destructive)


def test_the_details_budget_drops_the_details_of_tools_past_it_and_keeps_their_names():
    budget = DetailsBudget(left=30)
    first = tool_info("a", {"description": "d" * 20, "inputSchema": {}}, budget)  # 22 characters
    second = tool_info("b", {"description": "d" * 20, "annotations": {"readOnlyHint": True}}, budget)
    third = tool_info("c", {"description": "d" * 8}, budget)  # still fits what is left

    assert (first.description_kept, first.schema_kept) == (True, True)
    assert (second.name, second.description, second.input_schema) == ("b", None, None)
    assert (second.description_kept, second.schema_kept, second.read_only_hint) == (False, False, True)
    assert third.description == "d" * 8
    assert budget.left == 0


def test_the_details_cap_bounds_a_whole_list_of_large_tools(server):
    description = "y" * MAX_TOOL_DESCRIPTION
    schema = {"type": "object", "description": "z" * (MAX_TOOL_SCHEMA - 100)}
    server.tools = [{"name": f"t{i}", "description": description, "inputSchema": schema} for i in range(40)]

    outcome = run(mcp())

    assert outcome.status is Status.UP
    assert outcome.tool_count == 40
    total = sum(len(t.description or "") + len(t.input_schema or "") for t in outcome.tools)
    assert total <= MAX_TOOL_DETAILS
    assert not outcome.tools[-1].description_kept
    assert outcome.tools[0].description_kept


def test_a_check_keeps_each_tools_details(server):
    server.tools = [
        {
            "name": "search",
            "description": "Full-text search over the docs.",
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
            "annotations": {"readOnlyHint": True, "destructiveHint": False},
        },
        {"name": "bare"},
    ]

    outcome = run(mcp())

    search, bare = outcome.tools
    assert search == ToolInfo(
        name="search",
        required_inputs=("q",),
        description="Full-text search over the docs.",
        input_schema='{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}',
        read_only_hint=True,
        destructive_hint=False,
    )
    assert bare == ToolInfo(name="bare")


def test_a_key_the_server_echoes_in_a_description_or_schema_is_redacted(server):
    secret = "sk-live-0123456789abcdef"
    server.tools = [
        {"name": "t", "description": f"Uses {secret}", "inputSchema": {"type": "object", "default": secret}}
    ]

    outcome = run(mcp(headers=(("Authorization", f"Bearer {secret}"),)))

    (info,) = outcome.tools
    assert secret not in (info.description or "") + (info.input_schema or "")
    assert json.loads(info.input_schema or "") == {"type": "object", "default": "[redacted]"}


def test_a_changed_description_changes_the_details_digest_but_not_the_tool_digest():
    before = [ToolInfo("search", ("q",), description="Search.")]
    after = [ToolInfo("search", ("q",), description="Search the docs.")]

    assert tool_digest(before) == tool_digest(after)
    assert tool_details_digest(before) != tool_details_digest(after)


def test_the_details_digest_ignores_the_order_of_the_tools():
    tools = [ToolInfo("a", description="A."), ToolInfo("b", input_schema="{}")]

    assert tool_details_digest(tools) == tool_details_digest(list(reversed(tools)))


def test_storable_tool_cleans_schema_strings_inside_the_json():
    tool = ToolInfo("t", input_schema='{"k":"a\\u0000b","s":"\\ud800"}', description="x\x00y")

    clean = storable_tool(tool, lambda text: text.replace("\x00", "").replace("\ud800", REPLACEMENT))

    assert clean.description == "xy"
    assert json.loads(clean.input_schema or "") == {"k": "ab", "s": REPLACEMENT}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": [1, 2.5, True, None, "s"]}, {"a": [1, 2.5, True, None, "s"]}),
        ([math.nan, -math.inf], [None, None]),
        ({"\x00": "\x00"}, {"": ""}),
        (10**40, 10**40),
    ],
)
def test_storable_json_keeps_json_values_and_cleans_the_rest(value, expected):
    assert storable_json(value) == expected


def test_a_schema_nested_as_deep_as_a_check_reads_is_kept_whole(server):
    # The answer nests 4 levels around the schema (the message, result, tools, the tool), and
    # each wrap below adds 2 (the schema and its properties): 4 + 1 + 2 × 29 = 63 levels.
    schema: dict[str, Any] = {"type": "object"}
    for _ in range((MAX_JSON_DEPTH - 5) // 2):
        schema = {"type": "object", "properties": {"x": schema}}
    server.tools = [{"name": "deep", "inputSchema": schema}]

    outcome = run(mcp())

    assert outcome.status is Status.UP, outcome.reason
    assert json.loads(outcome.tools[0].input_schema or "") == schema
