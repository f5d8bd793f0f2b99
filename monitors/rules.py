"""Decide a healthcheck's status from its check runs, spot tool-list changes, sum up history.

Pure: plain values in, plain values out, ``now`` passed in. The worker's recording service
(``monitors.services``) calls these inside its transaction, and tests drive them with tables.

Rechecks, per region (:func:`region_verdict`)
    A DOWN run in a region that was not already down is run again ``RecheckPolicy.count``
    times, ``delay_seconds`` apart, before the region counts as down; the region keeps its
    old status meanwhile. Any UP run makes the region UP at once: recovery is not rechecked,
    because a real success cannot be a fluke the way a lost packet can. A region already
    DOWN stays DOWN without rechecks. ``count == 0`` makes the first failure count. A DEGRADED
    run (the target answered, with a warning: a certificate that expires soon) counts as UP
    for its region, which keeps the run's kind and reason as its warning.

The overall verdict (:func:`overall_verdict`), in this order
    1. Paused -> PAUSED.
    2. No region has a result yet (every region PENDING, or no region at all) -> PENDING,
       "No result yet". A region has a result when its status is not PENDING and it has a
       ``last_result_at``; a region lacking either is treated as PENDING.
    3. A region whose last result is older than ``now - stale_after`` does not vote: its
       state is ignored (its worker is gone, so its last word is no evidence either way).
       The exact boundary still votes. If every region with a result is stale -> PENDING,
       "No region has reported for N minutes": the status cannot be known, and PENDING
       (not the last status) makes the silence visible instead of pretending.
    4. Effective quorum = min(``policy.quorum`` or :func:`default_quorum` of the configured
       region count, number of voting regions), at least 1. The configured count is
       ``len(regions)``, so pass every region the check runs in, pending ones included.
    5. DOWN when the DOWN voting regions reach the effective quorum.
    6. DEGRADED when some voting regions are DOWN but fewer than the quorum, or when
       ``degraded_threshold_ms`` is set and the UP voting regions whose ``response_ms`` is
       strictly above it reach the effective quorum. A region without ``response_ms`` is not
       slow; or when the UP voting regions that warn (a kind kept from a DEGRADED run) reach
       the effective quorum.
    7. UP otherwise.
    ``failed_regions`` holds every DOWN voting region (also when the verdict is only
    DEGRADED), kind ``""`` when unknown; ``slow_regions`` every slow voting region whenever a
    threshold is set; ``warned_regions`` every warning voting region, with its kind. All of
    them, and every list in ``reason``, are sorted by slug. A reason names
    the regions that did not vote ("; not reporting: ap-south"), since a verdict from fewer
    regions than configured should say so.

One verdict per slot (:func:`slot_due`)
    The overall verdict is taken once per slot, when every expected region has decided it (a
    region awaiting a recheck has not), or when the slot's settle window (:func:`settle_window`)
    closes with a region still silent: then the silent regions do not vote and are named. So
    the regions' results of one slot never pass through an intermediate status, and a new
    check waits for its first quorum instead of taking one region's word. A slot whose regions
    split across an outage's start or end (:func:`holds_split`) is held for the next one.

The cause (:func:`cause_of`)
    A DOWN or DEGRADED verdict has a cause: the kind most failing regions share, the sentence,
    the failing regions and the missing tools. It changes (:func:`cause_changed`) when the
    kinds or the missing tools do, not when another region fails the same way. A check
    degraded by warnings alone (no region down) takes its cause from the warning regions.

Tool lists (:func:`tool_diff`)
    Tools are matched by name. Removed and added names, and for tools present in both lists
    the required inputs that are new. Only a removal or a new required input ``matters``
    (breaks an assistant that used the tool); additions alone do not. Compare successful
    listings only: a failed run lists no tools, and that is an outage, not a removal.

Rollups (:func:`rollup_figures`)
    Failures are DOWN runs; DEGRADED runs count as up for uptime and are also counted
    apart. Response time is taken over the runs that reached the server and were answered
    (UP and DEGRADED, :func:`answered`): a DOWN run is a failure, not a speed, so a refused
    connection's tenth of a millisecond never makes an outage read fast (nor a timeout's
    ceiling a slow answer). Percentiles use the nearest-rank method, so p50 and p95 are always
    times that were actually measured, and they equal PostgreSQL's ``percentile_disc`` should a
    query ever compute them in the database.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from probes.types import Status, ToolInfo

REGION_STATUSES = frozenset({Status.PENDING, Status.UP, Status.DOWN})
SAMPLE_STATUSES = frozenset({Status.UP, Status.DEGRADED, Status.DOWN})


# --- Rechecks: one region ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecheckPolicy:
    """Say how many times, and how far apart, a failure is rechecked before a region is down."""

    count: int = 2
    delay_seconds: float = 5.0

    def __post_init__(self) -> None:
        if self.count < 0:
            raise ValueError(f"recheck count must be 0 or more, not {self.count}")
        if self.delay_seconds < 0:
            raise ValueError(f"recheck delay must be 0 or more seconds, not {self.delay_seconds}")


@dataclass(frozen=True, slots=True)
class RegionVerdict:
    """Answer one run in one region: the region's new status (None: undecided) and whether to recheck."""

    status: Status | None
    recheck: bool


