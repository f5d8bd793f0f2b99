"""The Django admin covers every model, and its pages render."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client


@pytest.fixture
def browser(db) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", "", "pw-for-tests-only"))
    return client


# The apps whose every model an operator looks at in the admin.
ADMINISTERED = [
    model for label in ("monitors", "directory") for model in apps.get_app_config(label).get_models()
]


@pytest.mark.parametrize("model", ADMINISTERED, ids=lambda m: m.__name__)
def test_every_model_is_in_the_admin(model):
    assert admin.site.is_registered(model)


@pytest.mark.parametrize("model", ADMINISTERED, ids=lambda m: m.__name__)
def test_every_admin_list_renders(browser, model):
    response = browser.get(f"/admin/{model._meta.app_label}/{model._meta.model_name}/")

    assert response.status_code == 200
