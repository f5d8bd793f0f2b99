"""Run checks through the real process model: PostgreSQL, Redis, celery beat and region workers.

The stack (tests/e2e/e2e_stack.py) runs beat ticking every second, a worker for the default
queue and one per region queue (probes.eu-west, probes.us-east), against official-SDK MCP
servers on loopback. The tests only create healthchecks, break things from the outside (stop
a server, kill a worker, restart Redis) and read the tables.
"""

from __future__ import annotations

import itertools
import os
import re
import signal
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from e2e_stack import INTERVAL, REGIONS, SLOW_SECONDS, VISIBILITY_TIMEOUT, Service, Stack, children_of

pytestmark = [pytest.mark.services, pytest.mark.timeout(240)]


RECHECKS = {"recheck_count": 2, "recheck_delay_seconds": 1}
# How long a claimed slot may take to show up in both regions when nothing is broken, and
# when its message has to wait for Redis to hand it back (visibility timeout + one sweep).
SLOT_SECONDS = INTERVAL + SLOW_SECONDS + 10
REDELIVERY_SECONDS = 2 * VISIBILITY_TIMEOUT + SLOT_SECONDS
TASK_EVENT = re.compile(r"Task monitors\.run_batch\[([0-9a-f-]{36})\] (received|succeeded|raised)")


def statuses(stack: Stack, ids: list[int]) -> dict[int, str]:
    rows = stack.query("SELECT id, status FROM monitors_healthcheck WHERE id = ANY(%s)", [ids])
    return {row.id: row.status for row in rows}


def results(stack: Stack, ids: list[int], *, since: datetime | None = None) -> list[Any]:
    return stack.query(
        """
        SELECT r.healthcheck_id AS hc, g.slug AS region, r.slot, r.attempt, r.status, r.kind,
               r.server_name, r.tool_count, r.transport, r.checked_at, r.recorded_at
        FROM monitors_proberesult r JOIN monitors_region g ON g.id = r.region_id
        WHERE r.healthcheck_id = ANY(%s) AND r.recorded_at >= %s
        ORDER BY r.healthcheck_id, g.slug, r.slot, r.attempt
        """,
        [ids, since or datetime(2000, 1, 1, tzinfo=UTC)],
    )


def status_changes(stack: Stack, hc_id: int) -> list[Any]:
    return stack.query(
        "SELECT from_status, to_status, at, failed_regions FROM monitors_statuschange"
        " WHERE healthcheck_id = %s ORDER BY at, id",
        [hc_id],
    )


def reporting(stack: Stack, ids: list[int], *, since: datetime | None = None) -> bool:
    """Say whether every healthcheck has a scheduled result from every region (since ``since``)."""
    seen = {(row.hc, row.region) for row in results(stack, ids, since=since) if row.attempt == 0}
    return seen >= {(hc_id, region) for hc_id in ids for region in REGIONS}


def slots_unaccounted(stack: Stack) -> dict[tuple[int, str], list[datetime]]:
    """Return, per healthcheck and region, the claimed slots without a scheduled (attempt 0) result.

    Claims come from the stack's claim log, not from the range between a check's first slot and
    its next_check_at: a dispatcher late by more than an interval (a busy machine, a Redis
    restart) drops the slots it missed, by design (monitors.worker.scheduling).
    """
    regions = stack.query(
        "SELECT hr.healthcheck_id AS hc, g.slug FROM monitors_healthcheck_regions hr"
        " JOIN monitors_region g ON g.id = hr.region_id"
    )
    recorded = defaultdict(set)
    for row in stack.query(
        "SELECT r.healthcheck_id AS hc, g.slug, r.slot FROM monitors_proberesult r"
        " JOIN monitors_region g ON g.id = r.region_id WHERE r.attempt = 0"
    ):
        recorded[(row.hc, row.slug)].add(row.slot)
    claimed: dict[int, set[datetime]] = defaultdict(set)
    for claim in stack.claims():
        claimed[claim.hc].add(claim.slot)
    missing = {}
    for row in regions:
        gap = sorted(claimed[row.hc] - recorded[(row.hc, row.slug)])
        extra = recorded[(row.hc, row.slug)] - claimed[row.hc]
        assert not extra, f"results for slots never claimed: {row.hc} {row.slug} {sorted(extra)}"
        if gap:
            missing[(row.hc, row.slug)] = gap
    return missing


def batch_events(worker: Service) -> dict[str, set[str]]:
    """Return what the worker's current log says of each run_batch task: received, succeeded, raised."""
    events: dict[str, set[str]] = defaultdict(set)
    for task_id, event in TASK_EVENT.findall(worker.text()):
        events[task_id].add(event)
    return events


