"""Reading a monitors file: the product text's format, mapped to the API's fields, and every bad file
refused with the line, column and field, before anything is sent."""

from __future__ import annotations

import textwrap

import pytest

from probes.checks import known_kinds_words
from tests.ctl.product_text import PRODUCT_TEXT_FILE
from uptimy.ctl.spec import MASK, SpecInvalid, load

# An MCP monitor with a listing (line 5), its namespace on line 6; rows append keys or replace them.
LISTED = (
    "monitors:\n  - name: A\n    type: mcp\n    target: https://a.example/\n"
    "    listing:\n      namespace: io.github.a/b\n"
)


def problems(text: str, *, env: dict[str, str] | None = None, ci: bool = False) -> list[str]:
    with pytest.raises(SpecInvalid) as refused:
        load(textwrap.dedent(text), env=env or {}, ci=ci)
    return [p.render("monitors.yaml") for p in refused.value.problems]


def test_the_product_text_file_reads_as_the_api_fields_with_defaults_filled_in():
    spec = load(PRODUCT_TEXT_FILE, env={"DOCS_MCP_KEY": "s3cret"})

    first, second = spec.monitors
    assert first.fields == {
        "name": "Docs MCP",
        "type": "mcp",
        "config": {
            "uri": "https://mcp.example.com/mcp",
            "headers": {},
            "requiredTools": [],
            "minTools": 0,
            "timeout": 10.0,
        },
    }
    assert second.fields["config"]["headers"] == {"Authorization": MASK}
    assert second.fields["config"]["requiredTools"] == ["search_docs", "read_page"]
    assert spec.warnings == []


def test_a_header_reference_is_resolved_from_the_environment_into_what_is_sent_only():
    spec = load(PRODUCT_TEXT_FILE, env={"DOCS_MCP_KEY": "s3cret"})

    tools = spec.monitors[1]
    assert tools.body()["config"]["headers"] == {"Authorization": "Bearer s3cret"}
    assert "s3cret" not in repr(tools.fields)


def test_an_unset_reference_is_sent_masked_so_the_api_keeps_the_stored_value():
    tools = load(PRODUCT_TEXT_FILE, env={}).monitors[1]

    assert tools.body()["config"]["headers"] == {"Authorization": MASK}
    assert tools.unresolved == {"Authorization": ["DOCS_MCP_KEY"]}


