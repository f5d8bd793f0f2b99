"""Fuzz every API operation from its OpenAPI schema: no generated request may get a 500.

Schemathesis builds the requests from the schema; the test client sends them in process, so
they share the test's database transaction.
"""

from __future__ import annotations

import json

import pytest
import schemathesis
from drf_spectacular.generators import SchemaGenerator
from hypothesis import given
from schemathesis.core import NotSet

from tests.fuzzing import fuzz_settings


def _operations() -> list:
    document = json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True), default=str))
    schema = schemathesis.openapi.from_dict(document)
    return [result.ok() for result in schema.get_all_operations()]


# POST …/run/ runs real checks (and waits for region workers when a broker is configured);
# tests/monitors/test_results_api.py covers it with a loopback server instead.
OPERATIONS = [op for op in _operations() if not op.path.endswith("/run/")]


def test_the_schema_lists_every_operation():
    assert {(op.method.upper(), op.path) for op in OPERATIONS} >= {
        ("GET", "/api/v1/healthchecks/"),
        ("POST", "/api/v1/healthchecks/"),
        ("GET", "/api/v1/healthchecks/{id}/"),
        ("PUT", "/api/v1/healthchecks/{id}/"),
        ("PATCH", "/api/v1/healthchecks/{id}/"),
        ("DELETE", "/api/v1/healthchecks/{id}/"),
        ("POST", "/api/v1/healthchecks/{id}/pause/"),
        ("POST", "/api/v1/healthchecks/{id}/resume/"),
        ("GET", "/api/v1/regions/"),
        ("GET", "/api/v1/organization/"),
        ("GET", "/api/v1/healthchecks/{id}/results/"),
        ("GET", "/api/v1/healthchecks/{id}/status-changes/"),
        ("GET", "/api/v1/healthchecks/{id}/cause-changes/"),
        ("GET", "/api/v1/healthchecks/{id}/uptime/"),
    }


def test_the_schema_documents_the_mcp_config_field_by_field():
    document = SchemaGenerator().get_schema(request=None, public=True)
    config = document["components"]["schemas"]["Healthcheck"]["properties"]["config"]
    mcp = next(s for s in config["anyOf"] if s["title"].startswith("MCP"))["properties"]

    assert set(mcp) == {"uri", "headers", "requiredTools", "minTools", "timeout", "certificateWarnDays"}
    assert all(field.get("description") for name, field in mcp.items() if name != "uri")


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda op: f"{op.method.upper()} {op.path}")
def test_no_generated_request_gets_a_500(fuzz_client, operation):
    @given(case=operation.as_strategy())
    @fuzz_settings(25)
    def send(case):
        path_parameters = dict(case.path_parameters or {})
        # Half the time aim at the real check, so updates get past the 404 and into validation.
        if "id" in path_parameters and hash(str(case.body)) % 2:
            path_parameters["id"] = fuzz_client.seed_for(case.path)
        path = case.path.format(**path_parameters) if path_parameters else case.path
        body = None if isinstance(case.body, NotSet) else case.body
        response = fuzz_client.generic(
            case.method.upper(),
            path + _query(case.query),
            data=json.dumps(body) if not isinstance(case.body, NotSet) else "",
            content_type="application/json",
        )
        assert response.status_code < 500, (case.method, path, case.query, body, response.content[:500])

    send()


def _query(query: dict | None) -> str:
    if not query:
        return ""
    from urllib.parse import urlencode

    return "?" + urlencode(query, doseq=True)
