"""Record a region's batch of check outcomes and apply the rules: the worker's one write.

Over 600 lines on purpose: the recorder is one transaction (lock the checks, apply the rules to
the region states, write everything back), and its pieces (:class:`_LockedCheck`, the state book,
the tool lists' versions, the result rows) share its row shapes and its lock order. What it can
stand apart is apart: the generic bulk SQL in ``monitors.services.bulk``, the caps on what a
result stores in ``monitors.services.result_capping``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import math
import operator
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import InterfaceError, OperationalError, connection, models, transaction
from django.db.models import Expression
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast
from django.utils import timezone

from monitors.models import (
    MAX_CHANGE_INPUTS,
    MAX_CHANGE_NAMES,
    MAX_REPLACED_VERSIONS,
    CauseChange,
    CertificateChange,
    Healthcheck,
    ProbeResult,
    Region,
    RegionState,
    SlotVerdict,
    StatusChange,
    ToolChange,
    ToolList,
    ToolListVersion,
)
from monitors.rules import (
    Cause,
    HealthPolicy,
    RecheckPolicy,
    RegionVote,
    cause_changed,
    cause_of,
    failing_regions,
    holds_split,
    overall_verdict,
    region_verdict,
    settle_window,
    slot_due,
    tool_diff,
)
from monitors.selectors import BoundWindow, bound_window, downtime_bounds, maintenance_covering
from monitors.services.bulk import insert_rows, update_rows

# The caps moved to their own module; their names stay importable from here.
from monitors.services.result_capping import MAX_DETAILS_BYTES as MAX_DETAILS_BYTES
from monitors.services.result_capping import MAX_REASON as MAX_REASON
from monitors.services.result_capping import MAX_REQUIRED_INPUTS as MAX_REQUIRED_INPUTS
from monitors.services.result_capping import MAX_WARNINGS as MAX_WARNINGS
from monitors.services.result_capping import storable_details as storable_details
from monitors.services.result_capping import storable_outcome as storable_outcome
from probes.types import FailureKind, ProbeOutcome, Status, Timings, ToolInfo

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RunResult:
    """One check run as a worker reports it: which run it was and what it found."""

    healthcheck_id: int
    slot: datetime
    attempt: int
    outcome: ProbeOutcome
    checked_at: datetime


@dataclass(frozen=True, slots=True)
class Recheck:
    """A run to repeat in the same region after ``delay_seconds``, before the region counts as down."""

    healthcheck_id: int
    slot: datetime
    attempt: int
    delay_seconds: float


def outcomes_record(
    *, region_slug: str, results: Sequence[RunResult], now: datetime | None = None
) -> list[Recheck]:
    """Store a region's batch of results and apply the rules; return the rechecks to run.

    One transaction: bulk-insert the results (a repeated run inserts nothing, by the unique
    constraint), lock the healthchecks in id order (two regions recording overlapping batches
    can't deadlock), update region states, statuses, StatusChange rows and tool-list events.
    Without ``now``, the time is read once the locks are held, so a status change is never
    stamped earlier than the other region's results it was decided from.

    Every string a target sent is made storable first (:func:`storable_outcome`). Should the
    batch still fail (a bug, a value no one foresaw), each result is recorded on its own, and
    one that fails again is recorded as a ``protocol`` failure saying so: one target's answer
    never costs another tenant its result. A database that is down or locked fails the call,
    so the worker retries the whole batch.
    """
    if not results:
        return []
    regions = _RegionTable.load()
    region_id = regions.ids.get(region_slug)
    if region_id is None:
        raise Region.DoesNotExist(f"no region {region_slug!r}")
    clean = [_storable_result(result) for result in results]
    try:
        return _record(region_id, regions, clean, now)
    except _DATABASE_UNAVAILABLE:
        raise
    except Exception:
        if len(clean) == 1:
            return _record_stand_in(region_id, regions, clean[0], now)
        logger.exception(
            "recording a batch of %d results in %s failed; recording them one by one", len(clean), region_slug
        )
    rechecks: list[Recheck] = []
    # In the order the batch applies them, so a run never overtakes an earlier one of its check.
    for result in sorted(clean, key=lambda r: (r.healthcheck_id, r.slot, r.attempt)):
        try:
            rechecks += _record(region_id, regions, [result], now)
        except _DATABASE_UNAVAILABLE:
            raise
        except Exception:
            rechecks += _record_stand_in(region_id, regions, result, now)
    return rechecks


def verdicts_settle(*, now: datetime | None = None, limit: int = 1000) -> int:
    """Decide the slots whose settle window closed while a region stayed silent; return how many checks.

    A slot's verdict waits for every expected region (monitors.rules.slot_due); recording
    decides it when the last region reports. When one never does (its worker is gone), nothing
    is recorded to trigger the decision: this pass, run every tick, makes it at ``settle_at``.
    """
    due_ids = list(
        SlotVerdict.objects.filter(settle_at__lte=now or timezone.now())
        .order_by("settle_at")
        .values_list("healthcheck_id", flat=True)[:limit]
    )
    if not due_ids:
        return 0
    regions = _RegionTable.load()
    with transaction.atomic():
        checks = _lock_checks(due_ids)
        # Read after the locks, like _record: a recording that held them may have decided already.
        at = now or timezone.now()
        book = _StateBook.load(checks, None, at, regions=regions)
        for check in checks.values():
            if check.settle_at is not None and check.settle_at <= at:
                book.decide(check)
        book.save()
    return len(checks)


# A database that is down, restarting or locked: the whole batch is retried (monitors.run_batch
# retries on these), never turned into per-result failures.
_DATABASE_UNAVAILABLE = (OperationalError, InterfaceError)

UNRECORDABLE_REASON = (
    "Uptimy could not record this run's answer (an error inside Uptimy, not the server's); "
    "the run counts as failed"
)


@dataclass(frozen=True, slots=True)
class _RegionTable:
    """Hold every region's id, slug and whether it runs checks, read once per call."""

    ids: dict[str, int]
    slugs: dict[int, str]
    enabled: frozenset[int]

    @classmethod
    def load(cls) -> _RegionTable:
        rows = list(Region.objects.values_list("slug", "id", "enabled"))
        return cls(
            ids={slug: id_ for slug, id_, _ in rows},
            slugs={id_: slug for slug, id_, _ in rows},
            enabled=frozenset(id_ for _, id_, enabled in rows if enabled),
        )


def _record(
    region_id: int, regions: _RegionTable, results: Sequence[RunResult], now: datetime | None
) -> list[Recheck]:
    ids = sorted({result.healthcheck_id for result in results})
    rechecks: list[Recheck] = []
    with transaction.atomic():
        checks = _lock_checks(ids)
        now = now or timezone.now()
        live = [result for result in results if result.healthcheck_id in checks]
        held = _in_maintenance(checks, live)
        insert_rows(
            ProbeResult,
            [_result_row(result, region_id, now, index in held) for index, result in enumerate(live)],
        )
        book = _StateBook.load(checks, region_id, now, regions=regions)
        for result in sorted(live, key=lambda r: (r.healthcheck_id, r.slot, r.attempt)):
            recheck = book.apply(checks[result.healthcheck_id], result)
            if recheck is not None:
                rechecks.append(recheck)
        book.save()
    return rechecks


def _in_maintenance(checks: Mapping[int, _LockedCheck], results: Sequence[RunResult]) -> set[int]:
    """Return the indexes of the results taken inside a maintenance window of their healthcheck.

    The windows are read once for the group (one indexed query when the organizations have none
    live), and each window's occurrences computed once over the group's span of check times.
    """
    if not results:
        return set()
    moments = [result.checked_at for result in results]
    covering = maintenance_covering(
        organizations={
            result.healthcheck_id: checks[result.healthcheck_id].organization_id for result in results
        },
        start=min(moments),
        end=max(moments) + timedelta(microseconds=1),
    )
    if not covering:
        return set()
    return {
        index
        for index, result in enumerate(results)
        if any(occurrence.covers(result.checked_at) for occurrence in covering.get(result.healthcheck_id, ()))
    }


def _record_stand_in(
    region_id: int, regions: _RegionTable, result: RunResult, now: datetime | None
) -> list[Recheck]:
    """Record a protocol failure in place of a result whose recording failed; log, never raise, a bug."""
    logger.exception(
        "healthcheck %s: recording its run in %s failed; recorded as a protocol failure",
        result.healthcheck_id,
        regions.slugs.get(region_id, region_id),
    )
    total_ms = result.outcome.timings.total_ms
    stand_in = ProbeOutcome(
        status=Status.DOWN,
        kind=FailureKind.PROTOCOL,
        reason=UNRECORDABLE_REASON,
        timings=Timings(
            total_ms=total_ms if isinstance(total_ms, float | int) and math.isfinite(total_ms) else None
        ),
    )
    try:
        return _record(region_id, regions, [dataclasses.replace(result, outcome=stand_in)], now)
    except _DATABASE_UNAVAILABLE:
        raise
    except Exception:
        logger.exception(
            "healthcheck %s: even the stand-in result could not be recorded", result.healthcheck_id
        )
        return []


# --- Target text, made storable once (monitors.services.result_capping) ----------------------


def _storable_result(result: RunResult) -> RunResult:
    try:
        outcome = storable_outcome(result.outcome)
    except Exception:
        # Not even a ProbeOutcome's shape: its recording fails and is replaced by a stand-in.
        return result
    return result if outcome is result.outcome else dataclasses.replace(result, outcome=outcome)


@dataclass(slots=True)
class _LockedCheck:
    """A healthcheck as the recorder reads and changes it: plain values, not a model instance.

    Model instances (and their datetime fields, read back for nothing) cost a tenth of a batch
    (tests/bench/pipeline.py record). Fields in the order of RECORDER_FIELDS, which is derived
    from them; the fields from ``status`` to ``cause_since`` are written back by save() when the
    check is dirty. JSON columns come as their text, decoded only for a failing check: the rest
    of a batch never reads them.
    """

    id: int
    organization_id: int
    paused: bool
    interval_seconds: int
    recheck_count: int
    recheck_delay_seconds: int
    quorum: int | None
    degraded_threshold_ms: int | None
    # The config's timeout as stored (text on PostgreSQL, a number on SQLite), for the settle window.
    timeout: str | float | None
    status: str
    status_changed_at: datetime | None
    tool_digest: str
    tool_details_digest: str
    cause_kind: str
    cause_reason: str
    cause_regions: str
    cause_missing_tools: str
    cause_since: datetime | None
    # The check's SlotVerdict row (None when it has none yet), written apart from the check's.
    verdict_slot: datetime | None
    settle_at: datetime | None
    held_split: bool | None

    def recheck_policy(self) -> RecheckPolicy:
        return _recheck_policy(self.recheck_count, self.recheck_delay_seconds)

    def health_policy(self) -> HealthPolicy:
        return _health_policy(self.quorum, self.degraded_threshold_ms, stale_after(self))

    def settle_window(self) -> timedelta:
        return _settle_window(self.timeout, self.recheck_count, self.recheck_delay_seconds)

    def cause(self) -> Cause | None:
        """Return the stored cause, None while the check is not failing."""
        if self.status not in (Status.DOWN, Status.DEGRADED) or self.cause_since is None:
            return None
        return Cause(
            self.cause_kind,
            self.cause_reason,
            _json_object(self.cause_regions),
            tuple(_json_list(self.cause_missing_tools)),
        )

    def set_cause(self, cause: Cause | None, now: datetime) -> bool:
        """Store ``cause`` (None: not failing); return whether a stored field changed."""
        previous = self.cause()
        if cause is None:
            if not self.cause_kind and self.cause_since is None:
                return False
            self.cause_kind, self.cause_reason, self.cause_since = "", "", None
            self.cause_regions, self.cause_missing_tools = "{}", "[]"
            return True
        if previous is None or previous.signature != cause.signature:
            self.cause_since = now
        elif previous == cause:
            return False
        self.cause_kind, self.cause_reason = cause.kind, cause.reason
        self.cause_regions = json.dumps(dict(cause.failed_regions))
        self.cause_missing_tools = json.dumps(list(cause.missing_tools))
        return True

    def written(self) -> dict[str, Any]:
        """Return the healthcheck's fields save() writes, by attname, JSON columns decoded."""
        row = {"id": self.id, **{name: getattr(self, name) for name in WRITTEN_FIELDS}}
        row["cause_regions"] = _json_object(self.cause_regions)
        row["cause_missing_tools"] = _json_list(self.cause_missing_tools)
        return row

    def slot_row(self) -> dict[str, Any]:
        """Return the check's SlotVerdict row, by attname."""
        return {
            "healthcheck_id": self.id,
            "slot": self.verdict_slot,
            "settle_at": self.settle_at,
            "held_split": bool(self.held_split),
        }


def _json_object(text: str) -> dict[str, Any]:
    value = json.loads(text) if text else {}
    return value if isinstance(value, dict) else {}


def _json_list(text: str) -> list[Any]:
    value = json.loads(text) if text else []
    return value if isinstance(value, list) else []


# Most healthchecks share their rules' settings: one (frozen) policy per set of values, not one
# per result, saves validating the same values in __post_init__ 250 times a batch.
@functools.lru_cache(maxsize=1024)
def _recheck_policy(count: int, delay_seconds: int) -> RecheckPolicy:
    return RecheckPolicy(count=count, delay_seconds=delay_seconds)


@functools.lru_cache(maxsize=1024)
def _health_policy(quorum: int | None, degraded_threshold_ms: int | None, stale: timedelta) -> HealthPolicy:
    return HealthPolicy(quorum=quorum, degraded_threshold_ms=degraded_threshold_ms, stale_after=stale)


@functools.lru_cache(maxsize=1024)
def _settle_window(timeout: str | float | None, count: int, delay_seconds: int) -> timedelta:
    """Return the settle window for a stored timeout (the 10 s default when unreadable)."""
    try:
        seconds = float(timeout) if timeout is not None else 10.0
    except (TypeError, ValueError):
        seconds = 10.0
    if not 0 < seconds <= 3600:  # also NaN
        seconds = 10.0
    return settle_window(timeout_seconds=seconds, recheck=_recheck_policy(count, delay_seconds))


# What the recorder reads of a healthcheck. Loading only these keeps the config and the secret
# headers out of the locked read; the timeout is read out of the config by the database, and the
# slot fields come from the check's SlotVerdict row (a LEFT JOIN: a new check has none).
_FIELD_PATHS: dict[str, str | Expression] = {
    "timeout": KeyTextTransform("timeout", "config"),
    "cause_regions": Cast("cause_regions", models.TextField()),
    "cause_missing_tools": Cast("cause_missing_tools", models.TextField()),
    "verdict_slot": "slot_verdict__slot",
    "settle_at": "slot_verdict__settle_at",
    "held_split": "slot_verdict__held_split",
}
_LOCKED_FIELDS = [item.name for item in dataclasses.fields(_LockedCheck)]
RECORDER_FIELDS = [_FIELD_PATHS.get(name, name) for name in _LOCKED_FIELDS]
WRITTEN_FIELDS = _LOCKED_FIELDS[_LOCKED_FIELDS.index("status") : _LOCKED_FIELDS.index("cause_since") + 1]


def _lock_checks(ids: Sequence[int]) -> dict[int, _LockedCheck]:
    """Lock the healthchecks in id order, so that two regions' overlapping batches can't deadlock."""
    with _c_timestamp_loader():
        rows = list(
            # Only the healthcheck rows: PostgreSQL can't lock the nullable side of the join.
            Healthcheck.objects.select_for_update(of=("self",))
            .filter(id__in=ids)
            .order_by("id")
            .values_list(*RECORDER_FIELDS)
        )
    return {row[0]: _LockedCheck(*row) for row in rows}


@dataclass(slots=True)
class _State:
    """One region's state of one healthcheck: RegionState's fields, as plain values.

    The fields after the ids are STATE_FIELDS, in order (a values_list row fills them).
    """

    healthcheck_id: int
    region_id: int
    status: str = Status.PENDING.value
    since: datetime | None = None
    last_slot: datetime | None = None
    last_attempt: int = 0
    decided_slot: datetime | None = None
    last_result_at: datetime | None = None
    response_ms: float | None = None
    kind: str = ""
    reason: str = ""
    missing_tools: list[str] = dataclasses.field(default_factory=list)
    certificate: dict[str, Any] = dataclasses.field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        """Return the state as a RegionState row, by attname."""
        return {name: getattr(self, name) for name in STATE_ROW_FIELDS}

    def rule(self) -> RegionVote:
        """Return the state as the rules read it."""
        return RegionVote(
            status=Status(self.status),
            last_result_at=self.last_result_at,
            response_ms=self.response_ms,
            kind=self.kind or None,
            reason=self.reason,
            decided_slot=self.decided_slot,
        )


STATE_ROW_FIELDS = tuple(item.name for item in dataclasses.fields(_State))
STATE_FIELDS = list(STATE_ROW_FIELDS[2:])


class _StateBook:
    """Hold the region states and healthchecks one batch touches, and write them back at once."""

    def __init__(self, region_id: int | None, now: datetime) -> None:
        # None: no region's results are applied (the settle pass); every state is a peer's.
        self.region_id = region_id
        self.now = now
        # This region's states by healthcheck id, written back by save(); the other regions'
        # states are only read, so the rules' view of them is built once, at load.
        self.states: dict[int, _State] = {}
        self.peers: dict[tuple[int, int], _State] = {}
        self.peer_rules: dict[tuple[int, int], RegionVote] = {}
        self.regions = _RegionTable({}, {}, frozenset())
        self.configured: dict[int, list[int]] = defaultdict(list)
        self.dirty_states: dict[int, _State] = {}
        self.dirty_checks: dict[int, _LockedCheck] = {}
        self.dirty_slots: dict[int, _LockedCheck] = {}
        self.new_tool_lists: dict[tuple[int, str], ToolList] = {}
        # Tool list versions made current, and those replaced, by (healthcheck id, digest).
        self.current_versions: dict[tuple[int, str], dict[str, Any]] = {}
        self.replaced_versions: set[tuple[int, str]] = set()
        self.status_changes: list[StatusChange] = []
        # The changes into or out of down, with where their deciding results lie (effective_at).
        self.down_bounds: list[tuple[StatusChange, BoundWindow]] = []
        self.cause_changes: list[CauseChange] = []
        self.tool_changes: list[ToolChange] = []
        self.certificate_changes: list[CertificateChange] = []

    @classmethod
    def load(
        cls,
        checks: Mapping[int, _LockedCheck],
        region_id: int | None,
        now: datetime,
        *,
        regions: _RegionTable,
    ) -> _StateBook:
        book = cls(region_id, now)
        ids = list(checks)
        book.regions = regions
        for hc_id, configured_id in Healthcheck.regions.through.objects.filter(
            healthcheck_id__in=ids
        ).values_list("healthcheck_id", "region_id"):
            book.configured[hc_id].append(configured_id)
        # Every region's states in one query, as tuples: model instances cost most of a batch.
        with _c_timestamp_loader():
            rows = list(
                RegionState.objects.filter(healthcheck_id__in=ids).values_list(
                    "healthcheck_id", "region_id", *STATE_FIELDS
                )
            )
        for row in rows:
            state = _State(*row)
            if state.region_id == region_id:
                book.states[state.healthcheck_id] = state
            else:
                key = (state.healthcheck_id, state.region_id)
                book.peers[key] = state
                book.peer_rules[key] = state.rule()
        return book

    def apply(self, check: _LockedCheck, result: RunResult) -> Recheck | None:
        """Apply one result; return the recheck it asks for, if any."""
        state = self._state_for(check.id)
        if state.last_slot is not None and (result.slot, result.attempt) <= (
            state.last_slot,
            state.last_attempt,
        ):
            return None  # already applied: a redelivered batch, or a result overtaken by a newer one
        outcome = result.outcome
        policy = check.recheck_policy()
        verdict = region_verdict(
            previous=Status(state.status), outcome=outcome.status, attempt=result.attempt, policy=policy
        )
        state.last_slot, state.last_attempt = result.slot, result.attempt
        state.last_result_at = result.checked_at
        if verdict.status is not None:
            if verdict.status != state.status:
                state.since = self.now
            state.status = verdict.status.value
            state.decided_slot = result.slot
            # Only a decided run's time is the region's response time: a failed run awaiting its
            # recheck (a 10 s timeout) would otherwise make a region that still counts as up "slow".
            state.response_ms = outcome.timings.total_ms
            state.kind = outcome.kind.value if outcome.kind else ""
            state.reason = outcome.reason
            state.missing_tools = list(outcome.missing_tools)
        self.dirty_states[check.id] = state
        self._follow_tools(check, outcome)
        self._follow_certificate(check, state, outcome)
        self.decide(check)
        if verdict.recheck:
            return Recheck(check.id, result.slot, result.attempt + 1, float(policy.delay_seconds))
        return None

    def save(self) -> None:
        # New and changed states go in one upsert. bulk_update would build a CASE WHEN per row
        # and field: ~5 ms of Python per 10 rows, the recorder's whole budget (tests/bench/pipeline.py).
        # The healthcheck rows are locked, so no other recorder writes these states meanwhile.
        insert_rows(
            RegionState,
            [state.row() for state in self.dirty_states.values()],
            unique_fields=["healthcheck", "region"],
            update_fields=STATE_FIELDS,
        )
        update_rows(Healthcheck, [check.written() for check in self.dirty_checks.values()])
        insert_rows(
            SlotVerdict,
            [check.slot_row() for check in self.dirty_slots.values()],
            unique_fields=["healthcheck"],
            update_fields=["slot", "settle_at", "held_split"],
        )
        # A digest seen before (a tool list that flapped back) keeps its first row.
        ToolList.objects.bulk_create(self.new_tool_lists.values(), batch_size=1000, ignore_conflicts=True)
        self._save_versions()
        # This group's results are inserted already: one query finds where each downtime began or ended.
        bounds = downtime_bounds([window for _, window in self.down_bounds])
        for (change, _), bound in zip(self.down_bounds, bounds, strict=True):
            change.effective_at = bound
        StatusChange.objects.bulk_create(self.status_changes, batch_size=1000)
        CauseChange.objects.bulk_create(self.cause_changes, batch_size=1000)
        ToolChange.objects.bulk_create(self.tool_changes, batch_size=1000)
        CertificateChange.objects.bulk_create(self.certificate_changes, batch_size=1000)

    def _state_for(self, hc_id: int) -> _State:
        state = self.states.get(hc_id)
        if state is None:
            state = self.states[hc_id] = _State(hc_id, self._applying_region())
        return state

    def _applying_region(self) -> int:
        if self.region_id is None:
            raise ValueError("the settle pass applies no result")
        return self.region_id

    def _state_at(self, hc_id: int, region_id: int) -> _State | None:
        if region_id == self.region_id:
            return self.states.get(hc_id)
        return self.peers.get((hc_id, region_id))

    def _rule_state_at(self, hc_id: int, region_id: int) -> RegionVote:
        if region_id == self.region_id:
            # Built anew each time: this region's state changes with every result applied.
            state = self.states.get(hc_id)
            return state.rule() if state is not None else _NO_RESULT
        return self.peer_rules.get((hc_id, region_id), _NO_RESULT)

    def decide(self, check: _LockedCheck) -> None:
        """Decide the check's status once per slot (rules.slot_due), its cause, and the outbox rows."""
        if check.paused:
            return  # pause and resume set the status themselves
        configured = self.configured[check.id]
        votes = {
            self.regions.slugs[region_id]: self._rule_state_at(check.id, region_id)
            for region_id in configured
        }
        policy = check.health_policy()
        expected = {
            slug: vote for slug, vote in votes.items() if self.regions.ids[slug] in self.regions.enabled
        }
        call = slot_due(
            regions=expected,
            decided=check.verdict_slot,
            policy=policy,
            settle=check.settle_window(),
            now=self.now,
        )
        if call.settle_at != check.settle_at:
            check.settle_at = call.settle_at
            self.dirty_slots[check.id] = check
        if call.slot is None:
            return
        check.verdict_slot = call.slot
        self.dirty_slots[check.id] = check
        verdict = overall_verdict(
            regions=votes, policy=policy, paused=False, now=self.now, silent=call.silent
        )
        # Written with the slot (dirty_slots above): the next slot must know this one was held.
        check.held_split = holds_split(
            verdict=verdict, current=Status(check.status), held_last=bool(check.held_split)
        )
        if check.held_split:
            return
        missing = sorted(
            {
                tool
                for region_id in configured
                if (state := self._state_at(check.id, region_id))
                and state.status == Status.DOWN
                and self.regions.slugs[region_id] in verdict.failed_regions
                for tool in state.missing_tools
            }
        )
        reasons = {
            slug: state.reason
            for slug in failing_regions(verdict)
            if (state := self._state_at(check.id, self.regions.ids[slug])) is not None
        }
        cause = cause_of(verdict, missing, reasons)
        previous = check.cause()
        change: StatusChange | None = None
        if verdict.status != check.status:
            change = StatusChange(
                healthcheck_id=check.id,
                at=self.now,
                from_status=check.status,
                to_status=verdict.status,
                reason=verdict.reason,
                failed_regions=verdict.failed_regions,
                missing_tools=missing,
                cause_kind=cause.kind if cause else "",
                cause_reason=cause.reason if cause else "",
                failed_reasons=reasons if cause else {},
            )
            self.status_changes.append(change)
            if Status.DOWN in (verdict.status, check.status):
                window = bound_window(
                    check,
                    healthcheck_id=check.id,
                    into=verdict.status == Status.DOWN,
                    at=self.now,
                    since=check.status_changed_at,
                )
                self.down_bounds.append((change, window))
            check.status = verdict.status
            check.status_changed_at = self.now
            self.dirty_checks[check.id] = check
        elif previous is not None and cause is not None and cause_changed(previous, cause):
            self.cause_changes.append(
                CauseChange(
                    healthcheck_id=check.id,
                    at=self.now,
                    status=check.status,
                    from_kind=previous.kind,
                    to_kind=cause.kind,
                    reason=cause.reason,
                    failed_regions=cause.failed_regions,
                    failed_reasons=reasons,
                    missing_tools=list(cause.missing_tools),
                    previous_reason=previous.reason,
                )
            )
        if check.set_cause(cause, self.now):
            self.dirty_checks[check.id] = check
        if change is not None and cause is not None:
            # The change tells its readers (alerts) when its cause began, as the API will say.
            change.cause_since = check.cause_since

    def _save_versions(self) -> None:
        """Write the tool list versions made current and mark the replaced ones: nothing when no list changed."""
        # A list that comes back keeps its row, tools and first_seen_at: it is current again.
        insert_rows(
            ToolListVersion,
            list(self.current_versions.values()),
            unique_fields=["healthcheck", "digest"],
            update_fields=["current_since", "replaced_at"],
        )
        if self.replaced_versions:
            which = functools.reduce(
                operator.or_,
                (
                    models.Q(healthcheck_id=hc_id, digest=digest)
                    for hc_id, digest in sorted(self.replaced_versions)
                ),
            )
            ToolListVersion.objects.filter(which, replaced_at__isnull=True).update(replaced_at=self.now)
            _trim_versions(sorted({hc_id for hc_id, _ in self.replaced_versions}))

    def _follow_tool_versions(self, check: _LockedCheck, outcome: ProbeOutcome) -> None:
        """Make the outcome's tool list, details included, the check's current version when it differs."""
        digest = outcome.tool_details_digest
        if not digest or digest == check.tool_details_digest or (not outcome.tools and outcome.tool_count):
            return
        if check.tool_details_digest:
            self.replaced_versions.add((check.id, check.tool_details_digest))
        # A list that flapped back within the group is current, not replaced.
        self.replaced_versions.discard((check.id, digest))
        self.current_versions[(check.id, digest)] = {
            "healthcheck_id": check.id,
            "digest": digest,
            "tools": [_version_tool(tool) for tool in outcome.tools],
            "tool_count": len(outcome.tools),
            "first_seen_at": self.now,
            "current_since": self.now,
            "replaced_at": None,
        }
        check.tool_details_digest = digest
        self.dirty_checks[check.id] = check

    def _follow_certificate(self, check: _LockedCheck, state: _State, outcome: ProbeOutcome) -> None:
        """Keep the region's last TLS certificate, and record a change when another replaces it.

        The previous one is the region state's (read with the batch's states): no query per result.
        A run without a certificate (a refused connection) leaves the last one as it was.
        """
        seen = _certificate_seen(outcome)
        if seen is None or seen["sha256"] == state.certificate.get("sha256"):
            return
        previous = state.certificate
        if previous.get("sha256"):
            self.certificate_changes.append(
                CertificateChange(
                    healthcheck_id=check.id,
                    at=self.now,
                    region_id=self._applying_region(),
                    previous_serial=str(previous.get("serial", "")),
                    serial=seen["serial"],
                    previous_sha256=str(previous.get("sha256", "")),
                    sha256=seen["sha256"],
                    previous_issuer=str(previous.get("issuer", "")),
                    issuer=seen["issuer"],
                    previous_not_after=_instant(previous.get("not_after")),
                    not_after=_instant(seen["not_after"]),
                )
            )
        state.certificate = seen

    def _follow_tools(self, check: _LockedCheck, outcome: ProbeOutcome) -> None:
        """Store a new tool list once per digest, and an event when a tool went away or got stricter."""
        self._follow_tool_versions(check, outcome)
        digest = outcome.tool_digest
        if not digest or digest == check.tool_digest or (not outcome.tools and outcome.tool_count):
            return
        tools = [{"name": tool.name, "required_inputs": list(tool.required_inputs)} for tool in outcome.tools]
        # Written by save() in one insert; a digest already stored keeps its row.
        self.new_tool_lists.setdefault(
            (check.id, digest),
            ToolList(healthcheck_id=check.id, digest=digest, tools=tools, first_seen_at=self.now),
        )
        if check.tool_digest:
            previous = self.new_tool_lists.get((check.id, check.tool_digest))
            if previous is None:
                previous = ToolList.objects.filter(healthcheck_id=check.id, digest=check.tool_digest).first()
            if previous is not None:
                diff = tool_diff(_tool_infos(previous.tools), outcome.tools)
                if diff.matters:
                    # The first names of each list and their counts: a target that rotates
                    # thousands of names per run must not store (or page out) them all each time.
                    stricter = list(diff.new_required_inputs.items())
                    self.tool_changes.append(
                        ToolChange(
                            healthcheck_id=check.id,
                            at=self.now,
                            region_id=self._applying_region(),
                            previous_digest=check.tool_digest,
                            digest=digest,
                            removed=list(diff.removed[:MAX_CHANGE_NAMES]),
                            removed_count=len(diff.removed),
                            added=list(diff.added[:MAX_CHANGE_NAMES]),
                            added_count=len(diff.added),
                            new_required_inputs={
                                name: list(inputs[:MAX_CHANGE_INPUTS])
                                for name, inputs in stricter[:MAX_CHANGE_NAMES]
                            },
                            new_required_inputs_count=len(stricter),
                        )
                    )
        check.tool_digest = digest
        self.dirty_checks[check.id] = check


def _certificate_seen(outcome: ProbeOutcome) -> dict[str, str] | None:
    """Return what a region keeps of the outcome's ``details["certificate"]``, or None without one."""
    seen = outcome.details.get("certificate") if isinstance(outcome.details, dict) else None
    if not isinstance(seen, dict) or not isinstance(seen.get("sha256"), str) or not seen["sha256"]:
        return None
    # Already cleaned and cut by probes.certificates; cut again to the columns, whatever wrote it.
    return {
        "serial": str(seen.get("serial") or "")[:128],
        "sha256": seen["sha256"][:128],
        "issuer": str(seen.get("issuer") or "")[:500],
        "not_after": str(seen.get("not_after") or "")[:40],
    }


def _instant(text: object) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@contextlib.contextmanager
def _c_timestamp_loader() -> Iterator[None]:
    """Read timestamptz columns with psycopg's C loader in the queries run inside.

    Django registers a pure-Python loader, 4 µs a value: the region states of a batch of 250
    hold 2,250 of them, over a quarter of the recorder's CPU (tests/bench/pipeline.py record). psycopg's
    own loader returns the same aware datetimes whenever the session's time zone is UTC, as
    Django sets it with USE_TZ; otherwise Django's loader stays.
    """
    if connection.vendor != "postgresql" or connection.timezone is not UTC:
        yield
        return
    with connection.execute_wrapper(_register_c_timestamp_loader):
        yield


def _register_c_timestamp_loader(
    execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Mapping[str, Any]
) -> Any:
    from psycopg.types.datetime import TimestamptzLoader  # psycopg substitutes its C version

    context["cursor"].cursor.adapters.register_loader("timestamptz", TimestamptzLoader)
    return execute(sql, params, many, context)


def stale_after(healthcheck: Healthcheck | _LockedCheck) -> timedelta:
    """Return how long a region may stay silent before it stops voting: three missed slots and rechecks."""
    slack = healthcheck.recheck_count * healthcheck.recheck_delay_seconds + 60
    return timedelta(seconds=3 * healthcheck.interval_seconds + slack)


# A region without a state row: pending, as the rules read it.
_NO_RESULT = RegionVote(status=Status.PENDING, last_result_at=None)


def _trim_versions(healthcheck_ids: Sequence[int]) -> None:
    """Delete each check's replaced versions past the newest MAX_REPLACED_VERSIONS.

    A server that rewords its tools on every run (a timestamp in a description) would otherwise
    store up to a whole capped list per result until the retention prunes it. Run only when a
    list was replaced: a query per such check.
    """
    for hc_id in healthcheck_ids:
        stale = list(
            ToolListVersion.objects.filter(healthcheck_id=hc_id, replaced_at__isnull=False)
            .order_by("-replaced_at", "-id")
            .values_list("id", flat=True)[MAX_REPLACED_VERSIONS:]
        )
        if stale:
            ToolListVersion.objects.filter(id__in=stale).delete()


def _version_tool(tool: ToolInfo) -> dict[str, Any]:
    """Return a tool as a ToolListVersion keeps it (monitors.selectors reads it back)."""
    return {
        "name": tool.name,
        "required_inputs": list(tool.required_inputs),
        "description": tool.description,
        "input_schema": tool.input_schema,
        "read_only_hint": tool.read_only_hint,
        "destructive_hint": tool.destructive_hint,
        "description_kept": tool.description_kept,
        "schema_kept": tool.schema_kept,
    }


def _tool_infos(tools: Sequence[Mapping[str, Any]]) -> list[ToolInfo]:
    return [
        ToolInfo(name=tool["name"], required_inputs=tuple(tool.get("required_inputs", ()))) for tool in tools
    ]


def result_unsaved(outcome: ProbeOutcome, *, checked_at: datetime) -> ProbeResult:
    """Return a one-off run's outcome as a result that is never saved, so its answer has a stored result's shape."""
    run = RunResult(
        healthcheck_id=0, slot=checked_at, attempt=0, outcome=storable_outcome(outcome), checked_at=checked_at
    )
    return ProbeResult(**_result_row(run, region_id=0, now=checked_at))


def _result_row(
    result: RunResult, region_id: int, now: datetime, in_maintenance: bool = False
) -> dict[str, Any]:
    """Return the ProbeResult row of a result, by attname: a dict, as rows only travel to the database."""
    outcome = result.outcome
    timings = outcome.timings
    server = outcome.server
    return {
        "healthcheck_id": result.healthcheck_id,
        "region_id": region_id,
        "slot": result.slot,
        "attempt": result.attempt,
        "checked_at": result.checked_at,
        "recorded_at": now,
        "status": outcome.status.value,
        "kind": outcome.kind.value if outcome.kind else "",
        "reason": outcome.reason,
        "http_status": outcome.http_status,
        # Made storable and cut to the columns by storable_outcome().
        "server_name": server.name if server else "",
        "server_version": server.version if server else "",
        "protocol": outcome.protocol or "",
        "access": outcome.access.value if outcome.access else "",
        "signin_server": outcome.signin_server or "",
        "signin_discovery": outcome.signin_discovery.value if outcome.signin_discovery else "",
        "transport": outcome.transport.value if outcome.transport else "",
        "tool_count": outcome.tool_count,
        "tool_digest": outcome.tool_digest or "",
        "missing_tools": list(outcome.missing_tools),
        "dns_ms": timings.dns_ms,
        "tcp_ms": timings.tcp_ms,
        "tls_ms": timings.tls_ms,
        "ttfb_ms": timings.ttfb_ms,
        "total_ms": timings.total_ms,
        "in_maintenance": in_maintenance,
        "details": storable_details(outcome.details),
    }
