"""``manage.py syncregistry`` reads the configured registry; the beat entry exists only when switched on."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from directory.models import Listing
from directory.sync import USER_AGENT
from tests.directory.support import Answer, page
from tests.monitors.test_local_default import bare_env, python

pytestmark = pytest.mark.django_db


@pytest.fixture
def configured(registry, settings):
    settings.UPTIMY_MCP_REGISTRY_URL = registry.url
    return registry


def test_the_command_reads_everything_with_full(configured):
    configured.serve(page("full-1"), page("full-2"))
    out = io.StringIO()

    call_command("syncregistry", "--full", stdout=out)

    assert out.getvalue().splitlines()[0] == "full sync: 2 pages, 7 listings stored, 2 skipped"
    assert Listing.objects.count() == 7
    assert configured.requests[0].user_agent == USER_AGENT


def test_the_command_reads_what_changed_after_a_full_sync(configured):
    configured.serve(page("full-1"), page("full-2"), page("incremental"))
    call_command("syncregistry", "--full", stdout=io.StringIO())
    out = io.StringIO()

    call_command("syncregistry", stdout=out)

    assert out.getvalue().splitlines()[0] == "incremental sync: 1 pages, 3 listings stored, 0 skipped"
    assert "updated_since" in configured.requests[-1].query


def test_the_command_fails_when_a_page_cannot_be_read(configured):
    configured.serve(Answer(503, b""))

    with pytest.raises(CommandError, match="stopped: The registry answered HTTP 503"):
        call_command("syncregistry", "--full", stdout=io.StringIO())


def test_lookuplicences_asks_github_for_the_listed_repositories(configured, github, settings):
    settings.UPTIMY_GITHUB_API_URL = github.url
    settings.UPTIMY_GITHUB_TOKEN = "ghp_test"
    configured.serve(page("full-1"), page("full-2"))
    call_command("syncregistry", "--full", stdout=io.StringIO())
    github.serve(Answer.json(page("github-repo")), Answer(404, b"{}"))
    out = io.StringIO()

    call_command("lookuplicences", "--limit", "2", stdout=out)

    assert out.getvalue() == "1 licences looked up, 1 failed\n"
    assert {(r.user_agent, r.authorization) for r in github.requests} == {(USER_AGENT, "Bearer ghp_test")}


def test_the_user_agent_names_the_import():
    assert USER_AGENT.startswith("Uptimy/")
    assert "MCP directory import" in USER_AGENT


SCHEDULE_PROBE = """
import json
import django
from django.conf import settings

django.setup()
print(json.dumps(sorted(entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values())))
"""


@pytest.mark.parametrize(("switch", "scheduled"), [(None, False), ("off", False), ("on", True)])
def test_the_beat_syncs_the_registry_only_when_switched_on(tmp_path, switch, scheduled):
    env = bare_env(tmp_path, **({"UPTIMY_MCP_REGISTRY_SYNC": switch} if switch else {}))

    done = python(SCHEDULE_PROBE, env)

    assert done.returncode == 0, done.stderr
    tasks = set(json.loads(done.stdout))
    assert ("directory.sync_registry" in tasks, "directory.look_up_licences" in tasks) == (
        scheduled,
        scheduled,
    )


@pytest.mark.parametrize("name", ["directory.sync_registry", "directory.look_up_licences"])
def test_the_embedded_worker_finds_the_tasks_by_name(name):
    from uptimy.celery import app

    assert name in app.tasks