def region_verdict(
    *, previous: Status, outcome: Status, attempt: int, policy: RecheckPolicy
) -> RegionVerdict:
    """Return what one run (``attempt`` 0 scheduled, 1.. rechecks) means for its region.

    ``previous`` is the region's status before this run; while rechecks are pending it stays
    what it was, so every attempt of one episode sees the same ``previous``.
    """
    if attempt < 0:
        raise ValueError(f"attempt must be 0 or more, not {attempt}")
    if outcome in (Status.UP, Status.DEGRADED):
        return RegionVerdict(Status.UP, recheck=False)
    if outcome != Status.DOWN:
        raise ValueError(f"a check run is up, degraded or down, not {outcome!r}")
    # Already down: a recheck could only confirm it, at the cost of more requests to a failing host.
    if previous == Status.DOWN or attempt >= policy.count:
        return RegionVerdict(Status.DOWN, recheck=False)
    return RegionVerdict(None, recheck=True)


# --- The overall verdict ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RegionVote:
    """Hold what the rules need of one region's latest decided state."""

    status: Status
    last_result_at: datetime | None
    response_ms: float | None = None
    kind: str | None = None
    reason: str = ""
    # The slot of the region's latest decided run (a success, or a failure after its rechecks);
    # None before the first. A run awaiting a recheck has not decided its slot yet.
    decided_slot: datetime | None = None

    def __post_init__(self) -> None:
        # Regions are only ever pending, up or down; degraded is a whole-check verdict. A
        # wrong value here is a caller bug, better loud than silently outvoted.
        if self.status not in REGION_STATUSES:
            raise ValueError(f"a region is pending, up or down, not {self.status!r}")

    @property
    def has_result(self) -> bool:
        return self.status != Status.PENDING and self.last_result_at is not None


@dataclass(frozen=True, slots=True)
class HealthPolicy:
    """Hold a healthcheck's settings for turning region states into one verdict."""

    quorum: int | None = None
    degraded_threshold_ms: int | None = None
    stale_after: timedelta = timedelta(minutes=5)

    def __post_init__(self) -> None:
        if self.quorum is not None and self.quorum < 1:
            raise ValueError(f"quorum must be at least 1, not {self.quorum}")
        if self.degraded_threshold_ms is not None and self.degraded_threshold_ms < 0:
            raise ValueError(f"degraded threshold must be 0 ms or more, not {self.degraded_threshold_ms}")
        if self.stale_after <= timedelta(0):
            raise ValueError(f"stale_after must be positive, not {self.stale_after}")


