"""Run now: every region at once within the check's timeout, rechecks like a scheduled run, never
displacing a run a region still owes; refusals are 409s that say why."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.utils import timezone
from test_embedded import REGIONS, Captured, embedded, run_worker

from monitors.models import Healthcheck, OutboxBatch, ProbeResult, Region, RegionState
from monitors.rules import RecheckPolicy
from monitors.worker.dispatch import dispatch_due
from monitors.worker.execution import execute_batch
from monitors.worker.manual import OWED_SLACK, RegionProgress, owed_run, run_now
from probes.checks.http import HTTP
from probes.types import Status

HANG_SECONDS = 60.0  # only a hung thread takes this long: an upper bound, never a wait


def run_url(healthcheck: Healthcheck) -> str:
    return f"/api/v1/healthchecks/{healthcheck.public_id}/run/"


def not_due(healthcheck: Healthcheck) -> None:
    """Move the check's schedule a day away, so only the test's own runs run it."""
    Healthcheck.objects.filter(pk=healthcheck.pk).update(next_check_at=timezone.now() + timedelta(days=1))
    healthcheck.refresh_from_db()


def answers(response) -> list[tuple[str, str, int, str, str | None]]:
    """Return the run's results as (region, slot, attempt, status, kind), by region."""
    assert response.status_code == 200, response.json()
    return [
        (item["region"], item["slot"], item["attempt"], item["status"], item["kind"])
        for item in response.json()
    ]


@pytest.fixture
def embedded_mode(settings) -> None:
    """Run as the embedded default: no broker, so run-now runs the checks in this process."""
    settings.REDIS_URL = ""


@pytest.fixture
def gathering_server() -> Iterator[str]:
    """Serve a GET only once three are waiting at once: regions checked one after another all time out."""
    gate = threading.Barrier(len(REGIONS), timeout=HANG_SECONDS)

    class Gathering(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            try:
                gate.wait()
            except threading.BrokenBarrierError:
                return
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Gathering)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        gate.abort()
        server.shutdown()
        server.server_close()


@pytest.fixture
def silent_url() -> Iterator[str]:
    """Return a loopback URL that accepts connections and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"


# --- what a region owes ---------------------------------------------------------------------

NOW = datetime(2026, 11, 29, 12, 0, 30, tzinfo=UTC)
SLOT = datetime(2026, 11, 29, 12, 0, 7, tzinfo=UTC)
LATER = datetime(2026, 11, 29, 12, 0, 20, tzinfo=UTC)
POLICY = RecheckPolicy(count=2, delay_seconds=5)
TIMEOUT = 10.0
# The oldest scheduled slot still on its way.
EDGE = NOW - timedelta(seconds=TIMEOUT) - OWED_SLACK
# A run this old is presumed lost: its timeout, the slack and (for a recheck) the delay have passed.
LOST = timedelta(seconds=TIMEOUT) + OWED_SLACK + timedelta(seconds=POLICY.delay_seconds + 1)


def failed(status: Status, attempt: int, *, at: datetime = LATER) -> RegionProgress:
    """A region whose newest run, of SLOT, failed, with the region's status after it."""
    return RegionProgress(
        status=status, last_slot=SLOT, last_attempt=attempt, last_outcome=Status.DOWN, last_result_at=at
    )


UP_AT_SLOT = RegionProgress(
    status=Status.UP, last_slot=SLOT, last_attempt=0, last_outcome=Status.UP, last_result_at=LATER
)


