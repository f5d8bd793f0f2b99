"""A check type that only a test registers runs through API validation, the schema and the worker.

This is the registry's promise: a new type is one module and one registration, and nothing in
monitors names a type.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from probes.checks import CheckKind, register, unregister
from probes.config import ConfigError, config_fields, headers_field, timeout_field, uri_field
from probes.connection import Connection, uri_host
from probes.types import FailureKind, Headers, ProbeOutcome, Status

URL = "/api/v1/healthchecks/"
ECHO_NUMBER = 99


@dataclass(frozen=True, slots=True)
class EchoConfig:
    uri: str
    word: str
    headers: Headers = ()
    timeout: float = 5.0

    @property
    def target(self) -> str:
        return self.uri

    @property
    def host(self) -> str:
        return uri_host(self.uri)


def parse_echo(raw: object) -> EchoConfig:
    data, errors = config_fields(raw, frozenset({"uri", "word", "headers", "timeout"}))
    uri = uri_field(data, errors)
    headers = headers_field(data.get("headers"), errors)
    word = data.get("word")
    if not isinstance(word, str) or not word:
        errors["word"] = "Must be a non-empty string."
    timeout = timeout_field(data.get("timeout", 5), errors)
    if errors:
        raise ConfigError(errors)
    return EchoConfig(uri=uri, word=str(word), headers=headers, timeout=timeout)


def echo_to_api(config: EchoConfig) -> dict[str, Any]:
    return {
        "uri": config.uri,
        "word": config.word,
        "headers": dict(config.headers),
        "timeout": config.timeout,
    }


async def run_echo(config: EchoConfig, conn: Connection, *, deadline: float) -> ProbeOutcome:
    if config.word == "down":
        return ProbeOutcome(status=Status.DOWN, kind=FailureKind.PROTOCOL, reason="The word was down")
    return ProbeOutcome(status=Status.UP)


ECHO_SCHEMA = {
    "title": "Echo check config (a test's own type)",
    "type": "object",
    "required": ["uri", "word"],
    "properties": {"uri": {"type": "string"}, "word": {"type": "string"}},
}


@pytest.fixture
def echo() -> Iterator[CheckKind[EchoConfig]]:
    kind = register(
        CheckKind(
            number=ECHO_NUMBER,
            name="echo",
            title="Echo check",
            config_type=EchoConfig,
            parse=parse_echo,
            to_api=echo_to_api,
            schema=ECHO_SCHEMA,
            run=run_echo,
        )
    )
    yield kind
    unregister(kind)


def create(client, word: str = "hello") -> Any:
    return client.post(
        URL,
        {"name": "echo", "type": "echo", "config": {"uri": "https://echo.example/", "word": word}},
        format="json",
    )


def test_the_api_validates_its_config_with_the_types_own_parser(client, echo):
    response = create(client, word="")

    assert response.status_code == 400
    assert "config.word" in str(response.json())


def test_the_api_creates_it_and_answers_its_number_name_and_config(client, echo):
    response = create(client)

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["type"], body["type_name"]) == (ECHO_NUMBER, "echo")
    assert body["config"] == {"uri": "https://echo.example/", "word": "hello", "headers": {}, "timeout": 5.0}


def test_the_list_filters_by_its_name(client, echo):
    create(client)

    body = client.get(URL, {"type": "echo"}).json()

    assert [item["type_name"] for item in body["results"]] == ["echo"]


def test_the_openapi_schema_documents_its_config_and_its_number(client, echo):
    schema = client.get("/api/v1/schema/", {"format": "json"}).json()

    healthcheck = schema["components"]["schemas"]["Healthcheck"]["properties"]
    assert ECHO_SCHEMA in healthcheck["config"]["anyOf"]
    assert ECHO_NUMBER in healthcheck["type"]["oneOf"][0]["enum"]
    assert "echo" in healthcheck["type"]["oneOf"][1]["enum"]


@pytest.mark.parametrize(("word", "status"), [("hello", "up"), ("down", "down")])
def test_the_worker_runs_it_and_records_its_outcome(client, echo, settings, word, status):
    settings.REDIS_URL = ""  # the embedded mode: run-now runs the batch in this process
    check_id = create(client, word=word).json()["id"]

    results = client.post(f"{URL}{check_id}/run/").json()

    assert results
    assert {result["status"] for result in results} == {status}


def test_unknown_types_are_refused_naming_the_registered_ones(client, echo):
    response = client.post(URL, {"name": "x", "type": "ftp", "config": {}}, format="json")

    assert response.status_code == 400
    assert '99 or "echo"' in str(response.json())