def batch_runs(worker: Service) -> tuple[Counter[str], set[str]]:
    """Count each run_batch task's deliveries over every log of the worker (each start); say which succeeded."""
    received: Counter[str] = Counter()
    succeeded = set()
    for task_id, event in TASK_EVENT.findall(worker.every_text()):
        if event == "received":
            received[task_id] += 1
        elif event == "succeeded":
            succeeded.add(task_id)
    return received, succeeded


def running_batches(worker: Service) -> set[str]:
    return {task for task, seen in batch_events(worker).items() if seen == {"received"}}


def wait_mid_batch(stack: Stack) -> dict[str, set[str]]:
    """Wait until both region workers run a batch held by the slow server; return their task ids."""
    first_seen: dict[str, float] = {}

    def mid_batch() -> dict[str, set[str]] | None:
        now = time.monotonic()
        found = {}
        for region in REGIONS:
            running = running_batches(stack.workers[region])
            for task in running:
                first_seen.setdefault(task, now)
            # Half a second in, a batch is past initialize and waiting on tools/list.
            found[region] = {task for task in running if now - first_seen[task] >= 0.5}
        return found if all(found.values()) and stack.slow_mcp.held() >= len(REGIONS) else None

    return stack.wait_for(
        "both region workers are in the middle of a slow batch", mid_batch, timeout=3 * INTERVAL
    )


def test_checks_from_both_regions_go_down_after_rechecks_and_come_back_up(stack: Stack) -> None:
    ids = stack.create_healthchecks(2, name="sdk", uri=stack.mcp.url + "/mcp", rules=RECHECKS)

    stack.wait_for(
        "both healthchecks are up, with results from both regions",
        lambda: set(statuses(stack, ids).values()) == {"up"} and reporting(stack, ids),
        timeout=2 * SLOT_SECONDS,
    )
    first = [row for row in results(stack, ids) if row.attempt == 0]
    assert {(row.hc, row.region) for row in first} == {(hc_id, region) for hc_id in ids for region in REGIONS}
    # What the official SDK server said, as each region's worker recorded it.
    assert {(row.status, row.server_name, row.tool_count, row.transport) for row in first} == {
        ("up", "sdk-streamable", 3, "streamable-http")
    }

    stack.mcp.kill()
    stack.wait_for(
        "both healthchecks are down after the server stopped",
        lambda: set(statuses(stack, ids).values()) == {"down"},
        timeout=2 * SLOT_SECONDS,
    )
    rows = results(stack, ids)
    for hc_id in ids:
        down = [change for change in status_changes(stack, hc_id) if change.to_status == "down"]
        assert len(down) == 1, status_changes(stack, hc_id)
        # Nothing answers on the port: every region failed to connect.
        assert down[0].failed_regions == dict.fromkeys(REGIONS, "connect")
        for region in REGIONS:
            failed = [row for row in rows if (row.hc, row.region) == (hc_id, region) and row.status == "down"]
            # The first failure was rechecked twice, a second apart, before the region counted
            # as down; once down, later slots run once (no rechecks against a dead host).
            episode = [row for row in failed if row.slot == failed[0].slot]
            assert [row.attempt for row in episode] == [0, 1, 2], episode
            assert all(
                later.checked_at - earlier.checked_at >= timedelta(seconds=0.9)
                for earlier, later in itertools.pairwise(episode)
            )
            assert [row.attempt for row in failed if row.slot != failed[0].slot] == [0] * (len(failed) - 3)
            # (The first run may have been cut mid-check by the kill: its kind can differ.)
            assert {row.kind for row in failed[1:]} == {"connect"}
            # Down only once the last recheck was in, not at the first failure.
            assert down[0].at >= episode[-1].recorded_at > episode[0].recorded_at

    stack.mcp.start().wait_ready()
    stack.wait_for(
        "both healthchecks are up again after the server came back",
        lambda: set(statuses(stack, ids).values()) == {"up"},
        timeout=2 * SLOT_SECONDS,
    )
    for hc_id in ids:
        # Each slot has one verdict: the regions' results of a slot never pass through degraded.
        assert [(c.from_status, c.to_status) for c in status_changes(stack, hc_id)] == [
            ("pending", "up"),
            ("up", "down"),
            ("down", "up"),
        ]


def test_one_region_of_three_failing_makes_the_check_degraded_and_then_up_again(stack: Stack) -> None:
    third = "ap-southeast"
    regions = (*REGIONS, third)
    worker = stack.start_region_worker(third, reaches_loopback=True)
    ids = stack.create_healthchecks(
        1, name="three", uri=stack.mcp.url + "/mcp", rules=RECHECKS, regions=regions
    )
    stack.wait_for(
        "the check is up in three regions", lambda: statuses(stack, ids) == {ids[0]: "up"}, 2 * SLOT_SECONDS
    )

    worker.stop()
    fenced = stack.start_region_worker(third, reaches_loopback=False)
    # Two slots: the first slot of a region's failure is held as a possible split (rules.holds_split).
    stack.wait_for(
        "the check is degraded", lambda: statuses(stack, ids) == {ids[0]: "degraded"}, 3 * SLOT_SECONDS
    )
    fenced.stop()
    stack.start_region_worker(third, reaches_loopback=True)
    stack.wait_for("the check is up again", lambda: statuses(stack, ids) == {ids[0]: "up"}, 2 * SLOT_SECONDS)

    changes = status_changes(stack, ids[0])
    assert [(c.from_status, c.to_status) for c in changes] == [
        ("pending", "up"),
        ("up", "degraded"),
        ("degraded", "up"),
    ]
    assert changes[1].failed_regions == {third: "blocked_address"}