@pytest.mark.parametrize(
    ("progress", "scheduled", "policy", "owed"),
    [
        # Nothing owed: a slot of its own.
        pytest.param(None, None, POLICY, (NOW, 0), id="no run yet"),
        pytest.param(UP_AT_SLOT, None, POLICY, (NOW, 0), id="up, nothing scheduled"),
        pytest.param(UP_AT_SLOT, SLOT, POLICY, (NOW, 0), id="the scheduled slot is recorded already"),
        # A scheduled run on its way: that slot.
        pytest.param(None, SLOT, POLICY, (SLOT, 0), id="the first scheduled run on its way"),
        pytest.param(UP_AT_SLOT, LATER, POLICY, (LATER, 0), id="a newer scheduled run on its way"),
        pytest.param(None, EDGE, POLICY, (EDGE, 0), id="a scheduled run at the end of its bound"),
        pytest.param(None, EDGE - timedelta(seconds=1), POLICY, (NOW, 0), id="a scheduled run lost"),
        pytest.param(None, NOW + timedelta(seconds=1), POLICY, (NOW, 0), id="a slot not claimed yet"),
        # A recheck on its way: the next attempt of that slot.
        pytest.param(failed(Status.UP, 0), None, POLICY, (SLOT, 1), id="the first recheck pending"),
        pytest.param(failed(Status.UP, 1), None, POLICY, (SLOT, 2), id="the second recheck pending"),
        pytest.param(failed(Status.PENDING, 0), None, POLICY, (SLOT, 1), id="a new check's first run failed"),
        pytest.param(
            failed(Status.UP, 0), LATER, POLICY, (LATER, 0), id="a newer scheduled run supersedes the recheck"
        ),
        # No recheck: the failure decided the region, or the recheck was lost.
        pytest.param(failed(Status.DOWN, 2), None, POLICY, (NOW, 0), id="the last recheck failed: down"),
        pytest.param(failed(Status.DOWN, 0), None, POLICY, (NOW, 0), id="already down: no recheck"),
        pytest.param(
            failed(Status.UP, 0),
            None,
            RecheckPolicy(count=0, delay_seconds=5),
            (NOW, 0),
            id="no rechecks asked",
        ),
        pytest.param(failed(Status.UP, 0, at=NOW - LOST), None, POLICY, (NOW, 0), id="a recheck lost"),
    ],
)
def test_a_manual_run_runs_what_the_region_owes(progress, scheduled, policy, owed):
    assert owed_run(progress, scheduled=scheduled, now=NOW, policy=policy, timeout=TIMEOUT) == owed


# --- without a broker -------------------------------------------------------------------------


def test_run_now_runs_every_region_at_once(client, make, embedded_mode, gathering_server):
    healthcheck = make(gathering_server, check_type=HTTP)
    not_due(healthcheck)

    results = answers(client.post(run_url(healthcheck)))

    # Each answer came only once all three regions' requests were waiting together.
    assert [(region, status) for region, _, _, status, _ in results] == [(region, "up") for region in REGIONS]


def test_run_now_answers_within_the_checks_timeout_when_the_target_never_answers(
    client, make, embedded_mode, silent_url
):
    healthcheck = make(silent_url, check_type=HTTP, timeout=1)
    not_due(healthcheck)

    results = answers(client.post(run_url(healthcheck)))

    assert [(region, kind) for region, _, _, _, kind in results] == [
        (region, "timeout") for region in REGIONS
    ]


def test_run_now_without_a_broker_stages_its_rechecks_after_their_delay(
    client, make, embedded_mode, refused_url
):
    healthcheck = make(refused_url, recheck_delay_seconds=7, regions=["eu-west"])
    not_due(healthcheck)

    ((_, slot, attempt, status, kind),) = answers(client.post(run_url(healthcheck)))

    assert (attempt, status, kind) == (0, "down", "connect")
    staged = OutboxBatch.objects.get()
    assert (staged.region, staged.items) == ("eu-west", [[healthcheck.id, slot.replace("Z", "+00:00"), 1]])
    assert staged.publish_after - staged.created_at == timedelta(seconds=7)


@embedded
def test_the_embedded_worker_runs_the_rechecks_of_a_manual_run(client, make, embedded_mode, refused_url):
    healthcheck = make(refused_url, recheck_count=1, recheck_delay_seconds=1, regions=["eu-west"])
    not_due(healthcheck)

    answers(client.post(run_url(healthcheck)))

    def rechecked() -> bool:
        return ProbeResult.objects.filter(healthcheck=healthcheck, attempt=1).exists()

    assert run_worker(lambda _: rechecked()), "the manual run's recheck never ran"
    healthcheck.refresh_from_db()
    assert healthcheck.status == "down"
    assert not OutboxBatch.objects.exists()


# --- never displacing a run a region owes ------------------------------------------------------


def test_a_region_awaiting_a_recheck_runs_that_recheck_and_its_episode_goes_on(
    client, make, embedded_mode, refused_url
):
    healthcheck = make(refused_url, recheck_count=1, regions=["eu-west", "us-east"])
    not_due(healthcheck)
    slot = timezone.now() - timedelta(seconds=3)
    queued = Captured()
    execute_batch("eu-west", [[healthcheck.id, slot.isoformat(), 0]], enqueue=queued)
    assert [items for _, items, _ in queued.calls] == [[[healthcheck.id, slot.isoformat(), 1]]]

    results = answers(client.post(run_url(healthcheck)))
    # The recheck that was queued arrives after the manual run.
    execute_batch("eu-west", queued.calls[0][1], enqueue=Captured())

    eu_west, us_east = results
    assert (eu_west[0], eu_west[2], eu_west[3]) == ("eu-west", 1, "down")
    assert (us_east[0], us_east[2], us_east[3]) == ("us-east", 0, "down")
    ran = ProbeResult.objects.filter(healthcheck=healthcheck, region__slug="eu-west")
    assert sorted(ran.values_list("slot", "attempt")) == [(slot, 0), (slot, 1)]
    # The episode ended as scheduled: failed, rechecked, down (the queued recheck was not ignored
    # as overtaken by a newer manual slot, and recorded nothing twice).
    assert RegionState.objects.get(healthcheck=healthcheck, region__slug="eu-west").status == "down"