def test_the_other_api_fields_map_to_the_api_names():
    spec = load(
        textwrap.dedent(
            """\
            monitors:
              - name: Home
                type: http
                target: https://example.com/
                config: {expectedStatus: ["200"], keyword: Welcome}
                interval: 5m
                regions: [eu-west, us-east]
                tags: [web]
                paused: true
                recheck_count: 3
                recheck_delay_seconds: 10
                quorum: 1
                degraded_threshold_ms: 2000
            """
        ),
        env={},
    )

    fields = spec.monitors[0].fields
    assert fields["interval"] == 300
    assert fields["regions"] == ["eu-west", "us-east"]
    assert fields["tags"] == ["web"]
    assert fields["paused"] is True
    assert (fields["recheck_count"], fields["recheck_delay_seconds"]) == (3, 10)
    assert (fields["quorum"], fields["degraded_threshold_ms"]) == (1, 2000)
    assert fields["config"]["keyword"] == "Welcome"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            PRODUCT_TEXT_FILE.replace("minTools: 2", "minTools: -1"),
            "monitors.yaml:10:7: monitors[1].config.minTools: must be a whole number of at least 0",
            id="min-tools-below-zero",
        ),
        pytest.param(
            "monitors:\n  - name: A\n    type: ftp\n    target: https://a.example/\n",
            "monitors.yaml:3:5: monitors[0].type: unknown type 'ftp'; use " + known_kinds_words(),
            id="unknown-type",
        ),
        pytest.param(
            "monitors:\n  - name: A\n    type: mcp\n    target: https://a.example/\n    intervall: 60\n",
            "monitors.yaml:5:5: monitors[0].intervall: unknown field; the fields are: name, key, type, target, "
            "config, interval, regions, tags, paused, recheck_count, recheck_delay_seconds, quorum, "
            "degraded_threshold_ms, listing",
            id="unknown-field",
        ),
        pytest.param(
            "monitors:\n  - name: A\n    type: mcp\n    target: https://a.example/\n    config: {minTool: 1}\n",
            "monitors.yaml:5:14: monitors[0].config.minTool: unknown field; allowed: certificateWarnDays, "
            "headers, minTools, requiredTools, timeout, uri",
            id="unknown-config-field",
        ),
        pytest.param(
            "monitors:\n  - name: A\n    type: mcp\n    target: https://a.example/\n  - name: A\n"
            "    type: http\n    target: https://b.example/\n",
            "monitors.yaml:5:5: monitors[1].name: duplicated name 'A' (also monitors[0]); "
            "names match monitors, so each must be unique",
            id="duplicated-name",
        ),
        pytest.param(
            "monitors:\n  - name: A\n    type: mcp\n    type: http\n    target: https://a.example/\n",
            "monitors.yaml:4:5: monitors[0].type: duplicated key (first written on line 3)",
            id="duplicated-key",
        ),
        pytest.param(
            "monitors:\n  - name: A\n\ttype: mcp\n",
            "monitors.yaml:3:1: a tab character; indent and separate with spaces",
            id="tab",
        ),
        pytest.param(
            "monitors:\n  - name: A\n    type: mcp\n",
            "monitors.yaml:2:5: monitors[0].target: required",
            id="missing-target",
        ),
        pytest.param(
            "monitors:\n  - name: A\n    type: mcp\n    target: ftp://a.example/\n",
            "monitors.yaml:4:5: monitors[0].target: enter an absolute http:// or https:// URL",
            id="target-not-http",
        ),
        pytest.param(
            "monitors:\n  - name: A\n    type: mcp\n    target: https://a.example/\n    config:\n"
            "      uri: https://b.example/\n",
            "monitors.yaml:6:7: monitors[0].config.uri: write the URL as the monitor's `target`",
            id="uri-in-config",
        ),
        pytest.param(
            "monitors:\n  - name: A\n    type: mcp\n    target: https://a.example/\n    interval: soon\n",
            'monitors.yaml:5:5: monitors[0].interval: must be seconds (60) or a duration ("30s", "5m", "1h")',
            id="interval-not-a-duration",
        ),
        pytest.param(
            "monitors:\n  - name: A\n    type: mcp\n    target: https://a.example/\n    regions: [no]\n",
            "monitors.yaml:5:5: monitors[0].regions: must be a list of text (quote values YAML reads "
            "otherwise, like `no` or `1`)",
            id="yaml-boolean-as-region",
        ),
        pytest.param(
            "monitors:\n  - name: A\n    type: mcp\n    target: https://a.example/\n    config:\n"
            "      headers: {Connection: close}\n",
            "monitors.yaml:6:17: monitors[0].config.headers.Connection: uptimy sets this header itself "
            "(it frames the request or is hop-by-hop); it can't be configured",
            id="forbidden-header",
        ),
        pytest.param(
            LISTED + "      website: https://a.example/\n",
            "monitors.yaml:7:7: monitors[0].listing.website: unknown field; the fields are: namespace, "
            "website_url, repository_url, pricing_url, quote",
            id="listing-unknown-field",
        ),
        pytest.param(
            LISTED + "      quote: 1000\n",
            "monitors.yaml:7:7: monitors[0].listing.quote: must be text (quote values YAML reads otherwise, "
            "like `no` or `1`)",
            id="listing-value-not-text",
        ),
        pytest.param(
            LISTED.replace("namespace: io.github.a/b", "namespace: ''"),
            "monitors.yaml:6:7: monitors[0].listing.namespace: must be non-empty text",
            id="listing-empty-namespace",
        ),
        pytest.param(
            LISTED.replace("namespace: io.github.a/b", "quote: Free tier"),
            "monitors.yaml:6:7: monitors[0].listing.namespace: required",
            id="listing-without-namespace",
        ),
        pytest.param(
            LISTED + "      namespace: io.github.a/c\n",
            "monitors.yaml:7:7: monitors[0].listing.namespace: duplicated key (first written on line 6)",
            id="listing-duplicated-key",
        ),
        pytest.param(
            LISTED.replace(
                "    listing:\n      namespace: io.github.a/b\n", "    listing: [io.github.a/b]\n"
            ),
            "monitors.yaml:5:5: monitors[0].listing: must be a mapping, or null to remove it",
            id="listing-not-a-mapping",
        ),
        pytest.param(
            LISTED.replace("type: mcp", "type: http"),
            "monitors.yaml:5:5: monitors[0].listing: only a monitor of type mcp has a listing",
            id="listing-of-an-http-monitor",
        ),
        pytest.param(
            "", "monitors.yaml: the file is empty; write `monitors:` and a list of monitors", id="empty"
        ),
        pytest.param(
            "monitors: [\n",
            "monitors.yaml:2:1: not valid YAML: while parsing a flow node expected the node content, "
            "but found '<stream end>'",
            id="not-yaml",
        ),
        pytest.param(
            "servers: []\n", "monitors.yaml:1:1: servers: unknown field; the file has one: monitors", id="top"
        ),
    ],
)
def test_a_bad_file_is_refused_at_the_line_and_column_of_the_field(text, expected):
    assert expected in problems(text)


