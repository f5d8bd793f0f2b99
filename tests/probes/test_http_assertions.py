"""HTTP assertions, pure: parsing (each bad field named) and judging (each failure named with what was seen)."""

from __future__ import annotations

import pytest

from probes.checks.http import http_config_to_api, parse_http_config
from probes.checks.http_assertions import (
    MATCHED_TEXT_CHARS,
    Seen,
    StatusRange,
    assertions_to_api,
    evaluate,
    failure_reason,
    judged_details,
    parse_assertions,
)
from probes.config import ConfigError

URI = "https://api.example.com/health"


def parsed(raw):
    errors: dict[str, str] = {}
    assertions = parse_assertions(raw, errors)
    assert not errors, errors
    return assertions


def problems(raw) -> dict[str, str]:
    errors: dict[str, str] = {}
    parse_assertions(raw, errors)
    return errors


def seen(status=200, headers=(), body: str | None = "", elapsed_ms=10.0) -> Seen:
    return Seen(status, [(name.lower(), value) for name, value in headers], body, elapsed_ms)


# --- parsing -----------------------------------------------------------------------------------


def test_every_kind_parses_and_goes_back_to_the_api_as_given():
    raw = [
        {"type": "status", "in": [200, "2xx", "200-299"]},
        {"type": "header", "name": "X-Cache", "op": "equals", "value": "HIT"},
        {"type": "header", "name": "Server", "op": "absent"},
        {"type": "body", "op": "not_contains", "value": "error"},
        {"type": "body", "op": "matches", "value": r"\bok\b"},
        {"type": "json", "path": "$.status", "op": "equals", "value": "ok"},
        {"type": "json", "path": "$.items[*].id", "op": "contains", "value": 3},
        {"type": "json", "path": "$.latency", "op": "le", "value": 250.5},
        {"type": "json", "path": "$.error", "op": "exists", "value": False},
        {"type": "response_time", "lt_ms": 500},
    ]
    assertions = parsed(raw)
    assert len(assertions) == 10
    assert assertions[0].ranges == (StatusRange(200, 200), StatusRange(200, 299), StatusRange(200, 299))
    assert assertions_to_api(assertions) == [
        {"type": "status", "in": [200, "2xx", "2xx"]},
        *raw[1:],
    ]


@pytest.mark.parametrize(
    ("raw", "key", "words"),
    [
        ([{"type": "response_time", "lt_ms": 500}] * 11, "assertions", "At most 10 assertions (got 11)"),
        ({"type": "status"}, "assertions", "Must be a list"),
        (["status"], "assertions[0]", "Must be an object"),
        ([{"type": "cookie"}], "assertions[0].type", "status, header, body, json, response_time"),
        ([{"type": "status", "in": []}], "assertions[0].in", "non-empty list"),
        ([{"type": "status", "in": ["9xx"]}], "assertions[0].in", 'Got "9xx"'),
        ([{"type": "status", "in": [200], "op": "equals"}], "assertions[0].op", "Unknown field"),
        (
            [{"type": "header", "name": "X Y", "op": "equals", "value": "a"}],
            "assertions[0].name",
            "header name",
        ),
        ([{"type": "header", "name": "X", "op": "is", "value": "a"}], "assertions[0].op", "equals, contains"),
        ([{"type": "header", "name": "X", "op": "equals"}], "assertions[0].value", "non-empty string"),
        ([{"type": "header", "name": "X", "op": "absent", "value": "a"}], "assertions[0].value", "no value"),
        ([{"type": "body", "op": "equals", "value": "a"}], "assertions[0].op", "contains, not_contains"),
        ([{"type": "body", "op": "contains", "value": "x" * 1025}], "assertions[0].value", "1024"),
        (
            [{"type": "body", "op": "matches", "value": "(unclosed"}],
            "assertions[0].value",
            "Not a valid regular",
        ),
        ([{"type": "body", "op": "matches", "value": "a" * 257}], "assertions[0].value", "at most 256"),
        ([{"type": "body", "op": "matches", "value": r"(a)\1"}], "assertions[0].value", "no backreferences"),
        (
            [{"type": "header", "name": "X", "op": "matches", "value": "^(?!nginx)"}],
            "assertions[0].value",
            "lookahead or lookbehind",
        ),
        ([{"type": "body", "op": "matches", "value": "(?<=a)b"}], "assertions[0].value", "RE2"),
        ([{"type": "body", "op": "matches", "value": "a++"}], "assertions[0].value", "possessive"),
        ([{"type": "json", "path": "$.[", "op": "exists"}], "assertions[0].path", "Not a valid JSONPath"),
        ([{"type": "json", "path": "$.a[?", "op": "exists"}], "assertions[0].path", "Not a valid JSONPath"),
        ([{"type": "json", "path": "", "op": "exists"}], "assertions[0].path", "JSONPath"),
        ([{"type": "json", "path": "$.a", "op": "between"}], "assertions[0].op", "equals, contains, exists"),
        ([{"type": "json", "path": "$.a", "op": "lt", "value": "5"}], "assertions[0].value", "a number"),
        ([{"type": "json", "path": "$.a", "op": "gt", "value": True}], "assertions[0].value", "a number"),
        ([{"type": "json", "path": "$.a", "op": "equals"}], "assertions[0].value", "required"),
        ([{"type": "json", "path": "$.a", "op": "exists", "value": "yes"}], "assertions[0].value", "true"),
        ([{"type": "response_time", "lt_ms": 0}], "assertions[0].lt_ms", "1 to 600000"),
        ([{"type": "response_time", "lt_ms": 1.5}], "assertions[0].lt_ms", "whole number"),
    ],
)
def test_a_bad_assertion_is_named_by_its_place(raw, key, words):
    errors = problems(raw)
    assert key in errors, errors
    assert words in errors[key]


