"""Write what probing the directory finds: claim the listings due, record their attempts, hours and tool changes.

The directory's probe worker (``directory.sync``) claims listings with :func:`listing_probes_claim`,
probes them with the engine, and hands the outcomes to :func:`listing_probes_record`; the rows it
writes (``ListingProbeState``, ``ListingProbeHour``, ``ListingToolChange``, ``ListingToolList``) are the
evidence the stored scorecards (``directory.services``) read.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import F, Field, QuerySet, Value
from django.db.models.functions import Least

from directory import latency
from directory.models import (
    Listing,
    ListingProbeHour,
    ListingProbeState,
    ListingRemote,
    ListingToolChange,
    ListingToolList,
)
from directory.probing import ProbeDone, ProbeTarget, next_probe_at, stored_tools, tools_of
from monitors.rules import tool_diff
from monitors.scorecard import (
    AUTH_STATUSES,
    AttemptTally,
)
from probes.types import ProbeOutcome

# How long the hourly counts and tool changes are kept: the 30-day window and a margin.
PROBE_KEEP = timedelta(days=32)
# Probes recorded per transaction.
RECORD_CHUNK = 200
# What a tool change keeps of its names (a target rotating thousands must not store them all).
MAX_CHANGE_NAMES = 100
MAX_CHANGE_INPUTS = 20


def probeable_listings() -> QuerySet[Listing]:
    """Return the listings directory probing reaches: latest, not deleted, with a remote that is not templated."""
    return (
        Listing.objects.filter(is_latest=True, remotes__templated=False)
        .exclude(status=Listing.Status.DELETED)
        .distinct()
    )


def listing_probes_claim(*, now: datetime, interval: timedelta, limit: int) -> list[ProbeTarget]:
    """Claim up to ``limit`` due listings and move each to its next slot; return what to probe.

    A listing newly probeable gets its state, due at once (``limit`` spreads a fresh install's
    first round); after its first probe it keeps its own place in every interval
    (``probing.next_probe_at``). Claims are taken with SKIP LOCKED and moved past ``now`` in
    the same transaction, so two workers never probe the same listing for the same slot. A
    deleted or no longer probeable listing is never claimed, whatever its state says.
    """
    missing = probeable_listings().filter(probe_state__isnull=True).values_list("id", flat=True)
    ListingProbeState.objects.bulk_create(
        [ListingProbeState(listing_id=listing_id, next_probe_at=now) for listing_id in missing],
        ignore_conflicts=True,
        batch_size=1000,
    )
    with transaction.atomic():
        due = list(
            ListingProbeState.objects.filter(
                next_probe_at__lte=now, listing_id__in=probeable_listings().values("id")
            )
            .order_by("next_probe_at", "listing_id")
            .select_for_update(skip_locked=True, of=("self",))[: max(0, limit)]
        )
        for state in due:
            state.next_probe_at = next_probe_at(state.listing_id, after=now, interval=interval)
        _save_states(due, ["next_probe_at"])
    urls: dict[int, str] = {}
    remotes = (
        ListingRemote.objects.filter(listing_id__in=[state.listing_id for state in due], templated=False)
        .order_by("listing_id", "position")
        .values_list("listing_id", "url")
    )
    for listing_id, url in remotes:
        urls.setdefault(listing_id, url)
    return [ProbeTarget(listing_id=lid, url=urls[lid]) for lid in sorted(urls)]


def listing_probes_return(*, listing_ids: Sequence[int], now: datetime) -> int:
    """Make claimed listings a round did not probe (it was stopped) due again at ``now``; return how many."""
    if not listing_ids:
        return 0
    return ListingProbeState.objects.filter(listing_id__in=listing_ids).update(
        next_probe_at=Least(F("next_probe_at"), Value(now))
    )


def listing_probes_record(*, done: Sequence[ProbeDone]) -> None:
    """Record a round's probes: each listing's latest attempt, its hour's counts, its tool list and changes.

    One transaction per chunk of RECORD_CHUNK probes, none of them holding network I/O.
    """
    for start in range(0, len(done), RECORD_CHUNK):
        with transaction.atomic():
            _record_chunk(done[start : start + RECORD_CHUNK])


def _record_chunk(done: Sequence[ProbeDone]) -> None:
    ids = sorted({probe.target.listing_id for probe in done})
    states = {
        state.listing_id: state
        for state in ListingProbeState.objects.select_for_update().filter(listing_id__in=ids).order_by("pk")
    }
    lists = {row.listing_id: row for row in ListingToolList.objects.filter(listing_id__in=ids)}
    hours: dict[tuple[int, datetime], AttemptTally] = defaultdict(AttemptTally)
    times: dict[tuple[int, datetime], list[float]] = defaultdict(list)
    skipped: dict[tuple[int, datetime], int] = defaultdict(int)
    changes: list[ListingToolChange] = []
    new_lists: dict[int, ListingToolList] = {}
    for probe in sorted(done, key=lambda probe: probe.at):
        state = states.get(probe.target.listing_id)
        if state is None:  # the listing went away while it was probed
            continue
        hour = probe.at.replace(minute=0, second=0, microsecond=0)
        if probe.outcome is None:
            state.skipped_at, state.skipped_reason = probe.at, probe.skipped[:300]
            skipped[(state.listing_id, hour)] += 1
            continue
        outcome = probe.outcome
        _record_attempt(state, probe.target.url, outcome, at=probe.at)
        hours[(state.listing_id, hour)].add(
            kind=outcome.kind.value if outcome.kind else None,
            http_status=outcome.http_status,
            in_maintenance=False,
            tools_listed=outcome.tool_count is not None,
            total_ms=outcome.timings.total_ms,
        )
        # The times the windows' p50 and p95 read: a success's, as AttemptTally counts it.
        if (
            outcome.tool_count is not None
            and outcome.timings.total_ms is not None
            and outcome.http_status not in AUTH_STATUSES
        ):
            times[(state.listing_id, hour)].append(outcome.timings.total_ms)
        change, new_list = _follow_tools(state, outcome, lists.get(state.listing_id), at=probe.at)
        if change is not None:
            changes.append(change)
        if new_list is not None:
            lists[state.listing_id] = new_lists[state.listing_id] = new_list
    _save_states(list(states.values()), STATE_FIELDS)
    if new_lists:
        ListingToolList.objects.bulk_create(
            list(new_lists.values()),
            update_conflicts=True,
            unique_fields=["listing"],
            update_fields=["digest", "tools", "tool_count", "current_since"],
        )
    ListingToolChange.objects.bulk_create(changes)
    keys = set(hours) | set(skipped)
    _add_hours(hours, skipped, _merged_latency(keys, times))


STATE_FIELDS = [
    "url",
    "transport",
    "probed_at",
    "tool_count",
    "http_status",
    "total_ms",
    "protocol",
    "server_name",
    "kind",
    "reason",
    "signin_discovery",
    "listed_at",
    "skipped_at",
    "skipped_reason",
    "tool_digest",
    "tool_details_digest",
]


def _save_states(states: list[ListingProbeState], names: Sequence[str]) -> None:
    """Write each state's ``names`` fields: one UPDATE a row, sent together (Django's bulk_update builds a
    CASE per column and row, which costs seconds of Python for a few hundred rows)."""
    if not states:
        return
    quote = connection.ops.quote_name
    fields = [field for name in names if isinstance(field := ListingProbeState._meta.get_field(name), Field)]
    sets = ", ".join(f"{quote(str(field.column))} = %s" for field in fields)
    # Only this model's own table and column names are formatted in; every value is a parameter.
    sql = f"UPDATE {quote(ListingProbeState._meta.db_table)} SET {sets} WHERE listing_id = %s"  # noqa: S608
    rows = [
        [field.get_db_prep_save(getattr(state, field.attname), connection) for field in fields]
        + [state.listing_id]
        for state in states
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def _record_attempt(state: ListingProbeState, url: str, outcome: ProbeOutcome, *, at: datetime) -> None:
    """Make ``outcome`` the listing's latest attempt (its text already made storable by the engine)."""
    state.url = url[:2000]
    state.transport = outcome.transport.value if outcome.transport else ""
    state.probed_at = at
    state.tool_count = outcome.tool_count
    state.http_status = outcome.http_status
    state.total_ms = outcome.timings.total_ms
    state.protocol = (outcome.protocol or "")[:40]
    state.server_name = (outcome.server.name if outcome.server else "")[:200]
    state.kind = outcome.kind.value if outcome.kind else ""
    state.reason = outcome.reason[:500]
    state.signin_discovery = outcome.signin_discovery.value if outcome.signin_discovery else ""
    if outcome.tool_count is not None:
        state.listed_at = at


