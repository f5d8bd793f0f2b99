"""HTTP assertions against a real HTTP server on loopback: each kind up and down, methods and bodies."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

import pytest
from probe_support import http_response, loopback, read_request, unless_hung

from probes.checks.http import parse_http_config
from probes.runner import ProbeEnv, run_check
from probes.types import FailureKind, ProbeOutcome, Status

OPEN = ProbeEnv(allow_private=True)


@dataclass
class Answer:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    # Seconds the server waits before answering (a slow server for response_time, never a test's wait).
    delay: float = 0.0


@dataclass
class Request:
    method: str
    headers: dict[str, str]
    body: bytes


def serve(answer: Answer, seen: list[Request]):
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            method, headers, body = await read_request(reader)
            seen.append(Request(method, headers, body))
            if answer.delay:
                await asyncio.sleep(answer.delay)
            head = http_response(answer.status, answer.body, answer.headers)
            writer.write(head[: -len(answer.body)] if method == "HEAD" and answer.body else head)
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    return handler


def check(config: dict, answer: Answer) -> tuple[ProbeOutcome, list[Request]]:
    seen: list[Request] = []

    async def main() -> ProbeOutcome:
        async with loopback(serve(answer, seen)) as port:
            parsed = parse_http_config({"uri": f"http://127.0.0.1:{port}/health", **config})
            return await unless_hung(run_check(parsed, OPEN))

    return asyncio.run(main()), seen


def asserting(*assertions: dict, **config) -> dict:
    return {"assertions": list(assertions), **config}


JSON = {"content-type": "application/json"}
HEALTHY = json.dumps({"status": "ok", "queue": 3, "checks": [{"name": "db", "up": True}]}).encode()


@pytest.mark.parametrize(
    ("assertion", "answer", "reason"),
    [
        ({"type": "status", "in": [404]}, Answer(404), ""),
        ({"type": "status", "in": ["2xx", "301"]}, Answer(503, b"busy"), "status was 503, expected 2xx, 301"),
        (
            {"type": "header", "name": "X-Cache", "op": "equals", "value": "HIT"},
            Answer(headers={"X-Cache": "HIT"}),
            "",
        ),
        (
            {"type": "header", "name": "X-Cache", "op": "equals", "value": "HIT"},
            Answer(headers={"X-Cache": "MISS"}),
            'header X-Cache was "MISS", expected "HIT"',
        ),
        (
            {"type": "header", "name": "Server", "op": "matches", "value": r"^nginx/1\."},
            Answer(headers={"Server": "nginx/1.27"}),
            "",
        ),
        (
            {"type": "header", "name": "X-Debug", "op": "absent"},
            Answer(headers={"X-Debug": "on"}),
            'header X-Debug was "on", expected absent',
        ),
        (
            {"type": "body", "op": "contains", "value": "operational"},
            Answer(body=b"all systems operational"),
            "",
        ),
        (
            {"type": "body", "op": "not_contains", "value": "error"},
            Answer(body=b"an error"),
            'body contains "error", expected it absent',
        ),
        ({"type": "body", "op": "matches", "value": r"build \d+"}, Answer(body=b"build 1234"), ""),
        (
            {"type": "body", "op": "matches", "value": r"build \d+"},
            Answer(body=b"build x"),
            'body does not match "build \\\\d+"',
        ),
        (
            {"type": "json", "path": "$.status", "op": "equals", "value": "ok"},
            Answer(body=HEALTHY, headers=JSON),
            "",
        ),
        (
            {"type": "json", "path": "$.status", "op": "equals", "value": "ok"},
            Answer(body=b'{"status": "degraded"}', headers=JSON),
            '$.status was "degraded", expected "ok"',
        ),
        (
            {"type": "json", "path": "$.checks[?@.name == 'db'].up", "op": "equals", "value": True},
            Answer(body=HEALTHY),
            "",
        ),
        (
            {"type": "json", "path": "$.queue", "op": "lt", "value": 2},
            Answer(body=HEALTHY),
            "$.queue was 3, expected < 2",
        ),
        ({"type": "json", "path": "$.errors", "op": "exists"}, Answer(body=HEALTHY), "$.errors is missing"),
        (
            {"type": "json", "path": "$.status", "op": "exists"},
            Answer(body=b"<html>maintenance</html>", headers={"content-type": "text/html"}),
            "$.status: the body is not JSON (Expecting value: line 1 column 1 (char 0))",
        ),
        ({"type": "response_time", "lt_ms": 60_000}, Answer(), ""),
        ({"type": "response_time", "lt_ms": 1}, Answer(delay=0.02), "response time was "),
    ],
)
def test_each_kind_up_and_down_on_a_real_server(assertion, answer, reason):
    outcome, _ = check(asserting(assertion), answer)
    if not reason:
        assert outcome.status is Status.UP, outcome.reason
        assert outcome.details["assertions"][0]["passed"] is True
        return
    assert (outcome.status, outcome.kind) == (Status.DOWN, FailureKind.ASSERTION)
    assert outcome.reason.startswith(reason)
    assert outcome.details["assertions"][0]["passed"] is False
    assert outcome.http_status == answer.status


def test_a_failing_check_names_each_failure_and_records_every_verdict():
    outcome, _ = check(
        asserting(
            {"type": "status", "in": ["2xx"]},
            {"type": "json", "path": "$.status", "op": "equals", "value": "ok"},
            {"type": "json", "path": "$.queue", "op": "le", "value": 100},
            {"type": "header", "name": "X-Region", "op": "equals", "value": "eu-west"},
        ),
        Answer(body=b'{"status": "degraded", "queue": 250}', headers={**JSON, "X-Region": "eu-west"}),
    )
    assert outcome.reason == '$.status was "degraded", expected "ok"; $.queue was 250, expected <= 100'
    assert outcome.details == {
        "assertions": [
            {"assertion": "status in 2xx", "passed": True, "seen": 200},
            {"assertion": '$.status equals "ok"', "passed": False, "seen": "degraded"},
            {"assertion": "$.queue <= 100", "passed": False, "seen": 250},
            {"assertion": 'header X-Region equals "eu-west"', "passed": True, "seen": "eu-west"},
        ]
    }


def test_without_a_status_assertion_expected_status_still_comes_first():
    outcome, _ = check(asserting({"type": "body", "op": "contains", "value": "ok"}), Answer(500, b"down"))
    assert (outcome.kind, outcome.reason) == (FailureKind.HTTP_STATUS, "HTTP 500 (expected 2xx): down")


def test_the_keyword_rule_still_holds_beside_assertions():
    outcome, _ = check(
        asserting({"type": "body", "op": "contains", "value": "up"}, keyword="healthy"), Answer(body=b"up")
    )
    assert outcome.kind is FailureKind.KEYWORD


def test_the_body_is_decoded_with_the_responses_charset():
    outcome, _ = check(
        asserting({"type": "body", "op": "contains", "value": "café ouvert"}),
        Answer(
            body="café ouvert".encode("latin-1"), headers={"content-type": "text/plain; charset=iso-8859-1"}
        ),
    )
    assert outcome.status is Status.UP, outcome.reason


def test_a_body_over_the_cap_is_too_large_as_for_a_keyword():
    outcome, _ = check(
        asserting({"type": "body", "op": "contains", "value": "x"}), Answer(body=b"a" * (5 * 1024 * 1024 + 1))
    )
    assert outcome.kind is FailureKind.TOO_LARGE


def test_head_with_header_assertions_reads_no_body():
    outcome, seen = check(
        asserting({"type": "header", "name": "ETag", "op": "contains", "value": "v1"}, method="HEAD"),
        Answer(body=b"ignored", headers={"ETag": '"v1-abc"'}),
    )
    assert outcome.status is Status.UP, outcome.reason
    assert seen[0].method == "HEAD"


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
def test_a_json_body_is_sent_with_its_content_type(method):
    outcome, seen = check({"method": method, "body": {"probe": "uptimy", "n": 1}}, Answer(204))
    assert outcome.status is Status.UP, outcome.reason
    (request,) = seen
    assert (request.method, request.body) == (method, b'{"probe":"uptimy","n":1}')
    assert request.headers["content-type"] == "application/json"


def test_a_text_body_goes_with_the_content_type_given():
    _, seen = check({"method": "PUT", "body": "ping", "contentType": "text/plain; charset=utf-8"}, Answer())
    assert (seen[0].body, seen[0].headers["content-type"]) == (b"ping", "text/plain; charset=utf-8")


def test_a_get_sends_no_content_type():
    _, seen = check({}, Answer())
    assert "content-type" not in seen[0].headers
