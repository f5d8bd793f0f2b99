"""Prometheus metrics (issue 9, item 8): what the worker counts, what a scrape computes, who may scrape.

These run in one process (no PROMETHEUS_MULTIPROC_DIR): the worker's ``observe_*`` functions are
called directly and ``/metrics`` is scraped through Django's test client. The counters are the
process's own and only grow, so each test reads them before and after, on labels of its own.
tests/monitors/test_metrics_serve.py scrapes a real ``manage.py serve`` across processes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import redis
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from alerts import metrics as alerts_metrics
from monitors import metrics
from monitors.management.commands import serve
from monitors.management.commands.runprobes import queue_metrics_job
from monitors.models import Healthcheck, Region, region_queue
from monitors.services import healthcheck_create
from monitors.worker.dispatch import dispatch_due
from monitors.worker.embedded import EmbeddedWorker
from monitors.worker.execution import execute_batch
from probes.checks import check_kind
from probes.types import FailureKind, ProbeOutcome, Status

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "uptimy.json"
MCP_CONFIG = check_kind("mcp").parse({"uri": "https://mcp.example.com/mcp"})
HTTP_CONFIG = check_kind("http").parse({"uri": "https://example.com/health"})
UP = ProbeOutcome(status=Status.UP)
TIMED_OUT = ProbeOutcome(status=Status.DOWN, kind=FailureKind.TIMEOUT, reason="no answer in time")


def scrape(**request) -> str:
    response = Client().get("/metrics", **request)
    assert response.status_code == 200, response.content
    return response.content.decode()


def sample(text: str, name: str, **labels: str) -> float | None:
    """Return the value of one sample of an exposition, or None when it is absent."""
    for family in text_string_to_metric_families(text):
        for found in family.samples:
            if found.name == name and found.labels == labels:
                return found.value
    return None


def families(text: str) -> set[str]:
    return {family.name for family in text_string_to_metric_families(text)}


def value(name: str, **labels: str) -> float:
    """Return a sample's value in a fresh scrape, 0 when it was never counted."""
    return sample(scrape(), name, **labels) or 0.0


def unique_region() -> str:
    return f"test-{uuid.uuid4().hex[:10]}"


class Run:
    """A recorded result as far as the lag is concerned: its slot and attempt."""

    def __init__(self, slot: datetime, attempt: int = 0) -> None:
        self.slot = slot
        self.attempt = attempt


@pytest.fixture(autouse=True)
def _open_database(db):
    """Let every scrape run its scrape-time query."""


# --- what the worker counts ------------------------------------------------------------------


def test_checks_run_are_counted_by_region_type_and_result_kind():
    region = unique_region()

    metrics.observe_checks(
        region, [(MCP_CONFIG, UP), (MCP_CONFIG, TIMED_OUT), (HTTP_CONFIG, UP), (MCP_CONFIG, UP)]
    )

    text = scrape()
    assert sample(text, "uptimy_checks_total", region=region, type="mcp", kind="ok") == 2
    assert sample(text, "uptimy_checks_total", region=region, type="mcp", kind="timeout") == 1
    assert sample(text, "uptimy_checks_total", region=region, type="http", kind="ok") == 1


@pytest.mark.parametrize(
    ("outcome", "kind"),
    [
        (UP, "ok"),
        (ProbeOutcome(status=Status.DEGRADED), "ok"),
        (ProbeOutcome(status=Status.UP, kind=""), "ok"),  # an empty kind, as a result row stores it
        (TIMED_OUT, "timeout"),
        (ProbeOutcome(status=Status.DOWN, kind=FailureKind.MISSING_TOOLS, reason="gone"), "missing_tools"),
    ],
)
def test_the_result_kind_is_the_failure_kind_or_ok(outcome, kind):
    region = unique_region()

    metrics.observe_checks(region, [(MCP_CONFIG, outcome)])

    assert value("uptimy_checks_total", region=region, type="mcp", kind=kind) == 1


