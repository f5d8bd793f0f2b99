"""The OpenAPI schema documents exactly what webhooks receive: real payloads validate against it."""

from __future__ import annotations

from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from jsonschema import Draft202012Validator

from alerts.channels import EventType
from alerts.channels.render import payload
from tests.alerts.channel_support import make_alert, make_notice, tools_alert


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    body = schema["webhooks"]["alert"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    return Draft202012Validator({"components": schema["components"], **body})


def payloads() -> list[tuple[str, dict[str, Any]]]:
    single = [
        kind
        for kind in EventType
        if kind not in (EventType.TOOLS_CHANGED, EventType.INCIDENTS_DIGEST, EventType.CHANNEL_TEST)
    ]
    cases = [(kind.value, payload(make_alert(kind))) for kind in single]
    cases.append(
        (
            "resolved",
            payload(
                make_alert(EventType.INCIDENT_RESOLVED, notices=(make_notice(status="up", resolved=True),))
            ),
        )
    )
    cases.append(("tools", payload(tools_alert())))
    cases.append(
        (
            "digest",
            payload(
                make_alert(EventType.INCIDENTS_DIGEST, notices=(make_notice(), make_notice(name="Other")))
            ),
        )
    )
    cases.append(("test", payload(make_alert(EventType.CHANNEL_TEST))))
    return cases


@pytest.mark.parametrize(("case", "body"), payloads(), ids=[case for case, _ in payloads()])
def test_every_kind_of_webhook_body_matches_the_documented_schema(validator, case, body):
    errors = [error.message for error in validator.iter_errors(body)]

    assert errors == []


def test_the_schema_refuses_what_no_webhook_sends(validator):
    body = payload(make_alert())
    body["type"] = "incident.exploded"
    del body["data"]["organization"]

    assert len(list(validator.iter_errors(body))) == 2