@pytest.mark.parametrize("claimed", [True, False], ids=["claimed", "due, not claimed yet"])
def test_a_region_whose_scheduled_run_is_on_its_way_runs_that_slot(
    client, make, embedded_mode, fast_mcp, claimed
):
    healthcheck = make(fast_mcp)
    now = timezone.now()
    slot = now.replace(microsecond=0) - timedelta(seconds=1)
    Healthcheck.objects.filter(pk=healthcheck.pk).update(
        created_at=now - timedelta(hours=1), slot_offset=int(slot.timestamp()) % 3600, next_check_at=slot
    )
    queued = Captured()
    if claimed:
        assert dispatch_due(enqueue=queued) == 1  # claimed, not yet run

    results = answers(client.post(run_url(healthcheck)))
    if not claimed:
        assert dispatch_due(enqueue=queued) == 1  # the tick comes after the manual run
    for region, items, _ in queued.calls:
        execute_batch(region, items, enqueue=Captured())

    assert [items[0][1] for _, items, _ in queued.calls] == [slot.isoformat()] * len(REGIONS)
    assert {(item_slot, attempt, status) for _, item_slot, attempt, status, _ in results} == {
        (slot.isoformat().replace("+00:00", "Z"), 0, "up")
    }
    assert ProbeResult.objects.filter(healthcheck=healthcheck).count() == len(REGIONS)


# --- with a broker ------------------------------------------------------------------------------


def test_with_a_broker_each_region_gets_its_run_on_its_queue_and_the_answer_has_their_results(make, fast_mcp):
    healthcheck = make(fast_mcp)
    not_due(healthcheck)
    sent = Captured()

    def region_worker(region: str, items: list, delay: float = 0) -> None:
        sent(region, items, delay)
        execute_batch(region, items, enqueue=Captured())  # the region's worker took the batch

    results = run_now(healthcheck=healthcheck, enqueue=region_worker)

    assert [region for region, _, _ in sent.calls] == list(REGIONS)
    assert {delay for _, _, delay in sent.calls} == {0}
    assert [(result.region.slug, result.status) for result in results] == [
        (region, "up") for region in REGIONS
    ]


# --- refusals ----------------------------------------------------------------------------------


def test_run_now_with_no_enabled_region_is_a_409_naming_the_disabled_regions(client, make):
    healthcheck = make("https://mcp.example.com/mcp", regions=["eu-west", "us-east"])
    Region.objects.update(enabled=False)

    response = client.post(run_url(healthcheck))

    assert response.status_code == 409
    assert "no enabled region" in response.json()["detail"]
    assert "eu-west, us-east" in response.json()["detail"]


def test_run_now_of_a_check_without_a_region_is_a_409_saying_so(client, make):
    healthcheck = make("https://mcp.example.com/mcp")
    healthcheck.regions.clear()

    response = client.post(run_url(healthcheck))

    assert response.status_code == 409
    assert "no region" in response.json()["detail"]


def test_run_now_of_a_stored_config_that_no_longer_parses_is_a_409_naming_the_problem(client, make):
    healthcheck = make("https://mcp.example.com/mcp")
    Healthcheck.objects.filter(pk=healthcheck.pk).update(config={"uri": "ftp://mcp.example.com/"})

    response = client.post(run_url(healthcheck))

    assert response.status_code == 409
    assert "stored config" in response.json()["detail"]
    assert "uri: Enter an absolute http:// or https:// URL." in response.json()["detail"]
    assert not ProbeResult.objects.exists()


def test_run_now_with_undecryptable_header_values_is_a_409(client, make):
    healthcheck = make("https://mcp.example.com/mcp")
    Healthcheck.objects.filter(pk=healthcheck.pk).update(secret_headers="not-a-token")

    response = client.post(run_url(healthcheck))

    assert response.status_code == 409
    assert "can't be decrypted" in response.json()["detail"]
