"""``manage.py probelistings`` runs a round of the due listings; the beat entry exists only when switched on."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command

from directory import sync
from directory.models import Listing, ListingProbeState, ListingRemote
from directory.probing import USER_AGENT
from tests.directory.probe_support import Reply, Site, serve
from tests.directory.test_syncregistry_command import SCHEDULE_PROBE
from tests.monitors.test_local_default import bare_env, python

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def listing(name: str, url: str) -> Listing:
    made = Listing.objects.create(name=name, version="1", is_latest=True, updated_at=AT, synced_at=AT)
    ListingRemote.objects.create(listing=made, position=0, transport="streamable-http", url=url)
    return made


@pytest.mark.django_db
def test_one_round_probes_the_due_listings_up_to_the_limit(settings, monkeypatch):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    monkeypatch.setattr(sync, "_robots", None)
    site = Site(replies={"/robots.txt": Reply(200, b"User-agent: *\nDisallow: /private\n")})
    with serve(site, "127.0.0.1") as (url,):
        for n in range(3):
            listing(f"com.example/s{n}", f"{url}/mcp{n}")
        listing("com.example/private", f"{url}/private")
        out = io.StringIO()

        call_command("probelistings", "--once", "--limit", "3", stdout=out)
        call_command("probelistings", "--once", stdout=out)

    assert out.getvalue().splitlines() == [
        "3 listings probed (0 listed tools), 0 skipped by robots.txt or their URL, 0 old rows pruned",
        "0 listings probed (0 listed tools), 1 skipped by robots.txt or their URL, 0 old rows pruned",
    ]
    assert ListingProbeState.objects.filter(probed_at__isnull=False).count() == 3
    assert {seen.user_agent for seen in site.seen} == {USER_AGENT}


@pytest.mark.django_db
def test_a_round_claims_nothing_while_another_round_holds_the_probes(settings, monkeypatch):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    monkeypatch.setattr(sync, "_robots", None)
    with serve(Site(replies={}), "127.0.0.1") as (url,):
        listing("com.example/s", f"{url}/mcp")
        out = io.StringIO()

        refused = pytest.raises(
            CommandError, match="Another probe round is still running; this one probed nothing"
        )
        with sync.probe_round_lease() as held, refused:
            call_command("probelistings", "--once", stdout=out)
        call_command("probelistings", "--once", stdout=out)

    assert held
    assert out.getvalue().splitlines() == [
        "1 listing probed (0 listed tools), 0 skipped by robots.txt or their URL, 0 old rows pruned",
    ]


def test_a_round_leaves_the_lease_of_the_round_that_took_over_after_its_own_expired():
    with sync.probe_round_lease():
        cache.set(sync.PROBE_ROUND_KEY, "the next round's", timeout=60)

    assert cache.get(sync.PROBE_ROUND_KEY) == "the next round's"
    cache.delete(sync.PROBE_ROUND_KEY)


def test_the_probes_user_agent_names_uptimy_and_the_directory():
    assert USER_AGENT.startswith("Uptimy/")
    assert "MCP directory" in USER_AGENT


@pytest.mark.parametrize(
    ("switches", "scheduled"),
    [
        ({}, False),
        ({"UPTIMY_DIRECTORY_PROBES": "off"}, False),
        ({"UPTIMY_DIRECTORY_PROBES": "on"}, True),
        ({"UPTIMY_MCP_REGISTRY_SYNC": "on"}, True),
    ],
)
def test_the_beat_probes_listings_only_when_switched_on(tmp_path, switches, scheduled):
    done = python(SCHEDULE_PROBE, bare_env(tmp_path, **switches))

    assert done.returncode == 0, done.stderr
    assert ("directory.probe_listings" in set(json.loads(done.stdout))) is scheduled


def test_the_embedded_worker_finds_the_probe_task_by_name():
    from uptimy.celery import app

    assert "directory.probe_listings" in app.tasks