@dataclass(frozen=True, slots=True)
class Verdict:
    """Give a healthcheck's status, the regions behind it, and a sentence for humans."""

    status: Status
    failed_regions: dict[str, str]
    slow_regions: tuple[str, ...]
    reason: str
    # Sorted slugs of regions with a result but none recently; they did not vote.
    stale_regions: tuple[str, ...] = ()
    # The quorum actually applied; None when no vote took place (paused, pending).
    quorum: int | None = None
    # Sorted slugs of regions that had not reported the slot when its settle window closed;
    # they did not vote either (see slot_due).
    silent_regions: tuple[str, ...] = ()
    # Voting UP regions whose run warned (region slug -> its kind): a DEGRADED run's region.
    warned_regions: dict[str, str] = field(default_factory=dict)


def default_quorum(region_count: int) -> int:
    """Return the regions that must be down by default: more than half, at least 1."""
    if region_count < 0:
        raise ValueError(f"region count must be 0 or more, not {region_count}")
    return region_count // 2 + 1


def overall_verdict(
    *,
    regions: Mapping[str, RegionVote],
    policy: HealthPolicy,
    paused: bool,
    now: datetime,
    silent: Collection[str] = (),
) -> Verdict:
    """Return the healthcheck's status from its regions' states; the rules are in the module docstring.

    ``silent`` names regions that did not report the slot being decided in time (from
    :func:`slot_due`): they do not vote, and the reason names them.
    """
    if paused:
        return Verdict(Status.PAUSED, {}, (), "Paused")
    reported = {slug: state for slug, state in sorted(regions.items()) if state.has_result}
    quiet = tuple(sorted(slug for slug in silent if slug in regions))
    if not reported:
        return Verdict(Status.PENDING, {}, (), "No result yet", silent_regions=quiet)

    cutoff = now - policy.stale_after
    voting = {slug: state for slug, state in reported.items() if _at(state) >= cutoff and slug not in quiet}
    stale = tuple(slug for slug in reported if _at(reported[slug]) < cutoff)
    if not voting:
        silence = now - max(_at(state) for state in reported.values())
        return Verdict(
            Status.PENDING,
            {},
            (),
            f"No region has reported for {_duration(silence)}",
            stale_regions=stale,
            silent_regions=quiet,
        )

    # Lost regions shrink the quorum instead of blocking it: a lost alert is as bad as a
    # false alarm, and with 2 of 3 workers gone the last one's DOWN must still page. Flukes
    # are already filtered per region by rechecks, so one voter is trustworthy enough.
    quorum = max(1, min(policy.quorum or default_quorum(len(regions)), len(voting)))
    down = {slug: state.kind or "" for slug, state in voting.items() if state.status == Status.DOWN}
    threshold = policy.degraded_threshold_ms
    slow = (
        ()
        if threshold is None
        else tuple(
            slug
            for slug, state in voting.items()
            if state.status == Status.UP and state.response_ms is not None and state.response_ms > threshold
        )
    )
    warned = {slug: state.kind for slug, state in voting.items() if state.status == Status.UP and state.kind}
    absent = sorted({*stale, *quiet})
    tail = f"; not reporting: {', '.join(absent)}" if absent else ""

    if len(down) >= quorum:
        status, reason = Status.DOWN, f"Down in {_failures(down)}"
    else:
        parts = []
        if down:
            parts.append(f"down in {len(down)} of {_regions(len(voting))}: {_failures(down)}")
        if len(slow) >= quorum:
            parts.append(f"slow in {len(slow)} of {_regions(len(voting))} (over {threshold} ms)")
        if len(warned) >= quorum:
            parts.append(f"warning in {len(warned)} of {_regions(len(voting))}: {_failures(warned)}")
        status = Status.DEGRADED if parts else Status.UP
        # Not str.capitalize(), which would lowercase the rest of the sentence.
        reason = _sentence("; ".join(parts)) if parts else f"Up in {_regions(len(voting))}"
    return Verdict(
        status,
        down,
        slow,
        reason + tail,
        stale_regions=stale,
        quorum=quorum,
        silent_regions=quiet,
        warned_regions=warned,
    )


