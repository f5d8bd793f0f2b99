"""A new healthcheck's first run happens at once, in every region, as a customer sees it over HTTP.

Checked from outside: a real Uptimy (``manage.py serve``, the embedded worker, no broker, as
`make run`), a loopback HTTP target that records each request it receives, and the REST API.
The check's interval is the free plan's 300 s, so a result before its first slot can only
come from the first run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

# How long the first results may take: a tick (2 s), the run, the recording; generous for a busy CI machine.
FIRST_RESULT_WITHIN = 60.0


class Target:
    """An HTTP server on loopback that answers 200 and records every request's User-Agent."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.arrived = threading.Event()
        target = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                target.requests.append(self.headers.get("User-Agent", ""))
                target.arrived.set()
                body = b"ok"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/health"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def target() -> Iterator[Target]:
    served = Target()
    yield served
    served.close()


def first_results(api: httpx.Client, healthcheck_id: str) -> dict[str, dict]:
    """Return each region's earliest result, waiting (up to FIRST_RESULT_WITHIN) until every region has one."""
    regions = set(api.get(f"/api/v1/healthchecks/{healthcheck_id}/").json()["regions"])
    deadline = time.monotonic() + FIRST_RESULT_WITHIN
    while True:
        page = api.get(f"/api/v1/healthchecks/{healthcheck_id}/results/").json()
        earliest: dict[str, dict] = {}
        for result in sorted(page["results"], key=lambda r: r["slot"]):
            earliest.setdefault(result["region"], result)
        if set(earliest) >= regions:
            return earliest
        assert time.monotonic() < deadline, f"results of {sorted(earliest)} only, of {sorted(regions)}"
        time.sleep(0.25)


def test_a_new_check_is_run_in_every_region_right_after_it_is_created(loopback_uptimy, target):
    api = loopback_uptimy.api()
    created = api.post(
        "/api/v1/healthchecks/",
        json={"name": "First run", "type": "http", "interval": 300, "config": {"uri": target.url}},
    )
    assert created.status_code == 201, created.text
    healthcheck = created.json()
    first_slot = datetime.fromisoformat(healthcheck["next_check_at"])

    earliest = first_results(api, healthcheck["id"])

    # Each region's first run is a slot of its own, taken at creation, before the schedule's first slot.
    assert all(datetime.fromisoformat(r["slot"]) < first_slot for r in earliest.values()), (
        earliest,
        first_slot,
    )
    assert {result["status"] for result in earliest.values()} == {"up"}
    assert len(target.requests) >= len(earliest)


def test_a_check_created_paused_is_not_run(loopback_uptimy, target):
    api = loopback_uptimy.api()
    created = api.post(
        "/api/v1/healthchecks/",
        json={"name": "Paused first", "type": "http", "config": {"uri": target.url}, "paused": True},
    )
    assert created.status_code == 201, created.text
    # A second, running check proves the worker ran meanwhile: the paused one still has nothing.
    control = api.post(
        "/api/v1/healthchecks/",
        json={"name": "Control", "type": "http", "config": {"uri": target.url + "?control"}},
    ).json()
    first_results(api, control["id"])

    assert api.get(f"/api/v1/healthchecks/{created.json()['id']}/results/").json()["results"] == []
