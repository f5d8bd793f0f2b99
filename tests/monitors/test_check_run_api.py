"""POST /api/v1/checks/run/: a one-off check of a config, validated as a healthcheck's, nothing stored."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from monitors.api.throttling import ApiKeyRateThrottle
from monitors.models import Healthcheck, ProbeResult

URL = "/api/v1/checks/run/"


@pytest.fixture
def loopback(settings, fast_mcp):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    return fast_mcp


def test_a_one_off_check_answers_the_result_fields_and_stores_nothing(client, loopback):
    answer = client.post(URL, {"type": "mcp", "config": {"uri": loopback}}, format="json")

    assert answer.status_code == 200
    body = answer.json()
    assert (body["status"], body["access"], body["tool_count"]) == ("up", "open", 3)
    assert [tool["name"] for tool in body["tools"]] == ["tool_0", "tool_1", "tool_2"]
    assert body["server"]["name"]
    assert set(body["timings"]) == {"dns_ms", "tcp_ms", "tls_ms", "ttfb_ms", "total_ms"}
    assert (Healthcheck.objects.count(), ProbeResult.objects.count()) == (0, 0)


def test_the_type_defaults_to_mcp(client, loopback):
    answer = client.post(URL, {"config": {"uri": loopback, "requiredTools": ["search_docs"]}}, format="json")

    assert answer.status_code == 200
    assert (answer.json()["status"], answer.json()["missing_tools"]) == ("down", ["search_docs"])


def test_a_read_only_key_may_run_a_check(read_client, loopback):
    assert read_client.post(URL, {"config": {"uri": loopback}}, format="json").status_code == 200


def test_a_private_target_is_down_with_the_address_guards_sentence(client, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = False

    body = client.post(URL, {"config": {"uri": "http://10.0.0.1/mcp"}}, format="json").json()

    assert (body["status"], body["kind"]) == ("down", "blocked_address")
    assert body["reason"] == "10.0.0.1 is a private address; Uptimy only checks public addresses"


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"config": {"uri": "https://mcp.example.com/mcp", "minTools": -1}}, "config.minTools", "at least 0"),
        ({"config": {"uri": "ftp://mcp.example.com/"}}, "config.uri", "http://"),
        ({"config": {"uri": "https://mcp.example.com/mcp"}, "interval": 60}, "interval", "unknown field"),
        ({"type": "nope", "config": {"uri": "https://mcp.example.com/mcp"}}, "type", "nope"),
        ({}, "config", "required"),
    ],
)
def test_a_bad_body_is_a_400_naming_the_field(client, body, field, words):
    answer = client.post(URL, body, format="json")

    assert answer.status_code == 400
    assert words in " ".join(answer.json()[field])


def test_without_a_key_it_is_a_401():
    assert (
        APIClient().post(URL, {"config": {"uri": "https://x.example/mcp"}}, format="json").status_code == 401
    )


def test_one_off_checks_count_against_the_keys_rate_like_run_now(client, loopback, monkeypatch):
    cache.clear()
    monkeypatch.setattr(ApiKeyRateThrottle, "THROTTLE_RATES", {"api_key": "2/min"})

    statuses = [client.post(URL, {"config": {"uri": loopback}}, format="json").status_code for _ in range(3)]

    assert statuses == [200, 200, 429]