def test_each_bad_assertion_is_named_and_the_good_ones_are_not():
    errors = problems(
        [
            {"type": "status", "in": [200]},
            {"type": "json", "path": "$..[", "op": "equals", "value": 1},
            {"type": "response_time", "lt_ms": 100},
            {"type": "json", "path": "$.ok", "op": "nearly", "value": 1},
        ]
    )
    assert set(errors) == {"assertions[1].path", "assertions[3].op"}


def test_nested_repeats_are_allowed_as_re2_matches_them_in_linear_time():
    parsed(
        [
            {"type": "body", "op": "matches", "value": r"^\d+(\.\d+)?$"},
            {"type": "body", "op": "matches", "value": r"(ab){2,3}c+"},
            {"type": "body", "op": "matches", "value": r"^(a+)+$"},
            {"type": "header", "name": "X", "op": "matches", "value": r"(x*)*y"},
        ]
    )


@pytest.mark.parametrize(
    ("pattern", "body"),
    [
        # Each backtracks exponentially in Python's re: the run would never end (pytest-timeout).
        ("(a|a)*b", "a" * 100_000),
        ("(x+x+)+y", "x" * 100_000),
        ("^(a+)+$", "a" * 100_000 + "!"),
    ],
)
def test_a_catastrophic_pattern_against_a_long_body_is_judged(pattern, body):
    (judged,) = evaluate(parsed([{"type": "body", "op": "matches", "value": pattern}]), seen(body=body))

    assert judged.passed is False
    assert judged.failure.startswith("body does not match")


# --- the HTTP config around them ----------------------------------------------------------------


def config_errors(**config) -> dict[str, str]:
    with pytest.raises(ConfigError) as caught:
        parse_http_config({"uri": URI, **config})
    return caught.value.errors


def test_a_status_assertion_replaces_expected_status():
    config = parse_http_config({"uri": URI, "assertions": [{"type": "status", "in": [404]}]})
    shape = parse_http_config({"uri": URI}).expected_status
    assert config.expected_status == shape
    assert "expectedStatus" not in http_config_to_api(config)
    assert "expectedStatus" in config_errors(
        expectedStatus=[200], assertions=[{"type": "status", "in": [200]}]
    )


def test_head_reads_no_body_so_body_assertions_are_refused():
    errors = config_errors(method="HEAD", assertions=[{"type": "body", "op": "contains", "value": "x"}])
    assert "HEAD" in errors["assertions"]


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
def test_methods_that_send_a_body(method):
    config = parse_http_config({"uri": URI, "method": method.lower(), "body": {"a": [1, "é"]}})
    assert (config.method, config.body, config.content_type) == (method, '{"a":[1,"é"]}', "application/json")


@pytest.mark.parametrize(
    ("config", "key", "words"),
    [
        ({"method": "GET", "body": "x"}, "body", "A GET check sends no body"),
        ({"method": "HEAD", "body": "x"}, "body", "A HEAD check sends no body"),
        ({"method": "POST", "body": 12}, "body", "text, or a JSON object"),
        ({"method": "POST", "contentType": "text/plain"}, "contentType", "Needs a body"),
        ({"method": "POST", "body": "x", "contentType": "plain"}, "contentType", "media type"),
        ({"method": "POST", "body": "x", "contentType": "text/plain\r\nX: 1"}, "contentType", "media type"),
        (
            {"method": "POST", "body": "x", "contentType": "text/plain", "headers": {"Content-Type": "a/b"}},
            "contentType",
            "not both",
        ),
        ({"method": "TRACE"}, "method", "OPTIONS"),
    ],
)
def test_bad_request_settings_are_named(config, key, words):
    errors = config_errors(**config)
    assert words in errors[key], errors


