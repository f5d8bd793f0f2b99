"""The Django admin covers every alerts model, its pages render, and a channel's secrets stay out."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client

from alerts.services import outbox_consume
from tests.alerts.conftest import status_change

MODELS = list(apps.get_app_config("alerts").get_models())


@pytest.fixture
def browser(db) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", "", "pw-for-tests-only"))
    return client


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_model_is_in_the_admin(model):
    assert admin.site.is_registered(model)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_admin_list_and_page_renders(browser, model, check, make_channel, now):
    make_channel()
    status_change(check, "down", at=now)
    outbox_consume(now=now)
    row = model.objects.first()

    assert browser.get(f"/admin/alerts/{model._meta.model_name}/").status_code == 200
    if row is not None:
        assert browser.get(f"/admin/alerts/{model._meta.model_name}/{row.pk}/change/").status_code == 200


def test_a_channels_page_shows_no_secret(browser, make_channel):
    channel = make_channel()

    page = browser.get(f"/admin/alerts/channel/{channel.pk}/change/").content.decode()

    assert "whsec_" not in page
    assert channel.config_encrypted not in page
