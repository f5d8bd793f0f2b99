"""Hostile and careless API input is a 400 naming the field, never a 500 (issue 8, classes 3, 7, 10).

Also: stored header values stay with the origin they were given for.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

import pytest

from monitors.api.parsers import MAX_DEPTH
from monitors.models import Healthcheck
from monitors.secrets import MASK, decrypt_headers
from monitors.services import RunResult, healthcheck_create, outcomes_record
from probes.checks.mcp import MCP
from probes.types import ProbeOutcome, Status, Timings

URL = "/api/v1/healthchecks/"
SEED = {
    "name": "Docs MCP",
    "type": "mcp",
    "config": {
        "uri": "https://mcp.example.com/mcp",
        "headers": {"Authorization": "Bearer your-key", "X-Api-Key": "k-123"},
        "requiredTools": ["search_docs"],
    },
    "tags": ["prod"],
}


def send(client, method: str, url: str, body) -> object:
    """Send ``body`` as JSON text, lone surrogates included (json.dumps escapes them as \\udXXX)."""
    return client.generic(method, url, data=json.dumps(body), content_type="application/json")


def send_text(client, method: str, url: str, text: str) -> object:
    return client.generic(method, url, data=text, content_type="application/json")


@pytest.fixture
def check(client) -> dict:
    response = send(client, "POST", URL, SEED)
    assert response.status_code == 201, response.json()
    return response.json()


def detail(body: dict) -> str:
    return f"{URL}{body['id']}/"


def stored(body: dict) -> Healthcheck:
    return Healthcheck.objects.get(public_id=body["id"])


# --- NUL and lone surrogates in any string of any body ---------------------------------------

PLACES = [
    ("name", lambda bad: {**SEED, "name": f"a{bad}b"}),
    ("tags.0", lambda bad: {**SEED, "tags": [f"a{bad}b"]}),
    ("regions.0", lambda bad: {**SEED, "regions": [f"eu{bad}"]}),
    ("config.uri", lambda bad: {**SEED, "config": {**SEED["config"], "uri": f"https://a{bad}.example.com/"}}),
    (
        "config.headers.Authorization",
        lambda bad: {**SEED, "config": {**SEED["config"], "headers": {"Authorization": f"Bearer {bad}"}}},
    ),
    ("config.headers", lambda bad: {**SEED, "config": {**SEED["config"], "headers": {f"X-{bad}": "v"}}}),
    (
        "config.requiredTools.0",
        lambda bad: {**SEED, "config": {**SEED["config"], "requiredTools": [f"a{bad}b"]}},
    ),
    ("type", lambda bad: {**SEED, "type": f"mcp{bad}"}),
    ("config.unknown.0.deep", lambda bad: {**SEED, "config": {**SEED["config"], "unknown": [{"deep": bad}]}}),
    ("non_field_errors", lambda bad: {**SEED, f"key{bad}": 1}),
]


@pytest.mark.parametrize(
    "bad", ["\x00", chr(0xD800), chr(0xDFFF)], ids=["nul", "high-surrogate", "low-surrogate"]
)
@pytest.mark.parametrize(("field", "body"), PLACES, ids=[place[0] for place in PLACES])
def test_a_bad_character_in_any_string_of_a_create_is_a_400_naming_the_field(client, field, body, bad):
    response = send(client, "POST", URL, body(bad))

    assert response.status_code == 400, response.content
    assert field in response.json(), response.json()
    assert not Healthcheck.objects.exists()


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
@pytest.mark.parametrize(("field", "body"), PLACES, ids=[place[0] for place in PLACES])
def test_a_bad_character_in_any_string_of_an_update_is_a_400_naming_the_field(
    client, check, method, field, body
):
    response = send(client, method, detail(check), body("\ud800"))

    assert response.status_code == 400, response.content
    assert field in response.json(), response.json()
    assert stored(check).name == "Docs MCP"


def test_a_required_tool_with_a_surrogate_never_reaches_a_list(client, check):
    patch = {"config": {"requiredTools": ["a\ud800b"]}}

    assert send(client, "PATCH", detail(check), patch).status_code == 400
    assert client.get(URL).status_code == 200


@pytest.mark.parametrize(
    "query",
    [
        {"search": "\x00"},
        {"search": "docs\x00"},
        {"tag": "\x00"},
        {"type": "mcp\x00"},
        {"status": "\x00"},
        {"page": "\x00"},
    ],
    ids=lambda query: next(iter(query)),
)
def test_a_nul_in_a_list_filter_is_a_400_naming_the_parameter(client, check, query):
    response = client.get(f"{URL}?{urlencode(query)}")

    assert response.status_code == 400
    assert next(iter(query)) in response.json()


def test_a_nul_in_a_history_filter_is_a_400_naming_the_parameter(client, check):
    query = urlencode({"region": "eu\x00west"})
    response = client.get(f"{detail(check)}results/?{query}")

    assert response.status_code == 400
    assert "region" in response.json()


def test_a_nul_in_a_parameter_name_is_a_400(client, check):
    query = urlencode({"sea\x00rch": "x"})
    response = client.get(f"{URL}?{query}")

    assert response.status_code == 400
    assert "query" in response.json()


# --- deep and large bodies --------------------------------------------------------------------


def nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 1_200, 200_000])
@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
def test_a_body_nested_too_deeply_is_a_400_saying_so(client, check, depth, method):
    url = URL if method == "POST" else detail(check)
    # The body's object is one level, the config's arrays the rest.
    text = '{"name": "deep", "type": "mcp", "config": ' + nested(depth - 1) + "}"

    response = send_text(client, method, url, text)

    assert response.status_code == 400, response.content
    assert "nested too deeply" in response.json()["detail"]


def test_objects_nested_too_deeply_are_a_400_too(client):
    text = '{"a": ' * 5000 + "1" + "}" * 5000

    response = send_text(client, "POST", URL, text)

    assert response.status_code == 400
    assert "nested too deeply" in response.json()["detail"]


def test_a_body_nested_to_the_limit_is_parsed(client):
    config = {"uri": "https://mcp.example.com/mcp", "unknown": json.loads(nested(MAX_DEPTH - 3))}

    response = send(client, "POST", URL, {"name": "x", "type": "mcp", "config": config})

    assert response.status_code == 400
    assert "detail" not in response.json()  # refused by the config's own rule, not for its depth


def test_a_body_larger_than_the_upload_limit_is_refused_unparsed(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000

    response = send(client, "POST", URL, {**SEED, "name": "x" * 2000})

    assert response.status_code == 400
    assert not Healthcheck.objects.exists()


def test_malformed_json_is_still_a_400(client):
    response = send_text(client, "POST", URL, '{"name": ')

    assert response.status_code == 400
    assert "JSON parse error" in response.json()["detail"]


# --- results cursors ---------------------------------------------------------------------------


@pytest.fixture
def history(org, now) -> Healthcheck:
    healthcheck = healthcheck_create(
        organization=org, name="docs", check_type=MCP, config={"uri": "https://mcp.example.com/mcp"}, now=now
    )
    slot = datetime(2026, 11, 29, 11, 0, 7, tzinfo=UTC)
    for minute in range(3):
        at = slot + timedelta(minutes=minute)
        outcome = ProbeOutcome(status=Status.UP, timings=Timings(total_ms=10.0), tool_count=0)
        outcomes_record(
            region_slug="eu-west", results=[RunResult(healthcheck.id, at, 0, outcome, at)], now=at
        )
    return healthcheck


def cursor(**tokens: str) -> str:
    return base64.b64encode(urlencode(tokens).encode()).decode()


@pytest.mark.parametrize(
    "forged",
    [
        "not base64 at all!",
        "é",
        base64.b64encode(b"\xff\xfe").decode(),
        cursor(o="-1"),
        cursor(r="maybe"),
        cursor(p="yesterday"),
        cursor(p="2026-11-29 11:01:07"),  # no offset: naive
        cursor(p="2026-11-29 11:01:07\x00+00:00"),
        cursor(p="0001-01-01 00:00:00+05:00"),
        cursor(p="9999-12-31 23:59:59-05:00"),
        cursor(p="2026-13-45 99:99:99+00:00"),
    ],
)
@pytest.mark.parametrize("route", ["results/", "tool-changes/"])
def test_a_forged_or_malformed_cursor_is_a_400(client, history, forged, route):
    response = client.get(f"{URL}{history.public_id}/{route}", {"cursor": forged})

    assert response.status_code == 400, response.content
    assert "cursor" in response.json()


def test_the_cursors_the_api_hands_out_still_page(client, history):
    first = client.get(f"{URL}{history.public_id}/results/", {"page_size": 1}).json()
    second = client.get(first["next"]).json()
    back = client.get(second["previous"]).json()

    assert first["results"][0]["slot"] > second["results"][0]["slot"]
    assert back["results"] == first["results"]


@pytest.mark.parametrize("position", ["2026-11-29 12:31:07+01:30", "2026-11-30 11:00:07+23:59"])
def test_a_cursor_with_another_offset_is_normalised_to_utc(client, history, position):
    # +23:59 is a time Python accepts and PostgreSQL refuses (its offsets end at ±15:59).
    response = client.get(f"{URL}{history.public_id}/results/", {"cursor": cursor(p=position)})

    assert response.status_code == 200
    assert [item["slot"] for item in response.json()["results"]] == ["2026-11-29T11:00:07Z"]


# --- secrets follow their origin ---------------------------------------------------------------


@pytest.mark.parametrize(
    "uri",
    [
        "https://attacker.example.net/mcp",
        "https://mcp.example.com:8443/mcp",
        "http://mcp.example.com/mcp",
        "https://sub.mcp.example.com/mcp",
    ],
    ids=["host", "port", "scheme", "subdomain"],
)
def test_moving_the_uri_to_another_origin_drops_the_stored_header_values(client, check, uri):
    response = send(client, "PATCH", detail(check), {"config": {"uri": uri}})

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["config"]["headers"] == {}
    assert decrypt_headers(stored(check).secret_headers) == {}
    assert [notice["field"] for notice in body["notices"]] == ["config.headers"]
    message = body["notices"][0]["message"]
    assert "Authorization" in message
    assert "X-Api-Key" in message
    assert "your-key" not in json.dumps(body)


def test_a_put_to_another_origin_without_headers_drops_them_too(client, check):
    body = {**SEED, "config": {"uri": "https://attacker.example.net/mcp"}}

    response = send(client, "PUT", detail(check), body)

    assert response.status_code == 200
    assert decrypt_headers(stored(check).secret_headers) == {}
    assert response.json()["notices"][0]["field"] == "config.headers"


@pytest.mark.parametrize(
    "uri",
    [
        "https://mcp.example.com/other-path",
        "https://MCP.example.com/mcp",
        "https://mcp.example.com:443/mcp",
        "https://mcp.example.com/mcp?x=1",
    ],
)
def test_a_uri_on_the_same_origin_keeps_the_stored_header_values(client, check, uri):
    response = send(client, "PATCH", detail(check), {"config": {"uri": uri}})

    assert response.status_code == 200, response.json()
    assert response.json()["notices"] == []
    assert decrypt_headers(stored(check).secret_headers) == {
        "Authorization": "Bearer your-key",
        "X-Api-Key": "k-123",
    }


def test_a_new_origin_with_new_header_values_stores_them_without_a_notice(client, check):
    config = {"uri": "https://other.example.org/mcp", "headers": {"Authorization": "Bearer other-key"}}

    response = send(client, "PATCH", detail(check), {"config": config})

    assert response.status_code == 200
    assert response.json()["notices"] == []
    assert decrypt_headers(stored(check).secret_headers) == {"Authorization": "Bearer other-key"}


def test_a_masked_value_sent_back_with_a_new_origin_is_refused(client, check):
    config = {
        "uri": "https://attacker.example.net/mcp",
        "headers": {"Authorization": MASK, "X-Api-Key": "new"},
    }

    response = send(client, "PATCH", detail(check), {"config": config})

    assert response.status_code == 400
    assert set(response.json()) == {"config.headers.Authorization"}
    healthcheck = stored(check)
    assert healthcheck.config["uri"] == "https://mcp.example.com/mcp"
    assert decrypt_headers(healthcheck.secret_headers)["Authorization"] == "Bearer your-key"


def test_a_masked_value_on_the_same_origin_still_keeps_its_value(client, check):
    config = {"uri": "https://mcp.example.com/v2", "headers": {"Authorization": MASK}}

    response = send(client, "PATCH", detail(check), {"config": config})

    assert response.status_code == 200
    assert decrypt_headers(stored(check).secret_headers) == {"Authorization": "Bearer your-key"}


def test_a_check_without_headers_moves_without_a_notice(client):
    created = send(
        client, "POST", URL, {"name": "open", "type": "mcp", "config": {"uri": "https://a.example/"}}
    )

    response = send(client, "PATCH", detail(created.json()), {"config": {"uri": "https://b.example/"}})

    assert response.status_code == 200
    assert response.json()["notices"] == []


def test_an_update_that_changes_no_config_answers_no_notices(client, check):
    response = send(client, "PATCH", detail(check), {"name": "renamed"})

    assert response.json()["notices"] == []
    assert decrypt_headers(stored(check).secret_headers)["X-Api-Key"] == "k-123"


# --- run-now on a paused check -----------------------------------------------------------------


def test_run_now_on_a_paused_check_is_a_409_saying_why(client, check):
    assert client.post(f"{detail(check)}pause/").status_code == 200

    response = client.post(f"{detail(check)}run/")

    assert response.status_code == 409
    assert "paused" in response.json()["detail"]


@pytest.mark.parametrize("charset", ["rot13", "utf-16", "latin-1", "nonsense"])
def test_a_body_in_an_odd_charset_is_never_a_500(client, charset):
    response = client.generic(
        "POST", URL, data=b'{"name": "\xed\xa0\x80"}', content_type=f"application/json; charset={charset}"
    )

    assert response.status_code == 400


def test_a_body_of_invalid_utf8_is_a_400(client):
    response = client.generic("POST", URL, data=b'{"name": "\xed\xa0\x80"}', content_type="application/json")

    assert response.status_code == 400


def test_json_with_a_surrogate_is_refused_by_jsonb_or_made_readable_by_the_migration(client, check):
    import importlib
    from types import SimpleNamespace

    from django.apps import apps
    from django.db import DataError, connection, transaction

    healthcheck = stored(check)
    poisoned = json.dumps({**healthcheck.config, "requiredTools": ["a\ud800b", "c\x00d"]})
    update = "UPDATE monitors_healthcheck SET config = %s WHERE id = %s"
    if connection.vendor == "postgresql":
        # jsonb never accepted it: there is nothing for the migration to repair there.
        with pytest.raises(DataError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(update, [poisoned, healthcheck.id])
        return
    with connection.cursor() as cursor:
        cursor.execute(update, [poisoned, healthcheck.id])
    with pytest.raises(UnicodeEncodeError):
        client.get(URL)  # every list of the organization was a 500

    migration = importlib.import_module("monitors.migrations.0006_storable_json")
    migration.make_storable(apps, SimpleNamespace(connection=connection))

    assert client.get(URL).status_code == 200
    assert stored(check).config["requiredTools"] == ["a\ufffdb", "cd"]
