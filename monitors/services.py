"""Write tenancy and healthchecks; every function is keyword-only and owns its transaction."""

from __future__ import annotations

import hashlib
import json
import secrets
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import connection, models, transaction
from django.utils import timezone

from monitors import latency
from monitors.errors import ConfigInvalid, ServiceError
from monitors.models import (
    ApiKey,
    Healthcheck,
    HealthcheckTag,
    Membership,
    Organization,
    Plan,
    ProbeResult,
    Region,
    RegionState,
    Rollup,
    StatusChange,
    ToolChange,
    ToolList,
)
from monitors.rules import (
    HealthPolicy,
    RecheckPolicy,
    overall_verdict,
    region_verdict,
    rollup_figures,
    tool_diff,
)
from monitors.rules import RegionState as RuleRegionState
from monitors.scheduling import first_slot_at_or_after, slot_offset_for
from monitors.secrets import MASK, decrypt_headers, encrypt_headers, masked
from monitors.selectors import regions_allowed
from probes.config import ConfigError, config_to_api, parse_config
from probes.types import CheckType, ProbeOutcome, Status, ToolInfo

API_KEY_PREFIX = "upt_"
# Writing last_used_at on every request would turn reads into writes; a minute is precise enough.
API_KEY_TOUCH_INTERVAL = timedelta(minutes=1)
DEFAULT_PLAN_SLUG = "free"
DEFAULT_INTERVAL_SECONDS = 60


def hash_api_key(raw_key: str) -> str:
    """Return the stored form of a key: keys are long random strings, so plain SHA-256 suffices."""
    return hashlib.sha256(raw_key.encode()).hexdigest()


def organization_create(*, slug: str, name: str = "", plan: Plan | None = None) -> Organization:
    try:
        validate_slug(slug)
    except ValidationError:
        raise ServiceError("slug", "Use letters, digits, hyphens and underscores only.") from None
    plan = plan or Plan.objects.get(slug=DEFAULT_PLAN_SLUG)
    return Organization.objects.create(slug=slug, name=name or slug, plan=plan)


def membership_add(
    *, organization: Organization, user: Any, role: str = Membership.Role.MEMBER
) -> Membership:
    membership, _ = Membership.objects.update_or_create(
        organization=organization, user=user, defaults={"role": role}
    )
    return membership


def api_key_create(
    *, organization: Organization, name: str = "", scope: str = ApiKey.Scope.READ_WRITE
) -> tuple[ApiKey, str]:
    """Create a key and return it with the raw key, which is shown once and never stored."""
    raw_key = API_KEY_PREFIX + secrets.token_urlsafe(32)
    api_key = ApiKey.objects.create(
        organization=organization,
        name=name,
        prefix=raw_key[: len(API_KEY_PREFIX) + 8],
        key_hash=hash_api_key(raw_key),
        scope=scope,
    )
    return api_key, raw_key


def api_key_revoke(*, api_key: ApiKey, now: datetime) -> ApiKey:
    ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(revoked_at=now)
    api_key.refresh_from_db(fields=["revoked_at"])
    return api_key


def api_key_touch(*, api_key: ApiKey, now: datetime) -> None:
    """Record that the key was used, at most once per API_KEY_TOUCH_INTERVAL."""
    if api_key.last_used_at and now - api_key.last_used_at < API_KEY_TOUCH_INTERVAL:
        return
    ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
    api_key.last_used_at = now


