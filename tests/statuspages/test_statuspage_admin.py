"""The Django admin covers every status-page model, its lists render, and a page's password hash stays out."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client

MODELS = list(apps.get_app_config("statuspages").get_models())


@pytest.fixture
def browser(db) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", "", "pw-for-tests-only"))
    return client


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_model_is_in_the_admin(model):
    assert admin.site.is_registered(model)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_admin_list_renders(browser, model):
    assert browser.get(f"/admin/statuspages/{model._meta.model_name}/").status_code == 200


def test_a_password_pages_hash_is_not_in_its_admin_form(browser, org, make_page):
    page = make_page(org, access="password", password="correct horse")
    answer = browser.get(f"/admin/statuspages/statuspage/{page.pk}/change/")
    assert answer.status_code == 200
    assert page.password_hash not in answer.content.decode()
