"""Migration 0028: TLS, TCP, DNS and heartbeat configs stored with an empty ``headers`` parse again."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from django.apps import apps

from monitors.models import Healthcheck
from monitors.selectors_healthchecks import check_configs

URL = "/api/v1/healthchecks/"
MIGRATION = importlib.import_module("monitors.migrations.0028_configs_without_empty_headers")
CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("tls", {"host": "example.com"}),
    ("tcp", {"host": "example.com", "port": 22}),
    ("dns", {"name": "example.com"}),
    ("heartbeat", {"schedule": {"period": 3600}}),
]


def stored_with_empty_headers(client: Any, type_: str, config: dict[str, Any]) -> Healthcheck:
    """Return a check of ``type_`` whose stored config has the ``"headers": {}`` saved before 0028."""
    response = client.post(URL, {"name": type_, "type": type_, "config": config}, format="json")
    assert response.status_code == 201, response.json()
    healthcheck = Healthcheck.objects.get(public_id=response.json()["id"])
    Healthcheck.objects.filter(pk=healthcheck.pk).update(config={**healthcheck.config, "headers": {}})
    return healthcheck


@pytest.mark.parametrize(("type_", "config"), CONFIGS)
def test_a_config_stored_with_empty_headers_runs_after_the_migration(client, type_, config):
    healthcheck = stored_with_empty_headers(client, type_, config)
    assert healthcheck.pk in check_configs(healthcheck_ids=[healthcheck.pk]).unrunnable

    MIGRATION.drop_empty_headers(apps, None)

    healthcheck.refresh_from_db()
    assert "headers" not in healthcheck.config
    assert healthcheck.pk in check_configs(healthcheck_ids=[healthcheck.pk]).runnable


def test_a_partial_update_after_the_migration_merges_without_headers(client):
    healthcheck = stored_with_empty_headers(client, "tcp", {"host": "example.com", "port": 22})
    MIGRATION.drop_empty_headers(apps, None)

    response = client.patch(f"{URL}{healthcheck.public_id}/", {"config": {"port": 2222}}, format="json")

    assert response.status_code == 200, response.json()
    assert response.json()["config"]["port"] == 2222


def test_the_reverse_puts_the_empty_headers_back(client):
    healthcheck = stored_with_empty_headers(client, "dns", {"name": "example.com"})
    MIGRATION.drop_empty_headers(apps, None)

    MIGRATION.put_back_empty_headers(apps, None)

    healthcheck.refresh_from_db()
    assert healthcheck.config["headers"] == {}