def healthcheck_create(
    *,
    organization: Organization,
    name: str,
    check_type: CheckType,
    config: Mapping[str, Any],
    now: datetime,
    interval_seconds: int | None = None,
    region_slugs: Iterable[str] | None = None,
    tags: Iterable[str] = (),
    paused: bool = False,
    rules: Mapping[str, Any] | None = None,
) -> Healthcheck:
    """Create a healthcheck within the organization's plan; its first slot is within one interval.

    ``rules`` may hold recheck_count, recheck_delay_seconds, quorum and degraded_threshold_ms.
    """
    plan = organization.plan
    interval = (
        interval_seconds
        if interval_seconds is not None
        else max(DEFAULT_INTERVAL_SECONDS, plan.min_interval_seconds)
    )
    _check_interval(plan, interval)
    regions = _regions_for(organization, region_slugs)
    api_config, headers = _prepared_config(check_type, config, stored_headers={})
    with transaction.atomic():
        # Lock the organization so two concurrent creates can't both pass the plan's count.
        Organization.objects.select_for_update().filter(pk=organization.pk).first()
        if Healthcheck.objects.filter(organization=organization).count() >= plan.max_healthchecks:
            raise ServiceError(
                "non_field_errors",
                f"Your plan ({plan.name}) allows {plan.max_healthchecks} healthchecks; delete one or upgrade.",
            )
        _check_quorum((rules or {}).get("quorum"), len(regions))
        healthcheck = Healthcheck(
            organization=organization,
            name=name,
            type=int(check_type),
            config=api_config,
            secret_headers=encrypt_headers(headers),
            interval_seconds=interval,
            paused=paused,
            status=Status.PAUSED if paused else Status.PENDING,
            status_changed_at=now,
            **dict(rules or {}),
        )
        _schedule(healthcheck, now=now)
        healthcheck.save(force_insert=True)
        healthcheck.regions.set(regions)
        _set_tags(healthcheck, tags)
    return healthcheck


def healthcheck_update(
    *, healthcheck: Healthcheck, changes: Mapping[str, Any], partial: bool, now: datetime
) -> Healthcheck:
    """Apply API changes; omitted headers and headers sent back masked keep their stored values.

    ``changes`` may hold name, check_type, config, interval_seconds, region_slugs, tags, paused.
    A partial update merges ``config`` key by key into the stored config.
    """
    organization = healthcheck.organization
    check_type = changes.get("check_type", healthcheck.check_type)
    type_changed = check_type != healthcheck.check_type
    if type_changed and "config" not in changes:
        raise ServiceError("config", "Send the whole config of the new type when changing the type.")
    if "interval_seconds" in changes:
        _check_interval(organization.plan, changes["interval_seconds"])
    regions = _regions_for(organization, changes["region_slugs"]) if "region_slugs" in changes else None
    if "config" in changes:
        base = healthcheck.config if partial and not type_changed else None
        stored_headers = decrypt_headers(healthcheck.secret_headers)
        api_config, headers = _prepared_config(check_type, changes["config"], stored_headers, merge_into=base)
        healthcheck.config = api_config
        healthcheck.secret_headers = encrypt_headers(headers)
    healthcheck.type = int(check_type)
    if "name" in changes:
        healthcheck.name = changes["name"]
    for field in RULE_FIELDS:
        if field in changes:
            setattr(healthcheck, field, changes[field])
    region_count = len(regions) if regions is not None else healthcheck.regions.count()
    _check_quorum(healthcheck.quorum, region_count)
    if "interval_seconds" in changes and changes["interval_seconds"] != healthcheck.interval_seconds:
        healthcheck.interval_seconds = changes["interval_seconds"]
        if not healthcheck.paused:
            _schedule(healthcheck, now=now)
    with transaction.atomic():
        healthcheck.save()
        if regions is not None:
            healthcheck.regions.set(regions)
            # A region no longer checked must not vote in the rules.
            RegionState.objects.filter(healthcheck=healthcheck).exclude(region__in=regions).delete()
        if "tags" in changes:
            _set_tags(healthcheck, changes["tags"])
    if "paused" in changes and changes["paused"] != healthcheck.paused:
        fn = healthcheck_pause if changes["paused"] else healthcheck_resume
        healthcheck = fn(healthcheck=healthcheck, now=now)
    return healthcheck


def healthcheck_delete(*, healthcheck: Healthcheck) -> None:
    healthcheck.delete()


def healthcheck_pause(*, healthcheck: Healthcheck, now: datetime) -> Healthcheck:
    """Stop checking; the status reads paused until resumed, and the change is recorded."""
    with transaction.atomic():
        locked = Healthcheck.objects.select_for_update().get(pk=healthcheck.pk)
        if locked.status != Status.PAUSED:
            _record_status_change(locked, to=Status.PAUSED, reason="Paused", now=now)
        Healthcheck.objects.filter(pk=healthcheck.pk).update(
            paused=True, status=Status.PAUSED, status_changed_at=now, next_check_at=None, updated_at=now
        )
    healthcheck.refresh_from_db()
    return healthcheck


