"""/healthz answers 200 when the database (and the broker, where configured) answers."""

from __future__ import annotations

import pytest
from django.db import OperationalError, connection


def test_healthz_answers_200_when_the_database_answers(client):
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json()["database"] == "ok"


def test_healthz_needs_no_key(db):
    from django.test import Client

    assert Client().get("/healthz").status_code == 200


def test_healthz_answers_503_when_the_database_fails(db, monkeypatch):
    from django.test import Client

    def broken_cursor(*args, **kwargs):
        raise OperationalError("connection refused")

    with monkeypatch.context() as patch:
        patch.setattr(connection, "cursor", broken_cursor)
        response = Client().get("/healthz")

    assert response.status_code == 503
    assert response.json()["database"] == "down"


def test_healthz_answers_503_when_the_configured_broker_is_unreachable(db, settings):
    from django.test import Client

    # Port 9 (discard) is closed on loopback: the broker check must fail fast, not hang.
    settings.REDIS_URL = "redis://127.0.0.1:9/0"

    response = Client().get("/healthz")

    assert response.status_code == 503
    assert response.json()["broker"] == "down"


@pytest.mark.services
def test_healthz_checks_the_real_broker(db, settings, redis_url):
    from django.test import Client

    settings.REDIS_URL = redis_url

    response = Client().get("/healthz")

    assert response.status_code == 200
    assert response.json()["broker"] == "ok"
