"""The API's read-only ``target``: what each check type watches, from its config, defined once per type."""

from __future__ import annotations

from typing import Any

import pytest

URL = "/api/v1/healthchecks/"


@pytest.mark.parametrize(
    ("type_", "config", "target"),
    [
        ("http", {"uri": "https://example.com/health?page=2"}, "https://example.com/health"),
        ("mcp", {"uri": "https://mcp.example.com/mcp"}, "https://mcp.example.com/mcp"),
        ("tcp", {"host": "mail.example.com", "port": 25}, "mail.example.com:25"),
        ("tcp", {"host": "2001:4860:4860::8888", "port": 53}, "[2001:4860:4860::8888]:53"),
        ("tls", {"host": "example.com", "starttls": "smtp"}, "example.com:25"),
        ("dns", {"name": "example.com", "recordType": "MX"}, "example.com MX"),
        ("dns", {"name": "example.com", "nameserver": "9.9.9.9"}, "example.com A @9.9.9.9:53"),
        ("ping", {"host": "example.com"}, "example.com"),
        ("domain", {"domain": "example.com"}, "example.com"),
        ("heartbeat", {"schedule": {"period": 3600}}, ""),
    ],
)
def test_each_type_answers_what_it_watches(client, type_, config, target):
    response = client.post(URL, {"name": type_, "type": type_, "config": config}, format="json")

    assert response.status_code == 201, response.json()
    assert response.json()["target"] == target
    assert client.get(f"{URL}{response.json()['id']}/").json()["target"] == target


def test_target_is_read_only_and_sent_back_unchanged_is_ignored(client):
    body: dict[str, Any] = client.post(
        URL, {"name": "port", "type": "tcp", "config": {"host": "example.com", "port": 22}}, format="json"
    ).json()

    response = client.patch(f"{URL}{body['id']}/", {"target": "other.example:1"}, format="json")

    assert response.status_code == 200, response.json()
    assert response.json()["target"] == "example.com:22"
