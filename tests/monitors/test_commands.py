"""The createapikey and serve management commands."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from monitors.models import ApiKey, Organization
from monitors.services import demo_bootstrap


def run_createapikey(*args: str) -> str:
    out, err = StringIO(), StringIO()
    call_command("createapikey", *args, stdout=out, stderr=err)
    return out.getvalue()


def test_createapikey_prints_the_key_alone_on_stdout(org):
    stdout = run_createapikey("acme")

    assert stdout.count("\n") == 1
    assert stdout.strip().startswith("upt_")


def test_the_printed_key_authenticates_against_the_api(org):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {run_createapikey('acme').strip()}")

    assert client.get("/api/v1/organization/").json()["slug"] == "acme"


def test_createapikey_stores_only_a_hash(org):
    raw_key = run_createapikey("acme").strip()
    api_key = ApiKey.objects.get()

    assert raw_key not in (api_key.key_hash, api_key.prefix)
    assert raw_key.startswith(api_key.prefix)


def test_createapikey_read_only(org):
    run_createapikey("acme", "--read-only")

    assert ApiKey.objects.get().scope == ApiKey.Scope.READ


def test_createapikey_for_a_missing_org_needs_create_org(db):
    with pytest.raises(CommandError, match="--create-org"):
        run_createapikey("nobody")


def test_createapikey_create_org_creates_it_on_the_free_plan(db):
    run_createapikey("newco", "--create-org")

    assert Organization.objects.get(slug="newco").plan.slug == "free"


def test_createapikey_refuses_a_bad_slug(db):
    with pytest.raises(CommandError, match="letters, digits"):
        run_createapikey("not a slug!", "--create-org")


def test_demo_bootstrap_reveals_password_and_key_only_the_first_time(db):
    first = demo_bootstrap()
    second = demo_bootstrap()

    assert first["password"]
    assert first["api_key"]
    assert (second["password"], second["api_key"]) == (None, None)
    assert Organization.objects.filter(slug="demo").count() == 1


def test_serve_runs_the_web_process_on_the_given_port():
    from monitors.management.commands.serve import parts

    commands = parts(host="127.0.0.1", port=8123, broker=False, region_queues=[])

    assert "--bind 127.0.0.1:8123" in commands["web"]
    assert "uptimy.asgi:application --worker-class uvicorn_worker.UvicornWorker" in commands["web"]


def test_serve_without_a_broker_runs_the_embedded_prober():
    from monitors.management.commands.serve import parts

    assert set(parts(host="h", port=1, broker=False, region_queues=["probes.eu-west"])) == {"web", "probes"}


def test_serve_with_a_broker_runs_celery_on_every_region_queue_and_beat():
    from monitors.management.commands.serve import parts

    commands = parts(host="h", port=1, broker=True, region_queues=["probes.eu-west", "probes.us-east"])

    assert set(commands) == {"web", "worker", "beat"}
    assert "-Q default,probes.eu-west,probes.us-east" in commands["worker"]
