"""HTTP assertions through the API: bad ones are a 400 naming the field; good ones run end to end.

The end-to-end tests create the check with POST /api/v1/healthchecks/ and run it with the
worker's batch (run-now, embedded mode) against a real HTTP server on loopback.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from monitors.models import Healthcheck

URL = "/api/v1/healthchecks/"
STATUS = {"/ok": {"status": "ok", "queue": 3}, "/degraded": {"status": "degraded", "queue": 250}}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps(STATUS.get(self.path, {})).encode()
        self.send_response(200 if self.path in STATUS else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Region", "eu-west")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def status_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def create(client, config: dict):
    return client.post(URL, {"name": "API health", "type": "http", "config": config}, format="json")


@pytest.mark.parametrize(
    ("assertions", "field"),
    [
        ([{"type": "response_time", "lt_ms": 500}] * 11, "config.assertions"),
        ("status", "config.assertions"),
        (
            [{"type": "status", "in": [200]}, {"type": "json", "path": "$.[", "op": "equals", "value": 1}],
            "config.assertions[1].path",
        ),
        ([{"type": "json", "path": "$.status", "op": "near", "value": 1}], "config.assertions[0].op"),
        ([{"type": "body", "op": "matches", "value": "(unclosed"}], "config.assertions[0].value"),
        ([{"type": "body", "op": "matches", "value": r"(a)\1"}], "config.assertions[0].value"),
        ([{"type": "header", "op": "equals", "value": "x"}], "config.assertions[0].name"),
        ([{"type": "teapot"}], "config.assertions[0].type"),
        ([{"type": "response_time", "lt_ms": "fast"}], "config.assertions[0].lt_ms"),
    ],
)
def test_bad_assertions_are_a_400_naming_the_field(client, assertions, field):
    response = create(client, {"uri": "https://example.com/", "assertions": assertions})

    assert response.status_code == 400, response.json()
    assert field in response.json(), response.json()
    assert Healthcheck.objects.count() == 0


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"method": "GET", "body": "x"}, "config.body"),
        ({"method": "POST", "contentType": "text/plain"}, "config.contentType"),
        ({"method": "POST", "body": "x", "contentType": "not a type"}, "config.contentType"),
        ({"expectedStatus": [200], "assertions": [{"type": "status", "in": [200]}]}, "config.expectedStatus"),
        (
            {"method": "HEAD", "assertions": [{"type": "body", "op": "contains", "value": "x"}]},
            "config.assertions",
        ),
    ],
)
def test_bad_request_settings_are_a_400_naming_the_field(client, config, field):
    response = create(client, {"uri": "https://example.com/", **config})

    assert response.status_code == 400, response.json()
    assert field in response.json(), response.json()


def test_the_api_answers_the_config_as_given(client):
    assertions = [
        {"type": "status", "in": [200, "3xx"]},
        {"type": "json", "path": "$.status", "op": "equals", "value": "ok"},
        {"type": "header", "name": "X-Debug", "op": "absent"},
        {"type": "response_time", "lt_ms": 800},
    ]
    config = {
        "uri": "https://example.com/api",
        "method": "PATCH",
        "body": {"ping": 1},
        "assertions": assertions,
    }

    body = create(client, config).json()

    assert body["config"]["assertions"] == assertions
    assert (body["config"]["method"], body["config"]["body"]) == ("PATCH", '{"ping":1}')
    assert body["config"]["contentType"] == "application/json"
    assert "expectedStatus" not in body["config"]
    again = client.put(
        f"{URL}{body['id']}/", {"name": "again", "type": "http", "config": body["config"]}, format="json"
    )
    assert again.status_code == 200, again.json()
    assert again.json()["config"] == body["config"]


def test_an_existing_config_keeps_its_shape(client):
    body = create(client, {"uri": "https://example.com/", "keyword": "ok"}).json()

    assert set(body["config"]) == {
        "uri",
        "method",
        "headers",
        "body",
        "expectedStatus",
        "keyword",
        "keywordAbsent",
        "followRedirects",
        "timeout",
    }


def test_the_openapi_schema_documents_assertions(client):
    schema = client.get("/api/v1/schema/", {"format": "json"}).json()

    configs = schema["components"]["schemas"]["Healthcheck"]["properties"]["config"]["anyOf"]
    http = next(item for item in configs if item.get("title") == "HTTP check config (type 1)")
    assert http["properties"]["assertions"]["maxItems"] == 10
    assert "OPTIONS" in http["properties"]["method"]["enum"]


ASSERTIONS = [
    {"type": "status", "in": ["2xx"]},
    {"type": "json", "path": "$.status", "op": "equals", "value": "ok"},
    {"type": "json", "path": "$.queue", "op": "le", "value": 100},
    {"type": "header", "name": "X-Region", "op": "equals", "value": "eu-west"},
]


@pytest.mark.parametrize(
    ("path", "status", "kind", "reason"),
    [
        ("/ok", "up", None, ""),
        (
            "/degraded",
            "down",
            "assertion",
            '$.status was "degraded", expected "ok"; $.queue was 250, expected <= 100',
        ),
    ],
)
def test_the_worker_runs_the_assertions_against_a_real_server(
    client, settings, status_server, path, status, kind, reason
):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    settings.REDIS_URL = ""  # the embedded mode: run-now runs the batch in this process
    created = create(client, {"uri": status_server + path, "assertions": ASSERTIONS})
    assert created.status_code == 201, created.json()

    results = client.post(f"{URL}{created.json()['id']}/run/").json()

    assert results
    for result in results:
        assert (result["status"], result["kind"], result["reason"]) == (status, kind, reason)
        verdicts = result["details"]["assertions"]
        assert [item["assertion"] for item in verdicts] == [
            "status in 2xx",
            '$.status equals "ok"',
            "$.queue <= 100",
            'header X-Region equals "eu-west"',
        ]
        assert [item["passed"] for item in verdicts] == (
            [True, True, True, True] if status == "up" else [True, False, False, True]
        )