def test_a_config_of_no_registered_type_counts_as_unknown():
    region = unique_region()

    metrics.observe_checks(region, [(object(), UP)])

    assert value("uptimy_checks_total", region=region, type="unknown", kind="ok") == 1


def test_a_metric_that_fails_never_fails_the_step_it_counts(monkeypatch, caplog):
    def broken(**labels):
        raise OSError("metrics file unwritable")

    monkeypatch.setattr(metrics.CHECKS, "labels", broken)

    metrics.observe_checks(unique_region(), [(MCP_CONFIG, UP)])

    assert "observe_checks failed" in caplog.text


def test_recording_counts_the_results_and_how_long_it_took():
    region = unique_region()
    recorded_at = datetime(2026, 11, 29, 12, 0, 10, tzinfo=UTC)
    results = [Run(recorded_at - timedelta(seconds=3)), Run(recorded_at - timedelta(seconds=4))]

    metrics.observe_recording(region, results, 0.04, recorded_at)

    text = scrape()
    assert sample(text, "uptimy_results_recorded_total", region=region) == 2
    assert sample(text, "uptimy_recording_duration_seconds_count", region=region) == 1
    assert sample(text, "uptimy_recording_duration_seconds_sum", region=region) == pytest.approx(0.04)
    assert sample(text, "uptimy_recording_duration_seconds_bucket", region=region, le="0.05") == 1


def test_each_recorded_result_adds_its_slot_to_recorded_lag():
    region = unique_region()
    recorded_at = datetime(2026, 11, 29, 12, 0, 30, tzinfo=UTC)
    results = [Run(recorded_at - timedelta(seconds=1.5)), Run(recorded_at - timedelta(seconds=12))]

    metrics.observe_recording(region, results, 0.01, recorded_at)

    text = scrape()
    assert sample(text, "uptimy_result_lag_seconds_count", region=region) == 2
    assert sample(text, "uptimy_result_lag_seconds_sum", region=region) == pytest.approx(13.5)
    assert sample(text, "uptimy_result_lag_seconds_bucket", region=region, le="2.0") == 1
    assert sample(text, "uptimy_result_lag_seconds_bucket", region=region, le="10.0") == 1
    assert sample(text, "uptimy_result_lag_seconds_bucket", region=region, le="15.0") == 2


def test_a_recheck_counts_as_recorded_but_adds_no_lag():
    region = unique_region()
    recorded_at = datetime(2026, 11, 29, 12, 0, 30, tzinfo=UTC)
    results = [Run(recorded_at - timedelta(seconds=2)), Run(recorded_at - timedelta(seconds=12), attempt=1)]

    metrics.observe_recording(region, results, 0.01, recorded_at)

    text = scrape()
    assert sample(text, "uptimy_results_recorded_total", region=region) == 2
    assert sample(text, "uptimy_result_lag_seconds_count", region=region) == 1
    assert sample(text, "uptimy_result_lag_seconds_sum", region=region) == pytest.approx(2)


def test_a_slot_ahead_of_the_recording_clock_counts_as_no_lag():
    region = unique_region()
    recorded_at = datetime(2026, 11, 29, 12, 0, 30, tzinfo=UTC)

    metrics.observe_recording(region, [Run(recorded_at + timedelta(seconds=1))], 0.01, recorded_at)

    assert value("uptimy_result_lag_seconds_sum", region=region) == 0
    assert value("uptimy_result_lag_seconds_count", region=region) == 1


def test_a_claim_is_timed_and_its_checks_counted():
    before_count = value("uptimy_claim_duration_seconds_count")
    before_claimed = value("uptimy_checks_claimed_total")

    metrics.observe_claim(0.02, 37)

    assert value("uptimy_claim_duration_seconds_count") == before_count + 1
    assert value("uptimy_checks_claimed_total") == before_claimed + 37


