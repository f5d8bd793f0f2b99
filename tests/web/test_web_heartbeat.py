"""A heartbeat's page: its last pings, its ping URL for the members who may change it, and its form tab."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client

from monitors.models import Healthcheck, Heartbeat, Membership, Ping
from monitors.services import healthcheck_create
from probes.checks import CheckKind, check_kind, register, unregister
from probes.heartbeats import Schedule
from web.heartbeat_usage import cron_of_period, duration_words, ping_usage
from web.selectors import PINGS_SHOWN, body_head, ping_kind_words

pytestmark = pytest.mark.django_db

NIGHTLY = {"schedule": {"cron": "0 3 * * *", "tz": "Europe/Paris"}, "grace": 300}


def heartbeat(organization: Any, now: Any, config: dict[str, Any] | None = None) -> Healthcheck:
    return healthcheck_create(
        organization=organization,
        name="Nightly backup",
        check_type=check_kind("heartbeat"),
        config=config or NIGHTLY,
        now=now,
    )


def ping_id(check: Healthcheck) -> str:
    return str(Heartbeat.objects.get(pk=check.pk).ping_id)


def page_of(browser: Client, check: Healthcheck, **headers: str) -> str:
    answer = browser.get(f"/app/healthchecks/{check.public_id}/", **headers)
    assert answer.status_code == 200
    return answer.content.decode()


# --- the last pings -------------------------------------------------------------------------------


def test_a_ping_made_to_the_ping_url_shows_in_the_table(owner, org, now):
    check = heartbeat(org, now)
    Client().post(f"/ping/{ping_id(check)}/start", REMOTE_ADDR="203.0.113.7")
    with_body = Client().post(
        f"/ping/{ping_id(check)}/3",
        data=b"disk full\n<script>alert(1)</script>\nline 3",
        content_type="text/plain",
        REMOTE_ADDR="203.0.113.7",
        HTTP_USER_AGENT="curl/8.5",
    )
    assert with_body.status_code == 200

    page = page_of(owner, check)

    assert "Exit status 3" in page
    assert "Start" in page
    assert "203.0.113.7" in page
    assert "curl/8.5" in page
    # The body's first lines, escaped: text, never markup.
    assert "disk full\n&lt;script&gt;alert(1)&lt;/script&gt;\nline 3" in page
    assert "<script>alert(1)" not in page


@pytest.mark.parametrize(
    ("kind", "exit_status", "words"),
    [
        ("success", None, "Success"),
        ("start", None, "Start"),
        ("fail", None, "Fail"),
        ("exit", 0, "Exit status 0"),
    ],
)
def test_a_ping_s_kind_is_said_in_words(kind, exit_status, words):
    assert ping_kind_words(kind, exit_status) == words


@pytest.mark.parametrize(
    ("body", "cut_before", "shown", "cut"),
    [
        ("", False, "", False),
        ("one\ntwo", False, "one\ntwo", False),
        ("1\n2\n3\n4\n5\n6", False, "1\n2\n3\n4\n5", True),
        ("x" * 250, False, "x" * 200 + "…", True),
        ("short", True, "short", True),  # the database read only the head of a longer body
    ],
)
def test_a_ping_body_shows_its_first_lines_capped(body, cut_before, shown, cut):
    assert body_head(body, cut=cut_before) == (shown, cut)


@pytest.mark.parametrize(
    ("seconds", "words"),
    [(1.0, "1 s"), (2.35, "2.4 s"), (42, "42 s"), (200, "3 min 20 s"), (7200, "2 h"), (108_000, "1 d 6 h")],
)
def test_a_duration_is_said_shortly(seconds, words):
    assert duration_words(seconds) == words


def test_the_page_lists_the_newest_pings_only(owner, org, now):
    check = heartbeat(org, now)
    Ping.objects.bulk_create(
        Ping(healthcheck=check, at=now - timedelta(minutes=index), kind="success", body=f"run {index}")
        for index in range(PINGS_SHOWN + 5)
    )

    page = page_of(owner, check)

    assert f"The last {PINGS_SHOWN}, newest first" in page
    assert "run 0<" in page
    assert f"run {PINGS_SHOWN - 1}<" in page
    assert f"run {PINGS_SHOWN}<" not in page


def test_a_run_s_duration_is_shown_with_its_ping(owner, org, now):
    check = heartbeat(org, now)
    Ping.objects.create(healthcheck=check, at=now, kind="success", duration_seconds=200)

    assert "<td>3 min 20 s</td>" in page_of(owner, check)


def _queries_for(browser: Client, path: str) -> int:
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    reset_queries()
    with CaptureQueriesContext(connection) as captured:
        assert browser.get(path).status_code == 200
    return len(captured)


def test_the_heartbeat_page_s_queries_do_not_grow_with_its_pings(owner, org, now):
    check = heartbeat(org, now)
    path = f"/app/healthchecks/{check.public_id}/"
    Ping.objects.create(healthcheck=check, at=now, kind="success")
    one = _queries_for(owner, path)
    Ping.objects.bulk_create(
        Ping(
            healthcheck=check,
            at=now - timedelta(minutes=index),
            kind="exit",
            exit_status=1,
            body="y" * 100_000,
        )
        for index in range(1, 80)
    )
    assert _queries_for(owner, path) == one


def test_a_heartbeat_page_shows_no_region_chart_nor_run_now(owner, org, now):
    page = page_of(owner, heartbeat(org, now))

    assert "No ping yet" in page
    for absent in ("<h2>Regions</h2>", "Response time", "Run now", "Tool list changes"):
        assert absent not in page
    assert "cron 0 3 * * * (Europe/Paris) · grace 5 min" in page


# --- the ping URL ---------------------------------------------------------------------------------


@pytest.mark.parametrize("role", [Membership.Role.OWNER, Membership.Role.ADMIN, Membership.Role.MEMBER])
def test_a_member_who_may_change_the_check_sees_its_ping_url_and_curl_line(make_member, org, now, role):
    check = heartbeat(org, now)
    answer = make_member(org, role).get(f"/app/healthchecks/{check.public_id}/")
    page = answer.content.decode()

    url = f"http://testserver/ping/{ping_id(check)}"
    assert f"curl -fsS -m 10 --retry 5 -o /dev/null {url}</code>" in page
    assert f"{url}/start" in page
    assert f"{url}/fail" in page
    assert f"{url}/$?" in page
    assert answer["Cache-Control"] == "no-store"


def test_a_viewer_sees_the_check_but_not_its_ping_url(viewer, org, now):
    check = heartbeat(org, now)

    page = page_of(viewer, check)

    assert "Nightly backup" in page
    assert ping_id(check) not in page
    assert "shown to the members who can change this check" in page
    assert "New ping URL" not in page


def test_another_organization_s_member_gets_a_404(make_member, org, other_org, now):
    check = heartbeat(org, now)

    assert make_member(other_org).get(f"/app/healthchecks/{check.public_id}/").status_code == 404


def test_the_refreshed_part_of_the_page_never_carries_the_ping_url(owner, org, now):
    check = heartbeat(org, now)
    Ping.objects.create(healthcheck=check, at=now, kind="success")

    part = page_of(owner, check, HTTP_HX_REQUEST="true")

    assert "Last pings" in part
    assert ping_id(check) not in part


def test_showing_the_page_logs_no_ping_url(owner, org, now, caplog):
    check = heartbeat(org, now)
    with caplog.at_level(logging.DEBUG):
        page = page_of(owner, check)
    assert ping_id(check) in page
    assert ping_id(check) not in caplog.text


def test_a_new_ping_url_replaces_the_old_one(owner, org, now):
    check = heartbeat(org, now)
    old = ping_id(check)

    answer = owner.post(f"/app/healthchecks/{check.public_id}/rotate-ping-url/", follow=True)

    page = answer.content.decode()
    assert "the old one answers 404 from now on" in page
    assert old not in page
    assert ping_id(check) in page
    assert Client().get(f"/ping/{old}").status_code == 404


def test_a_viewer_cannot_rotate_the_ping_url(viewer, org, now):
    check = heartbeat(org, now)
    old = ping_id(check)

    assert viewer.post(f"/app/healthchecks/{check.public_id}/rotate-ping-url/").status_code == 403
    assert ping_id(check) == old


@pytest.mark.parametrize(
    ("schedule", "crontab"),
    [
        (
            Schedule(cron="0 3 * * *", tz="Europe/Paris"),
            "CRON_TZ=Europe/Paris\n0 3 * * * {curl} {url}/start; /usr/local/bin/your-job.sh; {curl} {url}/$?",
        ),
        (Schedule(period=300), "*/5 * * * * {curl} {url}/start; /usr/local/bin/your-job.sh; {curl} {url}/$?"),
        (
            Schedule(period=5400),
            "# Every 1 h 30 min is no cron schedule: run the job from a timer of yours,\n# then: {curl} {url}/$?",
        ),
    ],
)
def test_the_crontab_example_follows_the_check_s_schedule(schedule, crontab):
    url = "https://uptimy.example/ping/abc"
    curl = "curl -fsS -m 10 --retry 5 -o /dev/null"

    assert ping_usage(url, schedule).crontab == crontab.format(curl=curl, url=url)


@pytest.mark.parametrize(
    ("period", "cron"),
    [
        (60, "* * * * *"),
        (600, "*/10 * * * *"),
        (3600, "0 * * * *"),
        (6 * 3600, "0 */6 * * *"),
        (86_400, "0 0 * * *"),
        (604_800, "0 0 * * 0"),
        (7 * 60, None),  # 60 is no multiple of 7: */7 would fire at :56 then :00
        (5 * 3600, None),
        (90, None),
    ],
)
def test_a_period_is_written_as_cron_when_cron_can_say_it(period, cron):
    assert cron_of_period(period) == cron


def test_the_page_s_crontab_is_the_check_s_own(owner, org, now):
    check = heartbeat(org, now, {"schedule": {"period": 3600}})

    assert (
        f"0 * * * * curl -fsS -m 10 --retry 5 -o /dev/null http://testserver/ping/{ping_id(check)}/start"
        in (page_of(owner, check))
    )


# --- the form's heartbeat tab ---------------------------------------------------------------------

PROBE_FIELDS = ('name="interval"', 'name="regions"', 'name="recheck_count"', 'name="degraded_threshold_ms"')


@pytest.mark.parametrize(("type_name", "shown"), [("heartbeat", False), ("http", True), ("mcp", True)])
def test_only_a_probed_type_s_tab_shows_interval_regions_rechecks_and_threshold(owner, type_name, shown):
    page = owner.get(f"/app/healthchecks/new/?type={type_name}").content.decode()

    assert [field in page for field in PROBE_FIELDS] == [shown] * len(PROBE_FIELDS)
    assert ('value="test"' in page) == shown


def test_a_heartbeat_saved_from_the_form_ignores_probe_fields_posted_anyway(owner, org):
    answer = owner.post(
        "/app/healthchecks/new/",
        {
            "type": "heartbeat",
            "name": "Nightly",
            "heartbeat_schedule": '{"period": 3600}',
            "heartbeat_grace": "120",
            # What the tab does not show: an interval under the plan's minimum, a region, a threshold.
            "interval": "1",
            "regions": ["eu-west"],
            "recheck_count": "9",
            "degraded_threshold_ms": "5",
            "action": "save",
        },
    )

    assert answer.status_code == 302, answer.content.decode()
    check = Healthcheck.objects.get(name="Nightly")
    assert check.config["schedule"] == {"period": 3600}
    assert check.config["grace"] == 120
    assert list(check.regions.all()) == []
    assert check.degraded_threshold_ms is None
    assert check.recheck_count != 9
    assert check.interval_seconds > 1


def test_a_heartbeat_is_created_pending_until_its_job_pings(owner, org):
    answer = owner.post(
        "/app/healthchecks/new/",
        {"type": "heartbeat", "name": "Nightly", "heartbeat_schedule": '{"period": 3600}', "action": "save"},
        follow=True,
    )

    page = answer.content.decode()
    assert "Created Nightly; it is pending until its job calls the ping URL below." in page
    assert "running in every region" not in page


def test_test_now_posted_for_a_heartbeat_runs_nothing_and_saves_nothing(owner, org):
    answer = owner.post(
        "/app/healthchecks/new/",
        {"type": "heartbeat", "name": "Nightly", "heartbeat_schedule": '{"period": 3600}', "action": "test"},
    )

    assert "Nothing runs this type of check from here" in answer.content.decode()
    assert "Test result" not in answer.content.decode()
    assert not Healthcheck.objects.exists()


def test_editing_a_heartbeat_keeps_what_its_tab_does_not_show(owner, org, now):
    check = heartbeat(org, now)
    interval = check.interval_seconds

    answer = owner.post(
        f"/app/healthchecks/{check.public_id}/edit/",
        {"type": "heartbeat", "name": "Renamed", "heartbeat_schedule": '{"period": 7200}', "action": "save"},
    )

    assert answer.status_code == 302, answer.content.decode()
    check.refresh_from_db()
    assert (check.name, check.config["schedule"], check.interval_seconds) == (
        "Renamed",
        {"period": 7200},
        interval,
    )


def test_a_stored_check_s_form_offers_only_the_tabs_of_its_family(owner, org, now, make_check):
    beat = heartbeat(org, now)
    probed = make_check(org)

    beat_form = owner.get(f"/app/healthchecks/{beat.public_id}/edit/").content.decode()
    probed_form = owner.get(f"/app/healthchecks/{probed.public_id}/edit/?type=heartbeat").content.decode()

    assert "?type=heartbeat" in beat_form
    assert "?type=http" not in beat_form
    assert "?type=http" in probed_form
    assert "?type=heartbeat" not in probed_form
    assert 'name="type" value="mcp"' in probed_form


def test_a_probed_check_is_not_saved_as_a_heartbeat(owner, org, now, make_check):
    probed = make_check(org)

    answer = owner.post(
        f"/app/healthchecks/{probed.public_id}/edit/",
        {"type": "heartbeat", "name": "Docs MCP", "heartbeat_schedule": '{"period": 3600}', "action": "save"},
    )

    assert answer.status_code == 400
    assert "can&#x27;t become that type" in answer.content.decode()
    probed.refresh_from_db()
    assert probed.check_type.name == "mcp"
    assert not Heartbeat.objects.filter(pk=probed.pk).exists()


# --- the dashboard's new healthcheck links ---------------------------------------------------------


@pytest.fixture
def extra_type() -> Iterator[Any]:
    """Register a throwaway passive type, as a new module would, and remove it after."""
    from dataclasses import dataclass

    from probes.types import Headers

    @dataclass(frozen=True, slots=True)
    class LighthouseConfig:
        target: str = "lighthouse"
        host: str = ""
        headers: Headers = ()
        timeout: float = 10.0

    kind = register(
        CheckKind(
            number=9_001,
            name="lighthouse",
            title="Lighthouse",
            config_type=LighthouseConfig,
            parse=lambda raw: LighthouseConfig(),
            to_api=lambda config: {"headers": {}},
            schema={"type": "object"},
            run=None,
        )
    )
    yield kind
    unregister(kind)


def test_the_dashboard_offers_one_new_link_per_registered_type(owner, extra_type):
    page = owner.get("/app/").content.decode()

    for kind in ("mcp", "http", "heartbeat", "lighthouse"):
        assert f'href="/app/healthchecks/new/?type={kind}"' in page
    assert ">Lighthouse</a>" in page


def test_a_viewer_s_dashboard_offers_no_new_link(viewer):
    assert "/app/healthchecks/new/?type=" not in viewer.get("/app/").content.decode()