def healthcheck_resume(*, healthcheck: Healthcheck, now: datetime) -> Healthcheck:
    """Check again from the next slot; the status is pending until results decide it."""
    healthcheck.slot_offset = slot_offset_for(healthcheck.public_id, healthcheck.interval_seconds)
    next_slot = first_slot_at_or_after(
        now, interval_seconds=healthcheck.interval_seconds, offset=healthcheck.slot_offset
    )
    with transaction.atomic():
        updated = Healthcheck.objects.filter(pk=healthcheck.pk, paused=True).update(
            paused=False,
            status=Status.PENDING,
            status_changed_at=now,
            next_check_at=next_slot,
            slot_offset=healthcheck.slot_offset,
            updated_at=now,
        )
        if updated:
            # Old region verdicts are from before the pause: start from pending everywhere.
            RegionState.objects.filter(healthcheck=healthcheck).delete()
            _record_status_change(healthcheck, to=Status.PENDING, reason="Resumed", now=now)
    healthcheck.refresh_from_db()
    return healthcheck


def demo_bootstrap(*, org_slug: str = "demo", username: str = "admin") -> dict[str, str | None]:
    """Make sure the demo organization, an admin user and an API key exist.

    Return the password and the raw key when this call created them (they can't be shown
    later), and None for those that already existed.
    """
    user_model = get_user_model()
    with transaction.atomic():
        organization = Organization.objects.filter(slug=org_slug).first()
        if organization is None:
            organization = organization_create(slug=org_slug, name="Demo", plan=Plan.objects.get(slug="paid"))
        password = None
        user = user_model.objects.filter(username=username).first()
        if user is None:
            password = secrets.token_urlsafe(12)
            user = user_model.objects.create_superuser(username=username, email="", password=password)
        membership_add(organization=organization, user=user, role=Membership.Role.OWNER)
        raw_key = None
        if not organization.api_keys.filter(revoked_at__isnull=True).exists():
            _, raw_key = api_key_create(organization=organization, name="demo")
    return {"organization": organization.slug, "username": username, "password": password, "api_key": raw_key}


RULE_FIELDS = ("recheck_count", "recheck_delay_seconds", "quorum", "degraded_threshold_ms")


def _record_status_change(healthcheck: Healthcheck, *, to: Status, reason: str, now: datetime) -> None:
    """Store a status change that an operator caused (pause, resume) in the same outbox as the rules'."""
    StatusChange.objects.create(
        healthcheck=healthcheck, at=now, from_status=healthcheck.status, to_status=to, reason=reason
    )


def _schedule(healthcheck: Healthcheck, *, now: datetime) -> None:
    """Set the healthcheck's offset and its first slot, at most one interval from now."""
    healthcheck.slot_offset = slot_offset_for(healthcheck.public_id, healthcheck.interval_seconds)
    if healthcheck.paused:
        healthcheck.next_check_at = None
        return
    healthcheck.next_check_at = first_slot_at_or_after(
        now, interval_seconds=healthcheck.interval_seconds, offset=healthcheck.slot_offset
    )


def _check_quorum(quorum: int | None, region_count: int) -> None:
    if quorum is not None and not 1 <= quorum <= region_count:
        raise ServiceError("quorum", f"Must be from 1 to the number of regions ({region_count}).")


def _check_interval(plan: Plan, interval: int) -> None:
    if interval < plan.min_interval_seconds:
        raise ServiceError(
            "interval", f"Your plan ({plan.name}) checks at most every {plan.min_interval_seconds} seconds."
        )


def _regions_for(organization: Organization, slugs: Iterable[str] | None) -> list[Region]:
    allowed = list(regions_allowed(organization=organization))
    if slugs is None:
        return allowed
    wanted = list(dict.fromkeys(slugs))
    if not wanted:
        raise ServiceError("regions", "Choose at least one region.")
    by_slug = {region.slug: region for region in allowed}
    refused = [slug for slug in wanted if slug not in by_slug]
    if refused:
        raise ServiceError(
            "regions",
            f"Your plan doesn't allow {', '.join(refused)}; allowed: {', '.join(by_slug) or 'none'}.",
        )
    return [by_slug[slug] for slug in wanted]


def _set_tags(healthcheck: Healthcheck, tags: Iterable[str]) -> None:
    names = sorted(set(tags))
    healthcheck.tag_rows.exclude(name__in=names).delete()
    existing = set(healthcheck.tag_rows.values_list("name", flat=True))
    HealthcheckTag.objects.bulk_create(
        [HealthcheckTag(healthcheck=healthcheck, name=name) for name in names if name not in existing]
    )