def test_a_dispatch_tick_times_its_claim_and_counts_what_it_claimed(make, refused_url):
    healthcheck = make(refused_url)
    Healthcheck.objects.filter(pk=healthcheck.pk).update(next_check_at=timezone.now() - timedelta(seconds=1))
    before_count = value("uptimy_claim_duration_seconds_count")
    before_claimed = value("uptimy_checks_claimed_total")

    dispatch_due(enqueue=lambda *batch: None)

    assert value("uptimy_claim_duration_seconds_count") == before_count + 1
    assert value("uptimy_checks_claimed_total") == before_claimed + 1


def test_a_batch_counts_its_checks_and_its_recorded_results(make, refused_url):
    healthcheck = make(refused_url, regions=["eu-west"], recheck_count=0)
    checks = ("uptimy_checks_total", {"region": "eu-west", "type": "mcp", "kind": "connect"})
    before_checks = value(checks[0], **checks[1])
    before_recorded = value("uptimy_results_recorded_total", region="eu-west")
    before_lag = value("uptimy_result_lag_seconds_count", region="eu-west")

    execute_batch("eu-west", [[healthcheck.id, timezone.now().isoformat(), 0]], enqueue=lambda *batch: None)

    assert value(checks[0], **checks[1]) == before_checks + 1
    assert value("uptimy_results_recorded_total", region="eu-west") == before_recorded + 1
    assert value("uptimy_result_lag_seconds_count", region="eu-west") == before_lag + 1


# --- the embedded worker's queue -------------------------------------------------------------


@pytest.fixture
def embedded():
    worker = EmbeddedWorker(tick_seconds=1)
    yield worker
    worker.pool.shutdown(wait=True)


def test_the_embedded_worker_tells_the_batches_it_holds_by_region(embedded):
    embedded.enqueue("eu-west", [[1, "2026-11-29T12:00:00+00:00", 0]], 60)
    embedded.enqueue("eu-west", [[2, "2026-11-29T12:00:00+00:00", 1]], 5)
    embedded.enqueue("us-east", [[1, "2026-11-29T12:00:00+00:00", 0]], 60)

    assert embedded.pending_batches() == {"eu-west": 2, "us-east": 1}


def test_the_embedded_queue_is_published_per_region(embedded):
    region = unique_region()
    embedded.enqueue(region, [[1, "2026-11-29T12:00:00+00:00", 0]], 60)
    embedded.enqueue(region, [[2, "2026-11-29T12:00:00+00:00", 0]], 60)

    queue_metrics_job(embedded, 1.0).run()

    assert value("uptimy_embedded_queue_depth", region=region) == 2


def test_a_region_the_embedded_worker_no_longer_holds_goes_to_zero():
    region = unique_region()
    metrics.observe_embedded_queue({region: 3})

    metrics.observe_embedded_queue({})

    assert sample(scrape(), "uptimy_embedded_queue_depth", region=region) == 0


# --- computed at scrape time -----------------------------------------------------------------


@pytest.fixture
def make_due(org, settings):
    settings.UPTIMY_TICK_SECONDS = 2.0

    def make(*, late_by: float, paused: bool = False) -> Healthcheck:
        healthcheck = healthcheck_create(
            organization=org,
            name="due",
            check_type=check_kind("mcp"),
            config={"uri": "https://mcp.example.com/mcp"},
            now=timezone.now(),
            paused=paused,
        )
        Healthcheck.objects.filter(pk=healthcheck.pk).update(
            next_check_at=timezone.now() - timedelta(seconds=late_by)
        )
        return healthcheck

    return make


def test_due_checks_not_claimed_within_a_tick_are_counted_at_scrape_time(make_due):
    before = value("uptimy_checks_due_unclaimed")
    make_due(late_by=30)
    make_due(late_by=600)

    assert value("uptimy_checks_due_unclaimed") == before + 2