# --- One verdict per slot ----------------------------------------------------------------------


# Beyond the runs themselves: queueing, the recording group's flush, a clock that differs a little
# between workers. A region later than this is silent for the slot, not slow.
SETTLE_SLACK = timedelta(seconds=10)


def settle_window(*, timeout_seconds: float, recheck: RecheckPolicy) -> timedelta:
    """Return how long after a slot its verdict waits for a silent region: every attempt, and slack."""
    if timeout_seconds <= 0:
        raise ValueError(f"timeout must be positive, not {timeout_seconds}")
    attempts = recheck.count + 1
    return (
        timedelta(seconds=attempts * timeout_seconds + recheck.count * recheck.delay_seconds) + SETTLE_SLACK
    )


@dataclass(frozen=True, slots=True)
class SlotCall:
    """Say which slot to decide now, which regions missed it, and when to look again."""

    # The slot to decide now; None: keep waiting.
    slot: datetime | None
    # Expected regions that had not decided ``slot`` when it was decided (its window had closed).
    silent: tuple[str, ...] = ()
    # When a reported slot will be undecided for a whole settle window; None: nothing waits.
    settle_at: datetime | None = None


def slot_due(
    *,
    regions: Mapping[str, RegionVote],
    decided: datetime | None,
    policy: HealthPolicy,
    settle: timedelta,
    now: datetime,
) -> SlotCall:
    """Return the slot whose verdict is due, so that a healthcheck gets one verdict per slot.

    ``regions`` are the enabled regions the check runs in, ``decided`` the latest slot already
    decided. A region is *expected* unless it is stale (it has a result, but none for
    ``policy.stale_after``): one that has not reported yet, a new check's too, is waiting, not
    absent. The verdict of slot S is due

    - as soon as every expected region has decided S or a later slot: the latest such S, with
      every region voting (regions' states already are their latest decided runs); or
    - once S's settle window has passed, if some region has decided S but not all expected ones
      have: the latest such S, and the expected regions that had not decided it are *silent*
      for it (they do not vote; the reason names them).

    Whichever of the two gives the later slot wins. Slots at or before ``decided`` are never
    decided again, and a decision never waits for a slot no region has reported.
    """
    reported = sorted(
        {
            vote.decided_slot
            for vote in regions.values()
            if vote.decided_slot is not None and (decided is None or vote.decided_slot > decided)
        }
    )
    if not reported:
        return SlotCall(None)
    cutoff = now - policy.stale_after
    expected = [
        slug
        for slug, vote in sorted(regions.items())
        if not (vote.has_result and vote.last_result_at is not None and vote.last_result_at < cutoff)
    ]
    slots = [regions[slug].decided_slot for slug in expected]
    complete = None
    if slots and all(slot is not None for slot in slots):
        floor = min(slot for slot in slots if slot is not None)
        complete = floor if decided is None or floor > decided else None
    overdue = [slot for slot in reported if slot + settle <= now]
    forced = overdue[-1] if overdue else None
    candidates = [slot for slot in (complete, forced) if slot is not None]
    if not candidates:
        return SlotCall(None, settle_at=reported[0] + settle)
    slot = max(candidates)
    silent = tuple(slug for slug in expected if (at := regions[slug].decided_slot) is None or at < slot)
    later = [at for at in reported if at > slot]
    return SlotCall(slot, silent, settle_at=later[0] + settle if later else None)


def holds_split(*, verdict: Verdict, current: Status, held_last: bool) -> bool:
    """Return whether a slot's verdict waits for the next slot, because its regions split at a boundary.

    A server that stops or comes back while a slot runs is checked by some regions before and by
    others after: the slot says DEGRADED (some regions DOWN, others UP) between UP and DOWN
    although no region was ever partly out. So a DEGRADED verdict with failing regions that
    would change an UP or DOWN check is held once: the slot counts as decided, the status stays,
    and the next slot, which every region checks on the same side, decides. A partial outage
    that lasts is told one interval later; at most one slot in a row is ever held.
    """
    return (
        not held_last
        and verdict.status is Status.DEGRADED
        and bool(verdict.failed_regions)
        and current in (Status.UP, Status.DOWN)
    )