def _prepared_config(
    check_type: CheckType,
    incoming: Mapping[str, Any],
    stored_headers: Mapping[str, str],
    *,
    merge_into: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """Validate a config and split it into the stored shape (values masked) and the secret headers."""
    if not isinstance(incoming, Mapping):
        raise ConfigInvalid({"config": "Must be a JSON object."})
    data = {**merge_into, **incoming} if merge_into is not None else dict(incoming)
    if "headers" in incoming:
        data["headers"] = _unmasked_headers(incoming["headers"], stored_headers)
    else:
        data["headers"] = dict(stored_headers)
    try:
        parsed = parse_config(check_type, data)
    except ConfigError as exc:
        raise ConfigInvalid({f"config.{key}": message for key, message in exc.errors.items()}) from None
    api_config = config_to_api(parsed)
    headers = api_config.pop("headers")
    api_config["headers"] = masked(headers)
    return api_config, headers


def _unmasked_headers(incoming: object, stored: Mapping[str, str]) -> object:
    """Replace each masked value with the stored value of the same (case-insensitive) name."""
    if not isinstance(incoming, Mapping):
        return incoming  # probes.config reports the shape error
    stored_by_lower = {name.lower(): value for name, value in stored.items()}
    result: dict[Any, Any] = {}
    for name, value in incoming.items():
        if value == MASK:
            if not isinstance(name, str) or name.lower() not in stored_by_lower:
                raise ConfigInvalid(
                    {f"config.headers.{name}": "Send the value: this header has no stored value to keep."}
                )
            value = stored_by_lower[name.lower()]
        result[name] = value
    return result


# --- Recording outcomes --------------------------------------------------------------------


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
    """
    if not results:
        return []
    regions = {region.slug: region for region in Region.objects.all()}
    if region_slug not in regions:
        raise Region.DoesNotExist(f"no region {region_slug!r}")
    region = regions[region_slug]
    ids = sorted({result.healthcheck_id for result in results})
    rechecks: list[Recheck] = []
    with transaction.atomic():
        healthchecks = {
            hc.id: hc
            for hc in Healthcheck.objects.select_for_update()
            .filter(id__in=ids)
            .order_by("id")
            .only(*RECORDER_FIELDS)
        }
        now = now or timezone.now()
        live = [result for result in results if result.healthcheck_id in healthchecks]
        _insert_rows(ProbeResult, [_result_row(result, region, now) for result in live])
        book = _StateBook.load(
            healthchecks, region, now, region_slugs={r.id: r.slug for r in regions.values()}
        )
        for result in sorted(live, key=lambda r: (r.healthcheck_id, r.slot, r.attempt)):
            healthcheck = healthchecks[result.healthcheck_id]
            recheck = book.apply(healthcheck, result)
            if recheck is not None:
                rechecks.append(recheck)
        book.save()
    return rechecks


def _insert_rows(
    model: type[models.Model],
    objs: Sequence[models.Model],
    *,
    unique_fields: Sequence[str] = (),
    update_fields: Sequence[str] = (),
) -> None:
    """Insert ``objs``, skipping rows that conflict, or updating ``update_fields`` where given.

    Without ``update_fields`` this is ``bulk_create(ignore_conflicts=True)``, with them an upsert
    on ``unique_fields``. On PostgreSQL the rows travel as one jsonb parameter expanded by
    jsonb_populate_recordset: Django's bulk_create prepares every value of every row in Python,
    which was half of the recorder's CPU time (monitors.bench record). Same rows either way.
    """
    if not objs:
        return
    if connection.vendor == "postgresql":
        fields = [field for field in model._meta.concrete_fields if not field.primary_key]
        try:
            payload = json.dumps(
                [{field.column: getattr(obj, field.attname) for field in fields} for obj in objs],
                default=_json_default,
                allow_nan=False,  # JSON has no NaN; those (never seen) rows take the ORM path
                separators=(",", ":"),
            )
        except ValueError:
            payload = None
        if payload is not None:
            quote = connection.ops.quote_name
            table = quote(model._meta.db_table)
            columns = ", ".join(quote(field.column) for field in fields)
            if update_fields:
                targets = ", ".join(quote(model._meta.get_field(name).column) for name in unique_fields)
                updates = ", ".join(
                    f"{quote(column)} = EXCLUDED.{quote(column)}"
                    for column in (model._meta.get_field(name).column for name in update_fields)
                )
                conflict = f"ON CONFLICT ({targets}) DO UPDATE SET {updates}"
            else:
                conflict = "ON CONFLICT DO NOTHING"
            with connection.cursor() as cursor:
                cursor.execute(
                    f"INSERT INTO {table} ({columns}) SELECT {columns} "  # noqa: S608 (names from the model)
                    f"FROM jsonb_populate_recordset(NULL::{table}, %s::jsonb) {conflict}",
                    [payload],
                )
            return
    if update_fields:
        model._default_manager.bulk_create(
            objs,
            batch_size=1000,
            update_conflicts=True,
            unique_fields=list(unique_fields),
            update_fields=list(update_fields),
        )
    else:
        model._default_manager.bulk_create(objs, batch_size=1000, ignore_conflicts=True)


def _json_default(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


# What the recorder reads of a healthcheck. Loading only these keeps the config and the secret
# headers out of the locked read; a field read but not listed costs a query per healthcheck.
RECORDER_FIELDS = (
    "id",
    "status",
    "status_changed_at",
    "tool_digest",
    "paused",
    "interval_seconds",
    "recheck_count",
    "recheck_delay_seconds",
    "quorum",
    "degraded_threshold_ms",
)

STATE_FIELDS = [
    "status",
    "since",
    "last_slot",
    "last_attempt",
    "last_result_at",
    "response_ms",
    "kind",
    "reason",
    "missing_tools",
]


class _StateBook:
    """Hold the region states and healthchecks one batch touches, and write them back at once."""

    def __init__(self, region: Region, now: datetime) -> None:
        self.region = region
        self.now = now
        # This region's states, written back by save(); the other regions' are only read.
        self.states: dict[tuple[int, int], RegionState] = {}
        self.peers: dict[tuple[int, int], _PeerState] = {}
        self.region_slugs: dict[int, str] = {}
        self.configured: dict[int, list[int]] = defaultdict(list)
        self.new_states: list[RegionState] = []
        self.dirty_states: set[int] = set()
        self.dirty_checks: dict[int, Healthcheck] = {}
        # Which of a dirty healthcheck's fields changed, so save() writes each group with one UPDATE.
        self.status_changed: set[int] = set()
        self.digest_changed: set[int] = set()
        self.new_tool_lists: dict[tuple[int, str], ToolList] = {}
        self.status_changes: list[StatusChange] = []
        self.tool_changes: list[ToolChange] = []

    @classmethod
    def load(
        cls,
        healthchecks: Mapping[int, Healthcheck],
        region: Region,
        now: datetime,
        *,
        region_slugs: Mapping[int, str],
    ) -> _StateBook:
        book = cls(region, now)
        ids = list(healthchecks)
        book.region_slugs = dict(region_slugs)
        for hc_id, region_id in Healthcheck.regions.through.objects.filter(
            healthcheck_id__in=ids
        ).values_list("healthcheck_id", "region_id"):
            book.configured[hc_id].append(region_id)
        for state in RegionState.objects.filter(healthcheck_id__in=ids, region=region):
            book.states[(state.healthcheck_id, state.region_id)] = state
        # Tuples, not model instances, for the states only read: instances cost most of a batch.
        for hc_id, region_id, *fields in (
            RegionState.objects.filter(healthcheck_id__in=ids)
            .exclude(region=region)
            .values_list("healthcheck_id", "region_id", *_PeerState._fields)
        ):
            book.peers[(hc_id, region_id)] = _PeerState(*fields)
        return book

    def apply(self, healthcheck: Healthcheck, result: RunResult) -> Recheck | None:
        """Apply one result; return the recheck it asks for, if any."""
        state = self._state_for(healthcheck)
        if state.last_slot is not None and (result.slot, result.attempt) <= (
            state.last_slot,
            state.last_attempt,
        ):
            return None  # already applied: a redelivered batch, or a result overtaken by a newer one
        outcome = result.outcome
        policy = RecheckPolicy(
            count=healthcheck.recheck_count, delay_seconds=healthcheck.recheck_delay_seconds
        )
        verdict = region_verdict(
            previous=Status(state.status), outcome=outcome.status, attempt=result.attempt, policy=policy
        )
        state.last_slot, state.last_attempt = result.slot, result.attempt
        state.last_result_at = result.checked_at
        if verdict.status is not None:
            if verdict.status != state.status:
                state.since = self.now
            state.status = verdict.status
            # Only a decided run's time is the region's response time: a failed run awaiting its
            # recheck (a 10 s timeout) would otherwise make a region that still counts as up "slow".
            state.response_ms = outcome.timings.total_ms
            state.kind = outcome.kind.value if outcome.kind else ""
            state.reason = outcome.reason
            state.missing_tools = list(outcome.missing_tools)
        self._mark(state)
        self._follow_tools(healthcheck, outcome)
        self._decide(healthcheck)
        if verdict.recheck:
            return Recheck(healthcheck.id, result.slot, result.attempt + 1, float(policy.delay_seconds))
        return None

    def save(self) -> None:
        # New and changed states go in one upsert. bulk_update would build a CASE WHEN per row
        # and field: ~5 ms of Python per 10 rows, the recorder's whole budget (monitors.bench).
        # The healthcheck rows are locked, so no other recorder writes these states meanwhile.
        changed = [state for state in self.states.values() if not state.pk or id(state) in self.dirty_states]
        _insert_rows(
            RegionState, changed, unique_fields=["healthcheck", "region"], update_fields=STATE_FIELDS
        )
        # A batch's status changes share their time and mostly their value, and a new tool list
        # is usually one server's for many checks: one UPDATE per distinct set of new values
        # (a handful per batch; one per row at worst).
        groups: dict[tuple[tuple[str, Any], ...], list[int]] = defaultdict(list)
        for hc_id, healthcheck in self.dirty_checks.items():
            values: list[tuple[str, Any]] = []
            if hc_id in self.status_changed:
                values += [
                    ("status", healthcheck.status),
                    ("status_changed_at", healthcheck.status_changed_at),
                ]
            if hc_id in self.digest_changed:
                values.append(("tool_digest", healthcheck.tool_digest))
            groups[tuple(values)].append(hc_id)
        for fields, hc_ids in groups.items():
            if fields:
                Healthcheck.objects.filter(id__in=hc_ids).update(**dict(fields))
        # A digest seen before (a tool list that flapped back) keeps its first row.
        ToolList.objects.bulk_create(self.new_tool_lists.values(), batch_size=1000, ignore_conflicts=True)
        StatusChange.objects.bulk_create(self.status_changes, batch_size=1000)
        ToolChange.objects.bulk_create(self.tool_changes, batch_size=1000)

    def _state_for(self, healthcheck: Healthcheck) -> RegionState:
        key = (healthcheck.id, self.region.id)
        if key not in self.states:
            state = RegionState(healthcheck=healthcheck, region=self.region, status=Status.PENDING)
            self.states[key] = state
            self.new_states.append(state)
        return self.states[key]

    def _state_at(self, hc_id: int, region_id: int) -> RegionState | _PeerState | None:
        if region_id == self.region.id:
            return self.states.get((hc_id, region_id))
        return self.peers.get((hc_id, region_id))

    def _mark(self, state: RegionState) -> None:
        self.dirty_states.add(id(state))

    def _decide(self, healthcheck: Healthcheck) -> None:
        regions = {
            self.region_slugs[region_id]: _rule_state(self._state_at(healthcheck.id, region_id))
            for region_id in self.configured[healthcheck.id]
        }
        policy = HealthPolicy(
            quorum=healthcheck.quorum,
            degraded_threshold_ms=healthcheck.degraded_threshold_ms,
            stale_after=stale_after(healthcheck),
        )
        verdict = overall_verdict(regions=regions, policy=policy, paused=healthcheck.paused, now=self.now)
        if verdict.status == healthcheck.status:
            return
        missing = sorted(
            {
                tool
                for region_id in self.configured[healthcheck.id]
                if (state := self._state_at(healthcheck.id, region_id)) and state.status == Status.DOWN
                for tool in state.missing_tools
            }
        )
        self.status_changes.append(
            StatusChange(
                healthcheck=healthcheck,
                at=self.now,
                from_status=healthcheck.status,
                to_status=verdict.status,
                reason=verdict.reason,
                failed_regions=verdict.failed_regions,
                missing_tools=missing,
            )
        )
        healthcheck.status = verdict.status
        healthcheck.status_changed_at = self.now
        self.dirty_checks[healthcheck.id] = healthcheck
        self.status_changed.add(healthcheck.id)

    def _follow_tools(self, healthcheck: Healthcheck, outcome: ProbeOutcome) -> None:
        """Store a new tool list once per digest, and an event when a tool went away or got stricter."""
        digest = outcome.tool_digest
        if not digest or digest == healthcheck.tool_digest or (not outcome.tools and outcome.tool_count):
            return
        tools = [{"name": tool.name, "required_inputs": list(tool.required_inputs)} for tool in outcome.tools]
        # Written by save() in one insert; a digest already stored keeps its row.
        self.new_tool_lists.setdefault(
            (healthcheck.id, digest),
            ToolList(healthcheck=healthcheck, digest=digest, tools=tools, first_seen_at=self.now),
        )
        if healthcheck.tool_digest:
            previous = self.new_tool_lists.get((healthcheck.id, healthcheck.tool_digest))
            if previous is None:
                previous = ToolList.objects.filter(
                    healthcheck=healthcheck, digest=healthcheck.tool_digest
                ).first()
            if previous is not None:
                diff = tool_diff(_tool_infos(previous.tools), outcome.tools)
                if diff.matters:
                    self.tool_changes.append(
                        ToolChange(
                            healthcheck=healthcheck,
                            at=self.now,
                            region=self.region,
                            previous_digest=healthcheck.tool_digest,
                            digest=digest,
                            removed=list(diff.removed),
                            added=list(diff.added),
                            new_required_inputs={k: list(v) for k, v in diff.new_required_inputs.items()},
                        )
                    )
        healthcheck.tool_digest = digest
        self.dirty_checks[healthcheck.id] = healthcheck
        self.digest_changed.add(healthcheck.id)


def stale_after(healthcheck: Healthcheck) -> timedelta:
    """Return how long a region may stay silent before it stops voting: three missed slots and rechecks."""
    slack = healthcheck.recheck_count * healthcheck.recheck_delay_seconds + 60
    return timedelta(seconds=3 * healthcheck.interval_seconds + slack)


class _PeerState(NamedTuple):
    """Another region's state as the rules read it (RegionState's fields of the same names)."""

    status: str
    last_result_at: datetime | None
    response_ms: float | None
    kind: str
    reason: str
    missing_tools: list[str]


def _rule_state(state: RegionState | _PeerState | None) -> RuleRegionState:
    if state is None:
        return RuleRegionState(status=Status.PENDING, last_result_at=None)
    return RuleRegionState(
        status=Status(state.status),
        last_result_at=state.last_result_at,
        response_ms=state.response_ms,
        kind=state.kind or None,
        reason=state.reason,
    )


def _tool_infos(tools: Sequence[Mapping[str, Any]]) -> list[ToolInfo]:
    return [
        ToolInfo(name=tool["name"], required_inputs=tuple(tool.get("required_inputs", ()))) for tool in tools
    ]


def _result_row(result: RunResult, region: Region, now: datetime) -> ProbeResult:
    outcome = result.outcome
    timings = outcome.timings
    return ProbeResult(
        healthcheck_id=result.healthcheck_id,
        region=region,
        slot=result.slot,
        attempt=result.attempt,
        checked_at=result.checked_at,
        recorded_at=now,
        status=outcome.status.value,
        kind=outcome.kind.value if outcome.kind else "",
        reason=outcome.reason,
        http_status=outcome.http_status,
        server_name=outcome.server.name[:200] if outcome.server else "",
        server_version=outcome.server.version[:100] if outcome.server else "",
        protocol=outcome.protocol or "",
        access=outcome.access.value if outcome.access else "",
        signin_server=(outcome.signin_server or "")[:2048],
        transport=outcome.transport.value if outcome.transport else "",
        tool_count=outcome.tool_count,
        tool_digest=outcome.tool_digest or "",
        missing_tools=list(outcome.missing_tools),
        dns_ms=timings.dns_ms,
        tcp_ms=timings.tcp_ms,
        tls_ms=timings.tls_ms,
        ttfb_ms=timings.ttfb_ms,
        total_ms=timings.total_ms,
    )


# --- Rollups and retention -------------------------------------------------------------------


def rollups_refresh(*, now: datetime, hours: int = 2) -> int:
    """Recompute the hourly rollups of the last ``hours`` hours and the days they fall in.

    Each slot counts once per region, by its last attempt: a failure that a recheck cleared is
    not downtime. Recomputing is idempotent (upserts by the rollup's unique key).
    """
    hour = now.replace(minute=0, second=0, microsecond=0)
    starts = [hour - timedelta(hours=back) for back in range(hours - 1, -1, -1)]
    written = 0
    for start in starts:
        written += _hourly_rollups(start)
    for day in sorted({start.replace(hour=0) for start in starts}):
        written += _daily_rollups(day)
    return written


def _hourly_rollups(start: datetime) -> int:
    end = start + timedelta(hours=1)
    rows = (
        ProbeResult.objects.filter(slot__gte=start, slot__lt=end)
        .order_by("healthcheck_id", "region_id", "slot", "attempt")
        .values_list("healthcheck_id", "region_id", "slot", "status", "total_ms")
    )
    finals: dict[tuple[int, int], dict[datetime, tuple[str, float | None]]] = defaultdict(dict)
    for hc_id, region_id, slot, status, total_ms in rows.iterator(chunk_size=5000):
        finals[(hc_id, region_id)][slot] = (status, total_ms)  # later attempts overwrite earlier ones
    thresholds = dict(
        Healthcheck.objects.filter(id__in={key[0] for key in finals}).values_list(
            "id", "degraded_threshold_ms"
        )
    )
    rollups = []
    for (hc_id, region_id), slots in finals.items():
        threshold = thresholds.get(hc_id)
        samples = [
            (_sample_status(status, total_ms, threshold), total_ms) for status, total_ms in slots.values()
        ]
        figures = rollup_figures(samples)
        rollups.append(
            Rollup(
                healthcheck_id=hc_id,
                region_id=region_id,
                period=Rollup.Period.HOUR,
                start=start,
                runs=figures.runs,
                failures=figures.failures,
                degraded=figures.degraded,
                p50_ms=figures.p50_ms,
                p95_ms=figures.p95_ms,
                histogram=latency.histogram_of(ms for _, ms in samples if ms is not None),
            )
        )
    return _upsert_rollups(rollups)


def _daily_rollups(day: datetime) -> int:
    hours = Rollup.objects.filter(
        period=Rollup.Period.HOUR, start__gte=day, start__lt=day + timedelta(days=1)
    ).values_list("healthcheck_id", "region_id", "runs", "failures", "degraded", "histogram")
    merged: dict[tuple[int, int], list[Any]] = {}
    for hc_id, region_id, runs, failures, degraded, histogram in hours.iterator(chunk_size=5000):
        entry = merged.setdefault((hc_id, region_id), [0, 0, 0, []])
        entry[0] += runs
        entry[1] += failures
        entry[2] += degraded
        entry[3].append(histogram)
    rollups = []
    for (hc_id, region_id), (runs, failures, degraded, histograms) in merged.items():
        histogram = latency.merge(histograms)
        rollups.append(
            Rollup(
                healthcheck_id=hc_id,
                region_id=region_id,
                period=Rollup.Period.DAY,
                start=day,
                runs=runs,
                failures=failures,
                degraded=degraded,
                p50_ms=latency.percentile(histogram, 0.5),
                p95_ms=latency.percentile(histogram, 0.95),
                histogram=histogram,
            )
        )
    return _upsert_rollups(rollups)


def _upsert_rollups(rollups: list[Rollup]) -> int:
    Rollup.objects.bulk_create(
        rollups,
        batch_size=1000,
        update_conflicts=True,
        unique_fields=["healthcheck", "region", "period", "start"],
        update_fields=["runs", "failures", "degraded", "p50_ms", "p95_ms", "histogram"],
    )
    return len(rollups)


def _sample_status(status: str, total_ms: float | None, threshold: int | None) -> Status:
    if status == Status.UP and threshold is not None and total_ms is not None and total_ms > threshold:
        return Status.DEGRADED
    return Status(status)


def results_prune(*, now: datetime, batch_size: int = 10_000) -> int:
    """Delete raw results older than each plan's retention, in batches; rollups are kept."""
    deleted = 0
    for plan in Plan.objects.all():
        cutoff = now - timedelta(days=plan.retention_days)
        while True:
            ids = list(
                ProbeResult.objects.filter(healthcheck__organization__plan=plan, slot__lt=cutoff).values_list(
                    "id", flat=True
                )[:batch_size]
            )
            if not ids:
                break
            # Short transactions: pruning must never hold locks the recorder waits on.
            deleted += ProbeResult.objects.filter(id__in=ids).delete()[0]
    return deleted