@pytest.mark.parametrize(
    ("late_by", "paused"),
    [
        (-30, False),  # due later
        (0.5, False),  # due within the current tick: the next tick claims it
        (600, True),  # paused: never claimed
    ],
)
def test_a_check_the_scheduler_is_not_late_for_is_not_counted_as_unclaimed(make_due, late_by, paused):
    before = value("uptimy_checks_due_unclaimed")

    make_due(late_by=late_by, paused=paused)

    assert value("uptimy_checks_due_unclaimed") == before


@pytest.fixture
def broker(redis_url, settings):
    """Point the settings at the test Redis; yield it and the queues of regions of this test's own."""
    settings.REDIS_URL = redis_url
    client = redis.Redis.from_url(redis_url)
    made: list[str] = []

    def region(*, enabled: bool = True) -> str:
        slug = unique_region()
        Region.objects.create(slug=slug, name=slug, enabled=enabled)
        made.append(region_queue(slug))
        return slug

    yield client, region
    if made:
        client.delete(*made)
    client.close()


def test_each_enabled_regions_broker_queue_length_is_read_at_scrape_time(broker):
    client, make_region = broker
    busy, idle = make_region(), make_region()
    client.rpush(region_queue(busy), "batch-1", "batch-2", "batch-3")

    text = scrape()

    assert sample(text, "uptimy_queue_depth", region=busy) == 3
    assert sample(text, "uptimy_queue_depth", region=idle) == 0


def test_a_disabled_regions_queue_is_not_read(broker):
    client, make_region = broker
    disabled = make_region(enabled=False)
    client.rpush(region_queue(disabled), "batch")

    assert sample(scrape(), "uptimy_queue_depth", region=disabled) is None


def test_without_a_broker_there_is_no_broker_queue_gauge(settings):
    settings.REDIS_URL = ""

    assert "uptimy_queue_depth" not in families(scrape())