def _follow_tools(
    state: ListingProbeState,
    outcome: ProbeOutcome,
    current: ListingToolList | None,
    *,
    at: datetime,
) -> tuple[ListingToolChange | None, ListingToolList | None]:
    """Return the change when a tool went away or got stricter, and the new list when the outcome's differs.

    As the recorder of healthchecks does (monitors.services.recording): an outcome that listed
    tools without keeping them (over the engine's caps) changes nothing.
    """
    if outcome.tool_count is None or (not outcome.tools and outcome.tool_count):
        return None, None
    change = new_list = None
    if outcome.tool_digest and outcome.tool_digest != state.tool_digest and current is not None:
        diff = tool_diff(tools_of(current.tools), outcome.tools)
        if diff.matters:
            stricter = list(diff.new_required_inputs.items())
            change = ListingToolChange(
                listing_id=state.listing_id,
                at=at,
                removed=list(diff.removed[:MAX_CHANGE_NAMES]),
                removed_count=len(diff.removed),
                added_count=len(diff.added),
                new_required_inputs={
                    name: list(inputs[:MAX_CHANGE_INPUTS]) for name, inputs in stricter[:MAX_CHANGE_NAMES]
                },
                new_required_inputs_count=len(stricter),
            )
    state.tool_digest = outcome.tool_digest or ""
    if outcome.tool_details_digest and outcome.tool_details_digest != state.tool_details_digest:
        state.tool_details_digest = outcome.tool_details_digest
        new_list = ListingToolList(
            listing_id=state.listing_id,
            digest=outcome.tool_details_digest,
            tools=stored_tools(outcome.tools),
            tool_count=len(outcome.tools),
            current_since=at,
        )
    return change, new_list