def test_a_text_body_keeps_its_content_type_as_given():
    config = parse_http_config(
        {"uri": URI, "method": "PUT", "body": "a=1", "contentType": 'text/plain; charset="utf-8"'}
    )
    assert (config.body, config.content_type) == ("a=1", 'text/plain; charset="utf-8"')


# --- judging -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("assertion", "response", "failure"),
    [
        ({"type": "status", "in": ["2xx"]}, seen(status=204), ""),
        (
            {"type": "status", "in": [200, "300-302"]},
            seen(status=503),
            "status was 503, expected 200, 300-302",
        ),
        (
            {"type": "header", "name": "X-Cache", "op": "equals", "value": "HIT"},
            seen(headers=[("X-Cache", "HIT")]),
            "",
        ),
        (
            {"type": "header", "name": "X-Cache", "op": "equals", "value": "HIT"},
            seen(headers=[("X-Cache", "MISS")]),
            'header X-Cache was "MISS", expected "HIT"',
        ),
        (
            {"type": "header", "name": "X-Cache", "op": "contains", "value": "HIT"},
            seen(),
            'header X-Cache is missing, expected to contain "HIT"',
        ),
        (
            {"type": "header", "name": "Vary", "op": "contains", "value": "Origin"},
            seen(headers=[("Vary", "Accept"), ("Vary", "Origin")]),
            "",
        ),
        (
            {"type": "header", "name": "Server", "op": "matches", "value": r"^nginx/\d"},
            seen(headers=[("Server", "Apache")]),
            'header Server was "Apache", expected to match "^nginx/\\\\d"',
        ),
        (
            {"type": "header", "name": "Server", "op": "absent"},
            seen(headers=[("Server", "nginx")]),
            'header Server was "nginx", expected absent',
        ),
        ({"type": "header", "name": "Server", "op": "absent"}, seen(), ""),
        ({"type": "body", "op": "contains", "value": "ok"}, seen(body="all ok"), ""),
        ({"type": "body", "op": "contains", "value": "ok"}, seen(body="bad"), 'body does not contain "ok"'),
        (
            {"type": "body", "op": "not_contains", "value": "error"},
            seen(body="an error"),
            'body contains "error", expected it absent',
        ),
        ({"type": "body", "op": "matches", "value": r"v\d+\.\d+"}, seen(body="version v2.14"), ""),
        (
            {"type": "body", "op": "matches", "value": r"v\d+\.\d+"},
            seen(body="v2"),
            'body does not match "v\\\\d+\\\\.\\\\d+"',
        ),
        ({"type": "body", "op": "contains", "value": "ok"}, seen(body=None), "no body was read"),
        (
            {"type": "json", "path": "$.status", "op": "equals", "value": "ok"},
            seen(body='{"status": "ok"}'),
            "",
        ),
        (
            {"type": "json", "path": "$.status", "op": "equals", "value": "ok"},
            seen(body='{"status": "degraded"}'),
            '$.status was "degraded", expected "ok"',
        ),
        (
            {"type": "json", "path": "$.status", "op": "equals", "value": "ok"},
            seen(body="{}"),
            '$.status is missing, expected "ok"',
        ),
        ({"type": "json", "path": "$.n", "op": "equals", "value": 1}, seen(body='{"n": 1.0}'), ""),
        (
            {"type": "json", "path": "$.n", "op": "equals", "value": 1},
            seen(body='{"n": true}'),
            "$.n was true, expected 1",
        ),
        (
            {"type": "json", "path": "$.tags", "op": "contains", "value": "eu"},
            seen(body='{"tags": ["us", "eu"]}'),
            "",
        ),
        (
            {"type": "json", "path": "$.msg", "op": "contains", "value": "ready"},
            seen(body='{"msg": "all ready"}'),
            "",
        ),
        (
            {"type": "json", "path": "$.items[*].state", "op": "contains", "value": "down"},
            seen(body='{"items": [{"state": "up"}, {"state": "up"}]}'),
            '$.items[*].state was ["up", "up"], expected to contain "down"',
        ),
        ({"type": "json", "path": "$.db", "op": "exists"}, seen(body='{"db": null}'), ""),
        ({"type": "json", "path": "$.db", "op": "exists"}, seen(body='{"cache": 1}'), "$.db is missing"),
        (
            {"type": "json", "path": "$.error", "op": "exists", "value": False},
            seen(body='{"error": "disk full"}'),
            '$.error was "disk full", expected absent',
        ),
        ({"type": "json", "path": "$.lag", "op": "lt", "value": 5}, seen(body='{"lag": 4.9}'), ""),
        (
            {"type": "json", "path": "$.lag", "op": "lt", "value": 5},
            seen(body='{"lag": 5}'),
            "$.lag was 5, expected < 5",
        ),
        ({"type": "json", "path": "$.lag", "op": "le", "value": 5}, seen(body='{"lag": 5}'), ""),
        (
            {"type": "json", "path": "$.lag", "op": "gt", "value": 5},
            seen(body='{"lag": 5}'),
            "$.lag was 5, expected > 5",
        ),
        ({"type": "json", "path": "$.lag", "op": "ge", "value": 5}, seen(body='{"lag": 5}'), ""),
        (
            {"type": "json", "path": "$.lag", "op": "ge", "value": 5},
            seen(body='{"lag": "6"}'),
            '$.lag was "6", expected a number >= 5',
        ),
        (
            {"type": "json", "path": "$.status", "op": "equals", "value": "ok"},
            seen(body="<html>oops</html>"),
            "$.status: the body is not JSON (Expecting value: line 1 column 1 (char 0))",
        ),
        (
            {"type": "json", "path": "$.a", "op": "exists"},
            seen(body="[" * 100 + "]" * 100),
            "$.a: the body nests arrays and objects more than 64 levels deep",
        ),
        ({"type": "response_time", "lt_ms": 500}, seen(elapsed_ms=499.4), ""),
        (
            {"type": "response_time", "lt_ms": 500},
            seen(elapsed_ms=712.3),
            "response time was 712 ms, expected < 500 ms",
        ),
    ],
)
def test_each_assertion_holds_or_names_what_was_seen(assertion, response, failure):
    (judged,) = evaluate(parsed([assertion]), response)
    assert judged.passed is (failure == "")
    assert judged.failure.startswith(failure) if failure else judged.failure == ""