def test_a_broker_that_does_not_answer_leaves_its_gauge_out_and_the_rest_in(settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"

    text = scrape()

    assert "uptimy_queue_depth" not in families(text)
    assert "uptimy_checks_due_unclaimed" in families(text)
    assert "uptimy_checks" in families(text)


# --- who may scrape --------------------------------------------------------------------------

TOKEN = "scrape-token-1f3a"


@pytest.mark.parametrize(
    ("token", "request_", "status"),
    [
        # Without a token: this machine's loopback only, never through a proxy.
        ("", {"REMOTE_ADDR": "127.0.0.1"}, 200),
        ("", {"REMOTE_ADDR": "127.0.0.9"}, 200),
        ("", {"REMOTE_ADDR": "::1"}, 200),
        ("", {"REMOTE_ADDR": "::ffff:127.0.0.1"}, 200),
        ("", {"REMOTE_ADDR": "203.0.113.7"}, 403),
        ("", {"REMOTE_ADDR": "10.0.0.5"}, 403),
        ("", {"REMOTE_ADDR": "2001:db8::1"}, 403),
        ("", {"REMOTE_ADDR": ""}, 403),
        ("", {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "203.0.113.7"}, 403),
        ("", {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_REAL_IP": "203.0.113.7"}, 403),
        ("", {"REMOTE_ADDR": "127.0.0.1", "HTTP_FORWARDED": "for=203.0.113.7"}, 403),
        # With a token: the token, from anywhere; loopback alone is not enough.
        (TOKEN, {"REMOTE_ADDR": "203.0.113.7", "HTTP_AUTHORIZATION": f"Bearer {TOKEN}"}, 200),
        (TOKEN, {"REMOTE_ADDR": "203.0.113.7", "HTTP_AUTHORIZATION": f"bearer {TOKEN}"}, 200),
        (TOKEN, {"REMOTE_ADDR": "127.0.0.1"}, 401),
        (TOKEN, {"REMOTE_ADDR": "203.0.113.7", "HTTP_AUTHORIZATION": "Bearer wrong"}, 401),
        (TOKEN, {"REMOTE_ADDR": "203.0.113.7", "HTTP_AUTHORIZATION": f"Bearer {TOKEN}x"}, 401),
        (TOKEN, {"REMOTE_ADDR": "203.0.113.7", "HTTP_AUTHORIZATION": f"Basic {TOKEN}"}, 401),
        (TOKEN, {"REMOTE_ADDR": "203.0.113.7", "HTTP_AUTHORIZATION": "Bearer "}, 401),
    ],
)
def test_who_may_scrape(settings, token, request_, status):
    settings.UPTIMY_METRICS_TOKEN = token

    response = Client().get("/metrics", **request_)

    assert response.status_code == status
    if status == 200:
        assert response["Content-Type"].startswith("text/plain; version=")
        assert b"uptimy_checks_due_unclaimed" in response.content


def test_a_refused_scrape_asks_for_the_bearer_token_without_showing_it(settings):
    settings.UPTIMY_METRICS_TOKEN = TOKEN

    response = Client().get("/metrics", REMOTE_ADDR="203.0.113.7", HTTP_AUTHORIZATION="Bearer wrong")

    assert response["WWW-Authenticate"].startswith("Bearer")
    assert TOKEN.encode() not in response.content


def test_metrics_answer_get_only():
    assert Client().post("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 405


# --- serve's metrics directory ---------------------------------------------------------------


def test_serve_gives_each_run_an_empty_metrics_directory_under_the_var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path

    path = serve.metrics_dir()

    assert path == tmp_path / "metrics" / f"run-{os.getpid()}"
    assert path.is_dir()
    assert list(path.iterdir()) == []


def test_serve_removes_the_metrics_of_runs_that_ended_and_keeps_those_still_running(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    running = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        for pid in (ended.stdout.strip(), str(running.pid)):
            (tmp_path / "metrics" / f"run-{pid}").mkdir(parents=True)
            (tmp_path / "metrics" / f"run-{pid}" / "counter_1.db").write_bytes(b"x")

        serve.metrics_dir()

        assert not (tmp_path / "metrics" / f"run-{ended.stdout.strip()}").exists()
        assert (tmp_path / "metrics" / f"run-{running.pid}" / "counter_1.db").exists()
    finally:
        running.communicate(b"", timeout=30)


def test_serve_empties_a_metrics_directory_given_by_the_environment_of_its_metrics_files_only(tmp_path):
    (tmp_path / "counter_123.db").write_bytes(b"x")
    (tmp_path / "gauge_livesum_123.db").write_bytes(b"x")
    (tmp_path / "notes.txt").write_text("kept")

    path = serve.metrics_dir(str(tmp_path))

    assert path == tmp_path
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


# --- the dashboard and the metrics page ------------------------------------------------------------


def exposed_families() -> set[str]:
    """Return every family a scrape can hold: the worker's metrics and the scrape-time gauges."""
    names = {
        family.name
        for registry in (metrics.REGISTRY, alerts_metrics.REGISTRY)
        for family in registry.collect()
    }
    return names | {"uptimy_checks_due_unclaimed", "uptimy_queue_depth", "uptimy_alert_deliveries_waiting"}


def dashboard_queries() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    return [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]


def test_the_dashboard_queries_only_metrics_uptimy_exposes():
    exposed = exposed_families()
    series = {
        re.sub(r"_(total|bucket|count|sum)$", "", name)
        for expr in dashboard_queries()
        for name in re.findall(r"\buptimy_[a-z_]+", expr)
    }

    assert series, "the dashboard queries nothing"
    assert series <= exposed, series - exposed


def test_the_dashboard_and_the_readme_show_every_metric():
    queries = " ".join(dashboard_queries())
    readme = (ROOT / "docs" / "operating" / "metrics.md").read_text()

    for name in exposed_families():
        assert re.search(rf"\b{name}(_total|_bucket|_count|_sum)?\b", queries), f"{name} has no panel"
        assert re.search(rf"`{name}(_total)?[`{{]", readme), f"{name} is not on docs/operating/metrics.md"