def _merged_latency(
    keys: set[tuple[int, datetime]], times: dict[tuple[int, datetime], list[float]]
) -> dict[tuple[int, datetime], latency.Histogram]:
    """Return each (listing, hour)'s stored latency histogram with its new ``times`` added; one query.

    Read under the chunk's lock on the listings' probe states, which every writer of their
    hours takes first, so nothing writes these rows between this read and the upsert.
    """
    if not keys:
        return {}
    stored: dict[tuple[int, datetime], list[list[int]]] = {
        (listing_id, hour): histogram
        for listing_id, hour, histogram in ListingProbeHour.objects.filter(
            listing_id__in={listing_id for listing_id, _ in keys}, hour__in={hour for _, hour in keys}
        ).values_list("listing_id", "hour", "latency")
    }
    return {
        key: latency.merge([stored.get(key) or [], latency.histogram_of(times.get(key, ()))]) for key in keys
    }


def _add_hours(
    hours: dict[tuple[int, datetime], AttemptTally],
    skipped: dict[tuple[int, datetime], int],
    histograms: dict[tuple[int, datetime], latency.Histogram],
) -> None:
    """Add the counts to each (listing, hour) row and set its latency histogram: one upsert.

    ``histograms`` are the hours' whole histograms, stored and new (:func:`_merged_latency`).
    """
    keys = sorted(set(hours) | set(skipped))
    if not keys:
        return
    table = connection.ops.quote_name(ListingProbeHour._meta.db_table)
    columns = ("attempts", "successes", "successes_1s", "successes_3s", "skipped")
    hour_field = ListingProbeHour._meta.get_field("hour")
    latency_field = ListingProbeHour._meta.get_field("latency")
    params: list[Any] = []
    for listing_id, hour in keys:
        tally = hours.get((listing_id, hour), AttemptTally())
        params += [
            listing_id,
            hour_field.get_db_prep_value(hour, connection),
            tally.attempts,
            tally.successes,
            tally.within_1s,
            tally.within_3s,
            skipped.get((listing_id, hour), 0),
            latency_field.get_db_prep_value(histograms.get((listing_id, hour), []), connection),
        ]
    placeholders = ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s)"] * len(keys))
    updates = ", ".join(f"{name} = {table}.{name} + EXCLUDED.{name}" for name in columns)
    # Only this model's own table and column names are formatted in; every value is a parameter.
    sql = (
        f"INSERT INTO {table} (listing_id, hour, {', '.join(columns)}, latency) VALUES {placeholders} "  # noqa: S608
        f"ON CONFLICT (listing_id, hour) DO UPDATE SET {updates}, latency = EXCLUDED.latency"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def listing_probes_prune(*, now: datetime) -> int:
    """Delete the hourly counts and tool changes older than 32 days; return how many rows went."""
    cutoff = now - PROBE_KEEP
    hours, _ = ListingProbeHour.objects.filter(hour__lt=cutoff).delete()
    changes, _ = ListingToolChange.objects.filter(at__lt=cutoff).delete()
    return hours + changes