def test_several_failures_are_all_named_in_order_and_the_details_list_every_verdict():
    assertions = parsed(
        [
            {"type": "status", "in": ["2xx"]},
            {"type": "json", "path": "$.status", "op": "equals", "value": "ok"},
            {"type": "header", "name": "X-Region", "op": "equals", "value": "eu"},
            {"type": "json", "path": "$.queue", "op": "lt", "value": 100},
        ]
    )
    judged = evaluate(
        assertions, seen(body='{"status": "degraded", "queue": 7}', headers=[("X-Region", "eu")])
    )
    assert failure_reason(judged) == '$.status was "degraded", expected "ok"'
    assert judged_details(judged) == {
        "assertions": [
            {"assertion": "status in 2xx", "passed": True, "seen": 200},
            {"assertion": '$.status equals "ok"', "passed": False, "seen": "degraded"},
            {"assertion": 'header X-Region equals "eu"', "passed": True, "seen": "eu"},
            {"assertion": "$.queue < 100", "passed": True, "seen": 7},
        ]
    }
    judged = evaluate(assertions, seen(status=500, body='{"status": "down", "queue": 900}'))
    assert failure_reason(judged) == (
        'status was 500, expected 2xx; $.status was "down", expected "ok"; '
        'header X-Region is missing, expected "eu"; $.queue was 900, expected < 100'
    )


def test_long_values_are_cut_in_the_reason_and_the_details():
    (judged,) = evaluate(
        parsed([{"type": "json", "path": "$.s", "op": "equals", "value": "ok"}]),
        seen(body='{"s": "' + "x" * 500 + '"}'),
    )
    assert len(judged.failure) < 120
    assert len(judged_details([judged])["assertions"][0]["seen"]) == 200


def test_a_regex_sees_the_first_mib_of_the_body_only_and_says_so():
    body = "a" * MATCHED_TEXT_CHARS + "needle"
    (judged,) = evaluate(parsed([{"type": "body", "op": "matches", "value": "needle"}]), seen(body=body))
    assert judged.failure == 'body does not match "needle" in its first MiB'
    (contains,) = evaluate(parsed([{"type": "body", "op": "contains", "value": "needle"}]), seen(body=body))
    assert contains.passed
