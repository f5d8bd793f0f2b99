"""The history API: results, status changes, tool changes, uptime, run now, and the rule fields."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from rest_framework.test import APIClient

from monitors.models import Healthcheck, ProbeResult, Region, Rollup, ToolChange
from monitors.services import RunResult, healthcheck_create, outcomes_record
from probes.checks.mcp import MCP
from probes.types import Access, FailureKind, ProbeOutcome, SigninDiscovery, Status, Timings, ToolInfo

URL = "/api/v1/healthchecks/"
SLOT = datetime(2026, 11, 29, 11, 0, 7, tzinfo=UTC)
REGIONS = ("ap-southeast", "eu-west", "us-east")


def minutes(n: int) -> datetime:
    return SLOT + timedelta(minutes=n)


def up(ms: float = 100.0) -> ProbeOutcome:
    return ProbeOutcome(status=Status.UP, timings=Timings(total_ms=ms), tool_count=0)


def down() -> ProbeOutcome:
    return ProbeOutcome(status=Status.DOWN, kind=FailureKind.TIMEOUT, reason="Timed out", timings=Timings())


def record(
    healthcheck: Healthcheck, region: str, slot: datetime, outcome: ProbeOutcome, attempt: int = 0
) -> None:
    checked = slot + timedelta(seconds=1 + 5 * attempt)
    outcomes_record(
        region_slug=region,
        results=[RunResult(healthcheck.id, slot, attempt, outcome, checked)],
        now=checked + timedelta(seconds=1),
    )


@pytest.fixture
def check(org, now) -> Healthcheck:
    return healthcheck_create(
        organization=org,
        name="docs",
        check_type=MCP,
        config={"uri": "https://mcp.example.com/mcp"},
        now=now,
        rules={"recheck_count": 0},
    )


@pytest.fixture
def history(check) -> Healthcheck:
    """Three slots a minute apart in three regions; us-east fails the second slot."""
    for minute in range(3):
        for region in REGIONS:
            failed = region == "us-east" and minute == 1
            record(check, region, minutes(minute), down() if failed else up(100.0 + minute))
    return check


def url_of(healthcheck: Healthcheck, route: str = "") -> str:
    return f"{URL}{healthcheck.public_id}/{route}"


# --- results ----------------------------------------------------------------------------------


def test_results_list_newest_first_with_the_result_fields(client, history):
    response = client.get(url_of(history, "results/"))

    assert response.status_code == 200
    body = response.json()
    assert len(body["results"]) == 9
    slots = [item["slot"] for item in body["results"]]
    assert slots == sorted(slots, reverse=True)
    first = body["results"][0]
    assert first["slot"] == "2026-11-29T11:02:07Z"
    assert set(first) >= {"region", "slot", "attempt", "status", "kind", "reason", "timings", "tool_count"}
    assert first["timings"]["total_ms"] == 102.0


@pytest.mark.parametrize(
    ("discovery", "shown"),
    [(SigninDiscovery.LEGACY_FALLBACK, "2025-03-26-fallback"), (None, None)],
)
def test_results_say_how_sign_in_was_found(client, check, discovery, shown):
    outcome = ProbeOutcome(
        status=Status.UP,
        access=Access.OAUTH if discovery else None,
        signin_server="https://mcp.example.com" if discovery else None,
        signin_discovery=discovery,
    )
    record(check, "eu-west", minutes(0), outcome)

    [result] = client.get(url_of(check, "results/")).json()["results"]

    assert result["signin_discovery"] == shown


def test_results_filter_by_region(client, history):
    body = client.get(url_of(history, "results/"), {"region": "us-east"}).json()

    assert [(item["region"], item["status"]) for item in body["results"]] == [
        ("us-east", "up"),
        ("us-east", "down"),
        ("us-east", "up"),
    ]
    assert body["results"][1]["kind"] == "timeout"


def test_results_filter_by_time_from_inclusive_to_exclusive(client, history):
    body = client.get(
        url_of(history, "results/"), {"from": "2026-11-29T11:01:07Z", "to": "2026-11-29T11:02:07Z"}
    ).json()

    assert {item["slot"] for item in body["results"]} == {"2026-11-29T11:01:07Z"}
    assert len(body["results"]) == 3


def test_results_accept_a_time_with_an_offset(client, history):
    body = client.get(url_of(history, "results/"), {"from": "2026-11-29T16:32:07+05:30"}).json()

    assert {item["slot"] for item in body["results"]} == {"2026-11-29T11:02:07Z"}


def test_results_of_an_unknown_region_are_empty(client, history):
    assert client.get(url_of(history, "results/"), {"region": "mars"}).json()["results"] == []


def test_results_page_with_a_cursor_through_every_result_once(client, history):
    seen = []
    page = client.get(url_of(history, "results/"), {"page_size": 2}).json()
    while True:
        seen.extend((item["region"], item["slot"], item["attempt"]) for item in page["results"])
        if not page["next"]:
            break
        page = client.get(page["next"]).json()

    assert len(seen) == 9
    assert len(set(seen)) == 9
    assert [slot for _, slot, _ in seen] == sorted((slot for _, slot, _ in seen), reverse=True)


def test_results_pages_have_no_count(client, history):
    body = client.get(url_of(history, "results/"), {"page_size": 2}).json()

    assert set(body) == {"next", "previous", "results"}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"from": "yesterday"}, "from"),
        ({"to": "2026-13-40T00:00:00Z"}, "to"),
        ({"from": "2026-11-29T12:00:00Z", "to": "2026-11-29T11:00:00Z"}, "from"),
        ({"from": "2026-11-29T12:00:00Z", "to": "2026-11-29T12:00:00Z"}, "from"),
    ],
)
def test_results_with_a_bad_window_answer_400_naming_the_field(client, check, params, field):
    response = client.get(url_of(check, "results/"), params)

    assert response.status_code == 400
    assert field in response.json()


# --- status and tool changes -----------------------------------------------------------------


@pytest.fixture
def degraded_history(check) -> Healthcheck:
    """Four slots a minute apart in three regions; us-east fails the second and third.

    Two slots: a region failing for one slot only is a split slot, held (rules.holds_split).
    """
    for minute in range(4):
        for region in REGIONS:
            failed = region == "us-east" and minute in (1, 2)
            record(check, region, minutes(minute), down() if failed else up(100.0 + minute))
    return check


def test_status_changes_list_newest_first(client, degraded_history):
    body = client.get(url_of(degraded_history, "status-changes/")).json()

    assert [(c["from_status"], c["to_status"]) for c in body["results"]] == [
        ("degraded", "up"),
        ("up", "degraded"),
        ("pending", "up"),
    ]
    degraded = body["results"][1]
    assert degraded["failed_regions"] == {"us-east": "timeout"}
    assert degraded["reason"] == "Down in 1 of 3 regions: us-east (timeout)"
    assert set(degraded) == {"at", "from_status", "to_status", "reason", "failed_regions", "missing_tools"}


def connect_refused() -> ProbeOutcome:
    return ProbeOutcome(
        status=Status.DOWN, kind=FailureKind.CONNECT, reason="Connection refused", timings=Timings()
    )


def missing_tool() -> ProbeOutcome:
    return ProbeOutcome(
        status=Status.DOWN,
        kind=FailureKind.MISSING_TOOLS,
        reason="Required tools missing: search",
        timings=Timings(total_ms=80.0),
        missing_tools=("search",),
    )


def test_a_down_check_shows_its_cause_and_an_up_one_none(client, check):
    for region in REGIONS:
        record(check, region, minutes(0), connect_refused())

    cause = client.get(url_of(check)).json()["cause"]

    assert cause == {
        "kind": "connect",
        "reason": "Connection refused",
        "failed_regions": dict.fromkeys(REGIONS, "connect"),
        "missing_tools": [],
        "since": "2026-11-29T11:00:09Z",
    }
    for region in REGIONS:
        record(check, region, minutes(1), up())
    assert client.get(url_of(check)).json()["cause"] is None


def test_cause_changes_list_a_new_cause_while_down(client, check):
    for minute, outcome in ((0, connect_refused()), (1, missing_tool())):
        for region in REGIONS:
            record(check, region, minutes(minute), outcome)

    body = client.get(url_of(check, "cause-changes/")).json()

    (change,) = body["results"]
    assert (change["status"], change["from_kind"], change["to_kind"]) == ("down", "connect", "missing_tools")
    assert change["missing_tools"] == ["search"]
    assert change["previous_reason"] == "Connection refused"
    assert client.get(url_of(check)).json()["cause"]["kind"] == "missing_tools"


def test_tool_changes_list_the_difference(client, check):
    both = (ToolInfo("search"), ToolInfo("fetch", ("url",)))
    for minute, tools, digest in ((0, both, "d1"), (1, both[:1], "d2")):
        outcome = ProbeOutcome(
            status=Status.UP,
            timings=Timings(total_ms=50.0),
            tools=tools,
            tool_count=len(tools),
            tool_digest=digest,
        )
        record(check, "eu-west", minutes(minute), outcome)

    body = client.get(url_of(check, "tool-changes/")).json()

    assert body["results"] == [
        {
            "at": "2026-11-29T11:01:09Z",
            "region": "eu-west",
            "removed": ["fetch"],
            "removed_count": 1,
            "added": [],
            "added_count": 0,
            "new_required_inputs": {},
            "new_required_inputs_count": 0,
            "previous_digest": "d1",
            "digest": "d2",
        }
    ]
    assert ToolChange.objects.count() == 1


def test_a_check_without_history_has_empty_lists(client, check):
    for route in ("results/", "status-changes/", "tool-changes/"):
        assert client.get(url_of(check, route)).json()["results"] == [], route


# --- uptime ----------------------------------------------------------------------------------


def rollup(
    healthcheck: Healthcheck, region: str, start: datetime, runs: int, failures: int, ms: float
) -> None:
    Rollup.objects.create(
        healthcheck=healthcheck,
        region=Region.objects.get(slug=region),
        period=Rollup.Period.HOUR,
        start=start,
        runs=runs,
        failures=failures,
        degraded=0,
        p50_ms=ms,
        p95_ms=ms,
        histogram=[[49, runs]] if ms == 100.0 else [[73, runs]],
    )


@pytest.fixture
def rolled_up(check) -> Healthcheck:
    ten = datetime(2026, 11, 29, 10, tzinfo=UTC)
    rollup(check, "eu-west", ten, 60, 0, 100.0)
    rollup(check, "eu-west", ten + timedelta(hours=1), 60, 6, 100.0)
    rollup(check, "us-east", ten, 60, 30, 1000.0)
    rollup(check, "us-east", ten - timedelta(hours=5), 60, 60, 1000.0)  # outside the window
    return check


def test_uptime_sums_the_hourly_rollups_of_the_window(client, rolled_up):
    response = client.get(
        url_of(rolled_up, "uptime/"), {"from": "2026-11-29T10:00:00Z", "to": "2026-11-29T12:00:00Z"}
    )

    assert response.status_code == 200
    body = response.json()
    assert (body["start"], body["end"]) == ("2026-11-29T10:00:00Z", "2026-11-29T12:00:00Z")
    assert body["overall"]["runs"] == 180
    assert body["overall"]["failures"] == 36
    assert body["overall"]["uptime"] == pytest.approx(144 / 180)
    assert body["regions"]["eu-west"] == {
        "runs": 120,
        "failures": 6,
        "degraded": 0,
        "uptime": pytest.approx(114 / 120),
        "p50_ms": 106.7,
        "p95_ms": 106.7,
    }
    assert body["regions"]["us-east"]["uptime"] == 0.5


def test_uptime_counts_an_hour_the_window_starts_inside(client, rolled_up):
    body = client.get(
        url_of(rolled_up, "uptime/"), {"from": "2026-11-29T11:45:00Z", "to": "2026-11-29T12:00:00Z"}
    ).json()

    assert body["overall"]["runs"] == 60


def test_uptime_counts_an_hour_the_window_starts_inside_in_any_time_zone(client, rolled_up):
    # 17:15 at +05:30 is 11:45 UTC: inside the 11:00 UTC hour.
    body = client.get(
        url_of(rolled_up, "uptime/"), {"from": "2026-11-29T17:15:00+05:30", "to": "2026-11-29T12:00:00Z"}
    ).json()

    assert body["overall"]["runs"] == 60


def test_uptime_without_rollups_has_no_figures(client, check):
    body = client.get(
        url_of(check, "uptime/"), {"from": "2026-11-29T10:00:00Z", "to": "2026-11-29T12:00:00Z"}
    ).json()

    assert body["overall"] == {
        "runs": 0,
        "failures": 0,
        "degraded": 0,
        "uptime": None,
        "p50_ms": None,
        "p95_ms": None,
    }
    assert body["regions"] == {}


def test_uptime_defaults_to_the_last_24_hours(client, check):
    body = client.get(url_of(check, "uptime/")).json()

    start = datetime.fromisoformat(body["start"])
    end = datetime.fromisoformat(body["end"])
    assert end - start == timedelta(hours=24)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"from": "not-a-date"}, "from"),
        ({"to": "not-a-date"}, "to"),
        ({"from": "2026-11-29T12:00:00Z", "to": "2026-11-29T10:00:00Z"}, "from"),
    ],
)
def test_uptime_with_a_bad_window_answers_400_naming_the_field(client, check, params, field):
    response = client.get(url_of(check, "uptime/"), params)

    assert response.status_code == 400
    assert list(response.json()) == [field]


# --- run now ---------------------------------------------------------------------------------


@pytest.fixture
def loopback_check(org, now, fast_mcp, settings) -> Healthcheck:
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    settings.REDIS_URL = ""  # the embedded mode: the run happens in this process
    return healthcheck_create(
        organization=org,
        name="loopback",
        check_type=MCP,
        config={"uri": fast_mcp, "requiredTools": ["tool_0"], "timeout": 5},
        now=now,
    )


def test_run_answers_one_result_per_region(client, loopback_check):
    response = client.post(url_of(loopback_check, "run/"))

    assert response.status_code == 200
    body = response.json()
    assert sorted(item["region"] for item in body) == list(REGIONS)
    assert {item["status"] for item in body} == {"up"}
    assert {item["tool_count"] for item in body} == {3}
    assert {item["server"]["name"] for item in body} == {"uptimy-fast-mcp"}


def test_run_records_its_results_and_decides_the_status(client, loopback_check):
    client.post(url_of(loopback_check, "run/"))

    assert ProbeResult.objects.filter(healthcheck=loopback_check).count() == 3
    loopback_check.refresh_from_db()
    assert loopback_check.status == "up"
    assert client.get(url_of(loopback_check, "results/")).json()["results"][0]["status"] == "up"


def test_run_skips_a_disabled_region(client, loopback_check):
    Region.objects.filter(slug="ap-southeast").update(enabled=False)

    body = client.post(url_of(loopback_check, "run/")).json()

    assert sorted(item["region"] for item in body) == ["eu-west", "us-east"]


def test_run_reports_a_failure_without_rechecks(client, loopback_check, fast_mcp):
    Healthcheck.objects.filter(pk=loopback_check.pk).update(
        config={**loopback_check.config, "requiredTools": ["not_there"]}
    )

    body = client.post(url_of(loopback_check, "run/")).json()

    assert len(body) == 3
    assert {(item["status"], item["kind"]) for item in body} == {("down", "missing_tools")}
    assert body[0]["missing_tools"] == ["not_there"]
    assert ProbeResult.objects.filter(healthcheck=loopback_check).count() == 3


def test_run_needs_a_read_write_key(read_client, loopback_check):
    assert read_client.post(url_of(loopback_check, "run/")).status_code == 403


# --- rule fields -----------------------------------------------------------------------------

CHECK = {"name": "Docs", "type": "mcp", "config": {"uri": "https://mcp.example.com/mcp"}}


def test_rule_fields_default(client):
    body = client.post(URL, CHECK, format="json").json()

    assert (
        body["recheck_count"],
        body["recheck_delay_seconds"],
        body["quorum"],
        body["degraded_threshold_ms"],
    ) == (
        2,
        5,
        None,
        None,
    )


def test_rule_fields_are_accepted_and_stored(client):
    rules = {"recheck_count": 3, "recheck_delay_seconds": 10, "quorum": 2, "degraded_threshold_ms": 800}

    response = client.post(URL, {**CHECK, **rules}, format="json")

    assert response.status_code == 201, response.json()
    assert {key: response.json()[key] for key in rules} == rules
    stored = Healthcheck.objects.get(public_id=response.json()["id"])
    assert (
        stored.recheck_count,
        stored.recheck_delay_seconds,
        stored.quorum,
        stored.degraded_threshold_ms,
    ) == (
        3,
        10,
        2,
        800,
    )


def test_rule_fields_can_be_patched_and_cleared(client):
    created = client.post(URL, {**CHECK, "quorum": 2, "degraded_threshold_ms": 800}, format="json").json()

    response = client.patch(
        f"{URL}{created['id']}/",
        {"quorum": None, "degraded_threshold_ms": None, "recheck_count": 0},
        format="json",
    )

    assert response.status_code == 200, response.json()
    assert (
        response.json()["quorum"],
        response.json()["degraded_threshold_ms"],
        response.json()["recheck_count"],
    ) == (
        None,
        None,
        0,
    )


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"quorum": 4}, "quorum"),  # three regions
        ({"quorum": 2, "regions": ["eu-west"]}, "quorum"),
        ({"quorum": 0}, "quorum"),
        ({"recheck_count": -1}, "recheck_count"),
        ({"recheck_count": 6}, "recheck_count"),
        ({"recheck_delay_seconds": 0}, "recheck_delay_seconds"),
        ({"recheck_delay_seconds": 61}, "recheck_delay_seconds"),
        ({"degraded_threshold_ms": 0}, "degraded_threshold_ms"),
        ({"degraded_threshold_ms": "fast"}, "degraded_threshold_ms"),
    ],
)
def test_bad_rule_fields_answer_400_naming_the_field(client, changes, field):
    response = client.post(URL, {**CHECK, **changes}, format="json")

    assert response.status_code == 400
    assert field in response.json()
    assert not Healthcheck.objects.exists()


def test_narrowing_the_regions_below_the_quorum_answers_400_quorum(client):
    created = client.post(URL, {**CHECK, "quorum": 3}, format="json").json()

    response = client.patch(f"{URL}{created['id']}/", {"regions": ["eu-west", "us-east"]}, format="json")

    assert response.status_code == 400
    assert "quorum" in response.json()
    stored = Healthcheck.objects.get(public_id=created["id"])
    assert stored.regions.count() == 3


def test_patching_a_quorum_above_the_region_count_answers_400(client):
    created = client.post(URL, {**CHECK, "regions": ["eu-west", "us-east"]}, format="json").json()

    response = client.patch(f"{URL}{created['id']}/", {"quorum": 3}, format="json")

    assert response.status_code == 400
    assert "quorum" in response.json()
    assert Healthcheck.objects.get(public_id=created["id"]).quorum is None


# --- tenants and keys ------------------------------------------------------------------------

ROUTES = [
    ("get", "results/"),
    ("get", "status-changes/"),
    ("get", "tool-changes/"),
    ("get", "uptime/"),
    ("post", "run/"),
]


@pytest.mark.parametrize(("method", "route"), ROUTES)
def test_another_organizations_check_answers_404(other_client, history, method, route):
    response = getattr(other_client, method)(url_of(history, route))

    assert response.status_code == 404
    assert not ProbeResult.objects.filter(healthcheck=history).exclude(slot__lte=minutes(2)).exists()


@pytest.mark.parametrize(("method", "route"), ROUTES)
def test_no_key_answers_401(history, method, route):
    response = getattr(APIClient(), method)(url_of(history, route))

    assert response.status_code == 401


@pytest.mark.parametrize(("method", "route"), ROUTES)
def test_an_unknown_check_answers_404(client, method, route):
    response = getattr(client, method)(f"{URL}00000000-0000-4000-8000-000000000000/{route}")

    assert response.status_code == 404


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"from": "0001-01-01T00:00:00+19:18"}, "from"),
        ({"to": "9999-12-31T23:59:59-23:00"}, "to"),
    ],
)
def test_a_window_at_the_ends_of_the_calendar_is_a_400(client, query, field):
    check_id = client.post(
        URL, {"name": "w", "type": 1, "config": {"uri": "https://example.com/"}}, format="json"
    ).json()["id"]

    response = client.get(f"{URL}{check_id}/uptime/", query)

    assert response.status_code == 400
    assert field in response.json()


def test_a_window_with_an_offset_postgresql_refuses_is_normalised_to_utc(client):
    check_id = client.post(
        URL, {"name": "w", "type": 1, "config": {"uri": "https://example.com/"}}, format="json"
    ).json()["id"]

    response = client.get(f"{URL}{check_id}/results/", {"from": "2026-11-29T10:00:00+19:18"})

    assert response.status_code == 200


def test_run_with_a_broker_sends_one_batch_per_region_queue_and_answers_their_results(
    client, loopback_check, settings, monkeypatch
):
    from monitors.worker import execution, tasks

    settings.REDIS_URL = "redis://broker.invalid:6379/0"
    queued: list[str] = []

    def region_worker(region, items, delay=0):
        # Stands in for the region's worker: what it records is what the request waits for.
        queued.append(region)
        execution.execute_batch(region, items, enqueue=lambda *args: None)

    monkeypatch.setattr(tasks, "enqueue_celery", region_worker)

    body = client.post(url_of(loopback_check, "run/")).json()

    assert sorted(queued) == list(REGIONS)
    assert sorted(item["region"] for item in body) == list(REGIONS)
    assert {item["status"] for item in body} == {"up"}