# --- The cause of a failing verdict -------------------------------------------------------------


SLOW = "slow"


@dataclass(frozen=True, slots=True)
class Cause:
    """Say why a check is down or degraded: the main kind, the sentence, regions, missing tools."""

    kind: str
    reason: str
    failed_regions: dict[str, str]
    missing_tools: tuple[str, ...]

    @property
    def signature(self) -> tuple[frozenset[str], tuple[str, ...]]:
        """Return what makes two causes different: the kinds of failure and the missing tools.

        Which regions fail is left out: a region joining or leaving the failure of the same
        kind is the same cause (and a status change when it crosses the quorum).
        """
        kinds = frozenset(self.failed_regions.values()) or frozenset({self.kind})
        return kinds, self.missing_tools


def cause_of(
    verdict: Verdict, missing_tools: Iterable[str], reasons: Mapping[str, str] | None = None
) -> Cause | None:
    """Return the cause of a DOWN or DEGRADED verdict, None for any other.

    The kind is the one most failing regions share (ties: the first by name), ``slow`` for a
    check degraded by its response time alone, ``""`` when no region gave a kind. The reason is
    the sentence of the first region (by name) failing with that kind, from ``reasons`` (region
    slug -> its failure's sentence: "Required tools missing: search_docs"); the verdict's own
    sentence (which regions, how many) when no such region gave one.
    """
    if verdict.status not in (Status.DOWN, Status.DEGRADED):
        return None
    failing = failing_regions(verdict)
    kind = main_kind(failing, slow=bool(verdict.slow_regions))
    given = reasons or {}
    sentences = [
        given[slug] for slug, failed in sorted(failing.items()) if failed == kind and given.get(slug)
    ]
    reason = sentences[0] if sentences else verdict.reason
    return Cause(kind, reason, dict(failing), tuple(sorted(set(missing_tools))))


def failing_regions(verdict: Verdict) -> dict[str, str]:
    """Return the regions a failing verdict blames (slug -> kind): the down ones, else the warning ones."""
    return dict(verdict.failed_regions) if verdict.failed_regions else dict(verdict.warned_regions)


def main_kind(failed_regions: Mapping[str, str], *, slow: bool) -> str:
    """Return the kind most failing regions share (ties: the first by name); ``slow`` or ``""`` without one.

    Also what readers of a StatusChange (which keeps the regions, not the kind) call to name its cause.
    """
    kinds = list(failed_regions.values())
    if kinds:
        return min(set(kinds), key=lambda item: (-kinds.count(item), item))
    return SLOW if slow else ""


def cause_changed(previous: Cause | None, current: Cause | None) -> bool:
    """Return whether a failing check's cause changed while it stayed failing (an outbox event)."""
    return previous is not None and current is not None and previous.signature != current.signature


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _regions(count: int) -> str:
    return f"{count} region{'s' if count != 1 else ''}"


def _at(state: RegionVote) -> datetime:
    # Only called on regions with a result, which always have a timestamp.
    assert state.last_result_at is not None
    return state.last_result_at


def _failures(down: Mapping[str, str]) -> str:
    """Return "eu-west, us-east (timeout)" for one shared kind, else each region with its own."""
    kinds = set(down.values())
    if len(kinds) == 1:
        (kind,) = kinds
        return ", ".join(down) + (f" ({kind})" if kind else "")
    return ", ".join(f"{slug} ({kind})" if kind else slug for slug, kind in down.items())


