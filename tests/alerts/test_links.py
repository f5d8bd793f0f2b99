"""The signed acknowledge link in alerts: no login, one incident, expiring, not forgeable."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from alerts.links import acknowledge_url, link_lifetime
from alerts.models import Incident
from alerts.services import outbox_consume
from tests.alerts.conftest import status_change

pytestmark = pytest.mark.django_db


@pytest.fixture
def incident(check, now) -> Incident:
    status_change(check, "down", at=now)
    outbox_consume(now=now)
    return Incident.objects.get()


def path_of(url: str) -> str:
    return url.removeprefix("http://127.0.0.1:8000")


def link(incident: Incident, *, made=None) -> str:
    return path_of(acknowledge_url(incident_public_id=incident.public_id, now=made or timezone.now()))


def test_the_link_is_absolute_on_the_public_url(incident, settings):
    settings.UPTIMY_PUBLIC_URL = "https://uptimy.example.com/"

    url = acknowledge_url(incident_public_id=incident.public_id, now=timezone.now())

    assert url.startswith("https://uptimy.example.com/alerts/ack/")


def test_opening_the_link_shows_a_button_and_acknowledges_nothing(incident):
    response = Client().get(link(incident))

    assert response.status_code == 200
    assert b"<form method='post'>" in response.content
    assert Incident.objects.get().acknowledged_at is None


def test_posting_the_link_acknowledges_without_a_login(incident):
    response = Client().post(link(incident))

    assert response.status_code == 200
    incident.refresh_from_db()
    assert incident.acknowledged_at is not None
    assert incident.acknowledged_by == "acknowledge link"


@pytest.mark.parametrize(
    "tamper",
    [
        lambda token: token[:-1] + ("B" if token[-1] == "A" else "A"),  # the signature
        lambda token: ("1" if token[0] == "0" else "0") + token[1:],  # the incident id
        lambda token: token.split(":")[0],  # no signature at all
    ],
)
def test_a_tampered_link_is_refused(incident, tamper):
    url = link(incident)
    token = url.rstrip("/").rsplit("/", 1)[1]

    response = Client().post(url.replace(token, tamper(token)))

    assert response.status_code == 404
    assert Incident.objects.get().acknowledged_at is None


def test_an_expired_link_is_refused_saying_so(incident):
    made = timezone.now() - link_lifetime() - timedelta(minutes=1)

    response = Client().post(link(incident, made=made))

    assert response.status_code == 410
    assert b"expired" in response.content
    assert Incident.objects.get().acknowledged_at is None


def test_a_link_signed_for_something_else_is_refused(incident):
    from django.core import signing

    token = signing.TimestampSigner().sign(str(incident.public_id))  # the right id, another salt

    assert Client().post(f"/alerts/ack/{token}/").status_code == 404


def test_a_resolved_incident_link_says_so(incident, check, now):
    status_change(check, "up", at=now + timedelta(minutes=1), frm="down")
    outbox_consume(now=now)

    response = Client().post(link(incident))

    assert response.status_code == 409
