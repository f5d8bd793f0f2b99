"""An outage never reads as speed: real runs against loopback (answered, then refused) and the badge and chart read back over HTTP.

The engine checks a server that answers and a port that refuses, the worker records them,
the rollups are made as the beat makes them, and the public badge and page are read with httpx
from the live server: only answered runs make the response time.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from django.utils import timezone

from monitors.models import Healthcheck, ProbeResult, Rollup
from monitors.scorecard import nearest_rank
from monitors.services import healthcheck_create, rollups_refresh
from monitors.worker.execution import execute_batch
from probes.checks.http import HTTP
from statuspages import services

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

REGION = "eu-west"
RUNS = 6


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello"
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


class Target:
    """Answer on loopback until stopped; then the same port refuses."""

    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        if self.thread.is_alive():
            self.server.shutdown()
            self.server.server_close()


@pytest.fixture
def target() -> Iterator[Target]:
    serving = Target()
    try:
        yield serving
    finally:
        serving.stop()


def _check(org, name: str, uri: str) -> Healthcheck:
    return healthcheck_create(
        organization=org,
        name=name,
        check_type=HTTP,
        config={"uri": uri, "timeout": 5},
        now=timezone.now() - timedelta(days=2),
        interval_seconds=3600,
        region_slugs=[REGION],
    )


def _run(check: Healthcheck, minutes: range) -> None:
    hour = timezone.now().replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    items = [[check.id, (hour + timedelta(minutes=m)).isoformat(), 0] for m in minutes]
    execute_batch(REGION, items, enqueue=lambda *args, **kwargs: None)


def _answered_median(check: Healthcheck) -> float | None:
    times = sorted(
        ms
        for status, ms in ProbeResult.objects.filter(healthcheck=check).values_list("status", "total_ms")
        if status == "up" and ms is not None
    )
    return nearest_rank(times, 50)


@pytest.fixture
def page(live_server, org, settings, target):
    """Make a page of three checks: always answered, answered then refused, always refused."""
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    steady = _check(org, "Steady", target.url)
    flaky = _check(org, "Flaky", target.url)
    _run(steady, range(RUNS))
    _run(flaky, range(RUNS // 2))
    target.stop()  # the same port now refuses
    _run(flaky, range(RUNS // 2, RUNS))
    refused = _check(org, "Refused", target.url)
    _run(refused, range(RUNS))
    rollups_refresh(now=timezone.now())
    made = services.status_page_create(organization=org, changes={"slug": "acme", "title": "Acme status"})
    keys = {}
    for position, check in enumerate((steady, flaky, refused)):
        component = services.component_create(
            page=made, changes={"healthcheck": check.public_id, "position": position}
        )
        keys[check.name] = (check, component.public_id)
    return f"{live_server.url}/s/acme/", keys


def badge(base: str, key) -> dict:
    return httpx.get(f"{base}badges/{key}/response-time.json", timeout=30).json()


def test_the_runs_were_real_answers_and_refusals(page):
    _, keys = page
    flaky = keys["Flaky"][0]
    kinds = sorted(ProbeResult.objects.filter(healthcheck=flaky).values_list("status", "kind"))
    assert kinds == [("down", "connect")] * (RUNS // 2) + [("up", "")] * (RUNS // 2)


def test_a_server_that_only_refused_has_no_response_time_but_a_red_no_answer(page):
    base, keys = page
    shown = badge(base, keys["Refused"][1])
    assert (shown["message"], shown["color"]) == ("no answer", "red")


@pytest.mark.parametrize("name", ["Steady", "Flaky"])
def test_the_response_time_is_the_median_of_the_answered_runs_only(page, name):
    base, keys = page
    check, key = keys[name]
    median = _answered_median(check)
    # Exact before the badge rounds it: a refusal's 0.3 ms and an answer's 2 ms can round alike.
    assert Rollup.objects.get(healthcheck=check, period=Rollup.Period.HOUR).p50_ms == median
    assert badge(base, key)["message"] == f"{round(median)} ms"


def test_the_chart_of_a_refused_server_draws_no_speed_and_the_page_says_why(page):
    base, _ = page
    html = httpx.get(base, timeout=30).text
    assert "Refused: response time, no data" in html
    assert "Steady: response time from" in html
    assert "failed checks count as downtime, not as response time" in html