def _duration(span: timedelta) -> str:
    """Return a span as whole seconds, minutes, hours or days, rounded down, for a reason sentence."""
    seconds = max(0, int(span.total_seconds()))
    for unit, size, below in (("second", 1, 120), ("minute", 60, 120 * 60), ("hour", 3600, 48 * 3600)):
        if seconds < below:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    days = seconds // 86400
    return f"{days} day{'s' if days != 1 else ''}"


# --- Tool lists ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolDiff:
    """Describe how a server's tool list changed between two successful listings."""

    removed: tuple[str, ...]
    added: tuple[str, ...]
    new_required_inputs: dict[str, tuple[str, ...]]

    @property
    def matters(self) -> bool:
        """Return whether an assistant using the old list could now break: a removal or a new required input."""
        return bool(self.removed or self.new_required_inputs)

    @property
    def reason(self) -> str:
        """Return a sentence for the event: "Removed: a, b; new required inputs: search (query)"."""
        parts = []
        if self.removed:
            parts.append(f"Removed: {', '.join(self.removed)}")
        if self.new_required_inputs:
            inputs = ", ".join(
                f"{tool} ({', '.join(names)})" for tool, names in self.new_required_inputs.items()
            )
            parts.append(f"new required inputs: {inputs}")
        if self.added:
            parts.append(f"added: {', '.join(self.added)}")
        return _sentence("; ".join(parts)) or "No change"


def tool_diff(previous: Sequence[ToolInfo], current: Sequence[ToolInfo]) -> ToolDiff:
    """Return the difference from ``previous`` to ``current``, every list sorted by name."""
    before, after = _by_name(previous), _by_name(current)
    new_inputs = {
        name: tuple(sorted(after[name] - before[name]))
        for name in sorted(before.keys() & after.keys())
        if after[name] - before[name]
    }
    return ToolDiff(
        removed=tuple(sorted(before.keys() - after.keys())),
        added=tuple(sorted(after.keys() - before.keys())),
        new_required_inputs=new_inputs,
    )


def _by_name(tools: Sequence[ToolInfo]) -> dict[str, frozenset[str]]:
    # Servers should not list a name twice; if one does, its entries' required inputs are
    # merged, so a duplicate can neither hide nor invent a new requirement.
    merged: dict[str, frozenset[str]] = {}
    for tool in tools:
        merged[tool.name] = merged.get(tool.name, frozenset()) | frozenset(tool.required_inputs)
    return merged


# --- Rollups ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RollupFigures:
    """Sum up a period of one healthcheck's runs in one region."""

    runs: int
    failures: int
    degraded: int
    uptime: float | None
    p50_ms: float | None
    p95_ms: float | None


def answered(status: Status) -> bool:
    """Return whether a run of ``status`` has a response time: it reached the server and was answered."""
    return status in (Status.UP, Status.DEGRADED)


def rollup_figures(samples: Iterable[tuple[Status, float | None]]) -> RollupFigures:
    """Return the figures for runs given as (status, total_ms); see the module docstring for the rules."""
    runs = failures = degraded = 0
    times: list[float] = []
    for status, total_ms in samples:
        if status not in SAMPLE_STATUSES:
            raise ValueError(f"a run's result is up, degraded or down, not {status!r}")
        runs += 1
        failures += status == Status.DOWN
        degraded += status == Status.DEGRADED
        # NaN would poison the sort order; a run without a usable time just has none.
        if answered(status) and total_ms is not None and not math.isnan(total_ms):
            times.append(total_ms)
    times.sort()
    return RollupFigures(
        runs=runs,
        failures=failures,
        degraded=degraded,
        uptime=(runs - failures) / runs if runs else None,
        p50_ms=_nearest_rank(times, 50),
        p95_ms=_nearest_rank(times, 95),
    )


def _nearest_rank(ordered: Sequence[float], percent: int) -> float | None:
    """Return the smallest value with at least ``percent``% of values at or below it."""
    if not ordered:
        return None
    # Integer ceiling division keeps the rank exact for any count: no float rounding to reason about.
    rank = max(1, -(-percent * len(ordered) // 100))
    return ordered[rank - 1]