def test_a_listing_reads_as_the_apis_five_fields_stripped_a_key_left_out_empty():
    [monitor] = load(LISTED + "      quote: ' Free tier: 1,000 calls a month '\n", env={}).monitors

    assert monitor.writes_listing
    assert monitor.listing == {
        "namespace": "io.github.a/b",
        "website_url": "",
        "repository_url": "",
        "pricing_url": "",
        "quote": "Free tier: 1,000 calls a month",
    }
    assert "listing" not in monitor.fields  # its own resource: never in the monitor's body


@pytest.mark.parametrize(
    ("entry", "writes", "listing"),
    [
        ("", False, None),  # left out: the stored listing is left as it is
        ("    listing: null\n", True, None),  # null: remove it
    ],
)
def test_a_listing_left_out_is_kept_and_a_null_one_removed(entry, writes, listing):
    [monitor] = load(LISTED.split("    listing:")[0] + entry, env={}).monitors

    assert (monitor.writes_listing, monitor.listing) == (writes, listing)


def test_every_problem_of_a_file_is_listed_at_once():
    found = problems(
        "monitors:\n  - name: A\n    type: ftp\n    target: https://a.example/\n"
        "  - name: B\n    type: mcp\n    target: https://b.example/\n    config: {minTools: -2}\n"
    )

    assert [line.split(": ")[0] for line in found] == ["monitors.yaml:3:5", "monitors.yaml:8:14"]


@pytest.mark.parametrize(
    ("value", "warned"),
    [
        ("Bearer ${DOCS_MCP_KEY}", False),
        ("${DOCS_MCP_KEY}", False),
        ("Bearer upt_live_abcdef", True),
    ],
)
def test_a_literal_header_value_is_a_warning(value, warned):
    text = PRODUCT_TEXT_FILE.replace("Bearer ${DOCS_MCP_KEY}", value)

    spec = load(text, env={"DOCS_MCP_KEY": "k"})

    assert bool(spec.warnings) is warned
    assert all("upt_live" not in w.message for w in spec.warnings)


def test_a_literal_header_value_is_refused_in_ci_mode():
    text = PRODUCT_TEXT_FILE.replace("Bearer ${DOCS_MCP_KEY}", "Bearer upt_live_abcdef")

    found = problems(text, ci=True)

    assert found == [
        "monitors.yaml:12:9: monitors[1].config.headers.Authorization: a literal header value; put the secret "
        'in an environment variable and write "${NAME}" here, so it stays out of the file and out of git '
        "(refused in CI mode)"
    ]


def test_a_bad_header_value_is_named_without_echoing_the_secret():
    found = problems(PRODUCT_TEXT_FILE, env={"DOCS_MCP_KEY": "xyzzy\nplugh"})

    assert len(found) == 1
    assert "monitors[1].config.headers.Authorization" in found[0]
    assert "xyzzy" not in found[0]
    assert "plugh" not in found[0]


def test_a_duplicated_config_key_is_listed_once():
    found = problems(
        "monitors:\n  - name: A\n    type: mcp\n    target: https://a.example/\n    config: {minTools: 1, minTools: 2}\n"
    )

    assert found == [
        "monitors.yaml:5:27: monitors[0].config.minTools: duplicated key (first written on line 5)"
    ]


def test_a_file_of_nested_aliases_is_refused_before_it_expands():
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8)
    )
    text = laughs + "monitors:\n  - name: A\n    type: mcp\n    target: https://a.example/\n    tags: *i\n"

    found = problems(text)

    assert any("expands to more than 100000 values" in line for line in found)