def test_killed_workers_and_a_redis_restart_lose_no_slot_and_record_nothing_twice(stack: Stack) -> None:
    ids = stack.create_healthchecks(3, name="slow", uri=stack.slow_mcp.url + "/mcp", rules=RECHECKS)
    stack.wait_for(
        "the slow checks report from both regions", lambda: reporting(stack, ids), timeout=2 * SLOT_SECONDS
    )

    # Kill both region workers in the middle of a batch stuck on the slow tools/list: the whole
    # eu-west worker (Redis hands its message back after the visibility timeout) and us-east's
    # pool processes (the task is rejected and requeued at once).
    eu_west, us_east = stack.workers["eu-west"], stack.workers["us-east"]
    killed = wait_mid_batch(stack)
    pool = children_of(us_east.pid)
    eu_west.kill()
    for pid in pool:
        os.kill(pid, signal.SIGKILL)
    eu_west.start().wait_ready()

    # A batch the test saw running may still have finished before its kill landed (a busy
    # machine): success is read from every log of the worker, and each region must have had
    # at least one batch really cut and delivered again.
    def redelivered() -> bool:
        runs = {region: batch_runs(stack.workers[region]) for region in REGIONS}
        done = set().union(*(succeeded for _, succeeded in runs.values()))
        cut = all(
            any(received[task] > 1 for task in killed[region]) for region, (received, _) in runs.items()
        )
        return killed["eu-west"] | killed["us-east"] <= done and cut

    stack.wait_for(
        f"the killed batches {killed} ran again and succeeded",
        redelivered,
        timeout=REDELIVERY_SECONDS,
        explain=lambda: (
            f"; deliveries and successes per region: {[batch_runs(stack.workers[r]) for r in REGIONS]}"
        ),
    )

    # Restart Redis while both region workers hold a batch they have not acknowledged yet.
    wait_mid_batch(stack)
    restarted_at = datetime.now(UTC)
    stack.restart_redis()
    stack.wait_for(
        "every slow check has new results from both regions after the Redis restart",
        lambda: reporting(stack, ids, since=restarted_at),
        timeout=2 * SLOT_SECONDS,
    )

    # Deliver each check's first claimed slot once more in each region, as Redis does when a
    # worker dies after recording but before acknowledging: it runs again and records nothing.
    first_slots = {hc_id: min(claim.slot for claim in stack.claims() if claim.hc == hc_id) for hc_id in ids}
    first = {
        (row.hc, row.region, row.slot): row.recorded_at
        for row in results(stack, ids)
        if row.attempt == 0 and row.slot == first_slots[row.hc]
    }
    assert len(first) == len(ids) * len(REGIONS), (
        f"first slots {first_slots} recorded only as {sorted(first)}"
    )
    replayed = stack.send_batches(
        [(region, [[hc_id, first_slots[hc_id].isoformat(), 0] for hc_id in ids]) for region in REGIONS]
    )
    stack.wait_for(
        f"the replayed batches {replayed} ran",
        lambda: all(
            "succeeded" in batch_events(stack.workers[region]).get(task, set())
            for region, task in zip(REGIONS, replayed, strict=True)
        ),
        timeout=SLOT_SECONDS,
    )
    again = {
        (row.hc, row.region, row.slot): row.recorded_at for row in results(stack, ids) if row.attempt == 0
    }
    assert {key: again[key] for key in first} == first

    # Stop claiming, then every slot claimed so far must get its result in every region.
    stack.beat.stop()
    stack.wait_for(
        "every claimed slot has its result in every region",
        lambda: not slots_unaccounted(stack),
        timeout=REDELIVERY_SECONDS,
        explain=lambda: f"; claimed without a result: {slots_unaccounted(stack)}",
    )
    duplicates = stack.query(
        "SELECT healthcheck_id, region_id, slot, attempt, count(*) FROM monitors_proberesult"
        " GROUP BY 1, 2, 3, 4 HAVING count(*) > 1"
    )
    assert duplicates == []
    # Nothing was ever down: no failure was recorded for a killed run, and the redelivered
    # runs changed no status (one change each: pending -> up).
    assert {row.status for row in results(stack, ids)} == {"up"}
    for hc_id in ids:
        assert [(c.from_status, c.to_status) for c in status_changes(stack, hc_id)] == [("pending", "up")]
