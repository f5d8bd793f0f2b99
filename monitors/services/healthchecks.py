"""Create, change, pause and resume healthchecks within their plan; keyword-only."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction

from monitors.errors import ConfigInvalid, ServiceError
from monitors.models import (
    Healthcheck,
    HealthcheckListing,
    HealthcheckTag,
    Heartbeat,
    Organization,
    OutboxBatch,
    Ping,
    Plan,
    Region,
    RegionState,
    StatusChange,
)
from monitors.secrets import MASK, decrypt_headers, encrypt_headers, masked
from monitors.selectors import regions_allowed
from monitors.services.audit import audit_record, healthcheck_snapshot
from monitors.services.heartbeats import heartbeat_resumed
from monitors.slots import first_slot_at_or_after, slot_offset_for
from probes import netguard
from probes.checks import CheckKind
from probes.config import ConfigError
from probes.connection import Origin, origin_of_uri
from probes.types import Status
from probes.urlkeys import key_in_url_words

DEFAULT_INTERVAL_SECONDS = 60


def healthcheck_create(
    *,
    organization: Organization,
    name: str,
    check_type: CheckKind[Any],
    config: Mapping[str, Any],
    now: datetime,
    interval_seconds: int | None = None,
    region_slugs: Iterable[str] | None = None,
    tags: Iterable[str] = (),
    paused: bool = False,
    rules: Mapping[str, Any] | None = None,
    first_run: bool = False,
) -> Healthcheck:
    """Create a healthcheck within the organization's plan; its first slot is within one interval.

    With ``first_run`` (what a customer's create asks: the API, the web app, the MCP server) it
    does not wait for that slot: a run of its own goes out now, in every region
    (:func:`_first_runs`). ``rules`` may hold recheck_count, recheck_delay_seconds, quorum and
    degraded_threshold_ms.
    """
    plan = organization.plan
    interval = (
        interval_seconds
        if interval_seconds is not None
        else max(DEFAULT_INTERVAL_SECONDS, plan.min_interval_seconds, check_type.min_interval_seconds)
    )
    _check_interval(plan, interval, check_type)
    # A passive type has no regions: its verdict is its schedule's (probes.heartbeats).
    regions = _regions_for(organization, region_slugs) if check_type.active else []
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
            type=check_type.number,
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
        if not check_type.active:
            # Its ping id and the judge's state (monitors.services.heartbeats reads them).
            Heartbeat.objects.create(healthcheck=healthcheck)
        _set_tags(healthcheck, tags)
        if first_run and not paused:
            _first_runs(healthcheck, regions, now=now)
        _audit(healthcheck, "healthcheck.created", after=healthcheck_snapshot(healthcheck), now=now)
    return healthcheck


def healthcheck_create_from(
    *, organization: Organization, changes: Mapping[str, Any], now: datetime
) -> Healthcheck:
    """Create a healthcheck from a serializer's ``to_service_changes()``, as a customer's create does (first run now).

    The API's create and the web app's form both call this, so what a body may set is read once.
    """
    return healthcheck_create(
        organization=organization,
        name=changes["name"],
        check_type=changes["check_type"],
        config=changes["config"],
        interval_seconds=changes.get("interval_seconds"),
        region_slugs=changes.get("region_slugs"),
        tags=changes.get("tags", ()),
        paused=changes.get("paused", False),
        rules={field: changes[field] for field in RULE_FIELDS if field in changes},
        now=now,
        first_run=True,
    )


def _first_runs(healthcheck: Healthcheck, regions: Iterable[Region], *, now: datetime) -> None:
    """Queue the new check's first run in each of its enabled regions, due now, in the create's transaction.

    The rows go to the dispatcher's outbox (monitors.worker.outbox, written here as the model: the
    worker imports the services), so the next tick, a broker's or the embedded worker's, hands
    them to the regions' queues: the first result arrives within seconds, not after an interval,
    and a create that rolls back sends nothing. The run is a slot of its own (now, attempt 0),
    as a manual run is; recording and the verdict treat it like any other slot.
    """
    item = [healthcheck.id, now.isoformat(), 0]
    OutboxBatch.objects.bulk_create(
        [
            OutboxBatch(region=region.slug, items=[item], created_at=now, publish_after=now)
            for region in regions
            if region.enabled
        ]
    )


@dataclass(frozen=True, slots=True)
class Notice:
    """Tell the caller of something a write did that the request did not ask for in so many words."""

    field: str
    message: str


@dataclass(frozen=True, slots=True)
class HealthcheckUpdated:
    healthcheck: Healthcheck
    notices: tuple[Notice, ...] = ()


def healthcheck_update(
    *, healthcheck: Healthcheck, changes: Mapping[str, Any], partial: bool, now: datetime
) -> HealthcheckUpdated:
    """Apply API changes; omitted headers and headers sent back masked keep their stored values.

    ``changes`` may hold name, check_type, config, interval_seconds, region_slugs, tags, paused.
    A partial update merges ``config`` key by key into the stored config.

    Stored header values stay with the origin (scheme, host, port) they were given for: a config
    whose URI moves to another origin drops them unless the same request sends ``headers``
    (and then a value sent back masked is refused, as it would carry the old secret along);
    the answer's notices say when they were dropped.
    """
    notices: list[Notice] = []
    before = healthcheck_snapshot(healthcheck)
    organization = healthcheck.organization
    check_type = changes.get("check_type", healthcheck.check_type)
    type_changed = check_type != healthcheck.check_type
    if type_changed and "config" not in changes:
        raise ServiceError("config", "Send the whole config of the new type when changing the type.")
    if "interval_seconds" in changes or type_changed:
        _check_interval(
            organization.plan, changes.get("interval_seconds", healthcheck.interval_seconds), check_type
        )
    regions = _regions_for(organization, changes["region_slugs"]) if "region_slugs" in changes else None
    # Active to passive (a heartbeat) or back: the old verdict came from another kind of evidence.
    passive_changed = check_type.active != healthcheck.check_type.active
    if passive_changed and not check_type.active:
        regions = []  # a passive type has no regions, as at create
        healthcheck.quorum = None
    elif passive_changed and regions is None:
        regions = _regions_for(organization, None)
    if "config" in changes:
        base = healthcheck.config if partial and not type_changed else None
        stored_headers = decrypt_headers(healthcheck.secret_headers)
        api_config, headers = _prepared_config(check_type, changes["config"], stored_headers, merge_into=base)
        old_uri, new_uri = healthcheck.config.get("uri"), api_config.get("uri")
        if stored_headers and not _same_origin(old_uri, new_uri):
            sent = changes["config"].get("headers")
            if sent is None:
                api_config, headers = _prepared_config(check_type, changes["config"], {}, merge_into=base)
                notices.append(
                    Notice(
                        "config.headers",
                        f"The URI moved to another origin ({_origin_words(old_uri)} → {_origin_words(new_uri)}), "
                        f"so the stored values of {', '.join(sorted(stored_headers))} were removed: they were "
                        "given for the old origin. Send the headers again if the new one needs them.",
                    )
                )
            elif isinstance(sent, Mapping) and any(value == MASK for value in sent.values()):
                raise ConfigInvalid(
                    {
                        f"config.headers.{name}": (
                            "Send the value itself: the URI moves to another origin, and a stored value "
                            "is never sent to an origin it was not given for."
                        )
                        for name, value in sent.items()
                        if value == MASK
                    }
                )
        healthcheck.config = api_config
        healthcheck.secret_headers = encrypt_headers(headers)
    healthcheck.type = check_type.number
    if "name" in changes:
        healthcheck.name = changes["name"]
    for field in RULE_FIELDS:
        if field in changes:
            setattr(healthcheck, field, changes[field])
    region_count = len(regions) if regions is not None else healthcheck.regions.count()
    _check_quorum(healthcheck.quorum, region_count)
    if "interval_seconds" in changes and changes["interval_seconds"] != healthcheck.interval_seconds:
        healthcheck.interval_seconds = changes["interval_seconds"]
        _schedule(healthcheck, now=now)
    elif passive_changed:
        _schedule(healthcheck, now=now)  # a heartbeat has no slot; a check that was one gets its first
    with transaction.atomic():
        if passive_changed:
            _type_passive_changed(healthcheck, now=now)
        healthcheck.save()
        if regions is not None:
            healthcheck.regions.set(regions)
            # A region no longer checked must not vote in the rules.
            RegionState.objects.filter(healthcheck=healthcheck).exclude(region__in=regions).delete()
        if "tags" in changes:
            _set_tags(healthcheck, changes["tags"])
        if type_changed:
            # Only an MCP check has a listing; left behind, its pricing page would still be fetched.
            HealthcheckListing.objects.filter(healthcheck=healthcheck).delete()
        after = healthcheck_snapshot(healthcheck)
        after["paused"] = before["paused"]  # a pause or resume below is an event of its own
        _audit(healthcheck, "healthcheck.updated", before=before, after=after, now=now)
    if "paused" in changes and changes["paused"] != healthcheck.paused:
        fn = healthcheck_pause if changes["paused"] else healthcheck_resume
        healthcheck = fn(healthcheck=healthcheck, now=now)
    return HealthcheckUpdated(healthcheck, tuple(notices))


def _type_passive_changed(healthcheck: Healthcheck, *, now: datetime) -> None:
    """Give a check that became a heartbeat its Heartbeat row, take it from one that stopped being one.

    The status starts again from pending (recorded, like a resume): neither the results nor the
    pings of the old type say anything about the new one. Called in the update's transaction,
    before the healthcheck is saved with its new type.
    """
    if healthcheck.check_type.active:
        Heartbeat.objects.filter(healthcheck=healthcheck).delete()
        Ping.objects.filter(healthcheck=healthcheck).delete()
    else:
        Heartbeat.objects.get_or_create(healthcheck=healthcheck)
    if healthcheck.status not in (Status.PAUSED, Status.PENDING):
        _record_status_change(healthcheck, to=Status.PENDING, reason="Type changed", now=now)
        healthcheck.status = Status.PENDING
        healthcheck.status_changed_at = now
        healthcheck.cause_kind, healthcheck.cause_reason, healthcheck.cause_since = "", "", None


def _same_origin(a: object, b: object) -> bool:
    """Return whether two URIs share scheme, host and port (the port defaulted by scheme).

    Two configs without a URI (a check type that has none) share theirs; a URI that doesn't
    parse shares nothing. Anything unsure counts as another origin, which only costs the
    customer sending a header again, never a secret sent where it was not given for.
    """
    if a is None and b is None:
        return True
    origin = _origin(a)
    return origin is not None and origin == _origin(b)


def _origin(uri: object) -> Origin | None:
    return origin_of_uri(uri) if isinstance(uri, str) else None


def _origin_words(uri: object) -> str:
    origin = _origin(uri)
    return "none" if origin is None else f"{origin[0]}://{origin[1]}:{origin[2]}"


def healthcheck_trial_config(
    *, check_type: CheckKind[Any], config: Mapping[str, Any], healthcheck: Healthcheck | None = None
) -> Any:
    """Return the runnable config a save would store, for a one-off run before saving ("Test now").

    The same validation and header rules as a write: a value sent back masked stands for the
    stored value of ``healthcheck``'s header of that name, and only while the URI keeps the
    origin the value was given for. Raises ConfigInvalid as a create or an update would; writes nothing.
    """
    stored: Mapping[str, str] = {}
    if healthcheck is not None and _same_origin(healthcheck.config.get("uri"), config.get("uri")):
        stored = decrypt_headers(healthcheck.secret_headers)
    api_config, headers = _prepared_config(check_type, config, stored)
    return check_type.parse({**api_config, "headers": headers} if "headers" in api_config else api_config)


def healthcheck_delete(*, healthcheck: Healthcheck) -> None:
    """Delete a healthcheck with its results; the audit log keeps what it was."""
    with transaction.atomic():
        before = healthcheck_snapshot(healthcheck)
        _audit(healthcheck, "healthcheck.deleted", before=before)
        healthcheck.delete()


def _audit(
    healthcheck: Healthcheck,
    action: str,
    *,
    before: Mapping[str, Any] | None = None,
    after: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> None:
    audit_record(
        organization=healthcheck.organization_id,
        action=action,
        target_type="healthcheck",
        target_id=healthcheck.public_id,
        target_name=healthcheck.name,
        before=before,
        after=after,
        now=now,
    )


def healthcheck_pause(*, healthcheck: Healthcheck, now: datetime) -> Healthcheck:
    """Stop checking; the status reads paused until resumed, and the change is recorded."""
    with transaction.atomic():
        locked = Healthcheck.objects.select_for_update().get(pk=healthcheck.pk)
        if locked.status != Status.PAUSED:
            _record_status_change(locked, to=Status.PAUSED, reason="Paused", now=now)
        Healthcheck.objects.filter(pk=healthcheck.pk).update(
            paused=True, status=Status.PAUSED, status_changed_at=now, next_check_at=None, updated_at=now
        )
        if not locked.paused:
            _audit(locked, "healthcheck.paused", before={"paused": False}, after={"paused": True}, now=now)
    healthcheck.refresh_from_db()
    return healthcheck


def healthcheck_resume(*, healthcheck: Healthcheck, now: datetime) -> Healthcheck:
    """Check again from the next slot; the status is pending until results decide it."""
    healthcheck.paused = False
    _schedule(healthcheck, now=now)
    with transaction.atomic():
        updated = Healthcheck.objects.filter(pk=healthcheck.pk, paused=True).update(
            paused=False,
            status=Status.PENDING,
            status_changed_at=now,
            next_check_at=healthcheck.next_check_at,
            slot_offset=healthcheck.slot_offset,
            updated_at=now,
        )
        if updated:
            # Old region verdicts are from before the pause: start from pending everywhere.
            RegionState.objects.filter(healthcheck=healthcheck).delete()
            _record_status_change(healthcheck, to=Status.PENDING, reason="Resumed", now=now)
            if not healthcheck.check_type.active:
                heartbeat_resumed(healthcheck=healthcheck, now=now)
            _audit(
                healthcheck, "healthcheck.resumed", before={"paused": True}, after={"paused": False}, now=now
            )
    healthcheck.refresh_from_db()
    return healthcheck


RULE_FIELDS = ("recheck_count", "recheck_delay_seconds", "quorum", "degraded_threshold_ms")


def _record_status_change(healthcheck: Healthcheck, *, to: Status, reason: str, now: datetime) -> None:
    """Store a status change that an operator caused (pause, resume) in the same outbox as the rules'."""
    StatusChange.objects.create(
        healthcheck=healthcheck, at=now, from_status=healthcheck.status, to_status=to, reason=reason
    )


def _schedule(healthcheck: Healthcheck, *, now: datetime) -> None:
    """Set the healthcheck's offset and its first slot, at most one interval from now."""
    healthcheck.slot_offset = slot_offset_for(healthcheck.public_id, healthcheck.interval_seconds)
    # A passive type (a heartbeat) is never claimed: no slot, so dispatch never sees it.
    if healthcheck.paused or not healthcheck.check_type.active:
        healthcheck.next_check_at = None
        return
    healthcheck.next_check_at = first_slot_at_or_after(
        now, interval_seconds=healthcheck.interval_seconds, offset=healthcheck.slot_offset
    )


def _check_quorum(quorum: int | None, region_count: int) -> None:
    if quorum is not None and not 1 <= quorum <= region_count:
        raise ServiceError("quorum", f"Must be from 1 to the number of regions ({region_count}).")


def _check_interval(plan: Plan, interval: int, check_type: CheckKind[Any]) -> None:
    if interval < plan.min_interval_seconds:
        raise ServiceError(
            "interval", f"Your plan ({plan.name}) checks at most every {plan.min_interval_seconds} seconds."
        )
    if interval < check_type.min_interval_seconds:
        raise ServiceError(
            "interval",
            f"{check_type.title}s run at most every {check_type.min_interval_seconds} seconds: "
            "their targets ask for few lookups.",
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
    check_type: CheckKind[Any],
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
    elif "headers" in check_type.schema.get("properties", {}):
        data["headers"] = dict(stored_headers)
    try:
        parsed = check_type.parse(data)
    except ConfigError as exc:
        raise ConfigInvalid({f"config.{key}": message for key, message in exc.errors.items()}) from None
    # Refused where a URL is written, not in the parser: a stored check saved before keeps running.
    uri = getattr(parsed, "uri", None)
    pasted_key = key_in_url_words(uri) if isinstance(uri, str) else None
    if pasted_key is not None:
        raise ConfigInvalid({"config.uri": pasted_key})
    api_config = check_type.to_api(parsed)
    _refuse_private_literals(check_type, api_config)
    if "headers" not in api_config:
        return api_config, {}
    headers = api_config.pop("headers")
    api_config["headers"] = masked(headers)
    return api_config, headers


def _refuse_private_literals(check_type: CheckKind[Any], api_config: Mapping[str, Any]) -> None:
    """Refuse an IP literal that is not public in a field the check reaches (a host, a nameserver).

    A name is judged when it is resolved, on every run (its answer may change); a literal can be
    judged now, so a ping of 10.0.0.1 is a 400 naming the field rather than a check that is down
    forever. ``UPTIMY_ALLOW_PRIVATE_TARGETS`` allows them, as it allows private targets at run time.
    """
    if settings.UPTIMY_ALLOW_PRIVATE_TARGETS:
        return
    for key in check_type.address_fields:
        value = api_config.get(key)
        address = literal_address(value) if isinstance(value, str) else None
        why = netguard.address_problem(address) if address is not None else None
        if why is not None:
            raise ConfigInvalid(
                {f"config.{key}": f"{address} is {why}; Uptimy only checks public addresses."}
            )


def literal_address(value: str) -> netguard.IPAddress | None:
    """Return the IP literal ``value`` names ("192.0.2.1", "2001:db8::1", "192.0.2.1:53", "[::1]:53"), else None."""
    address = netguard.parse_ip(value.strip())
    if address is not None:
        return address
    host, colon, port = value.strip().rpartition(":")
    if colon and port.isdigit():
        return netguard.parse_ip(host.removeprefix("[").removesuffix("]"))
    return None


def _unmasked_headers(incoming: object, stored: Mapping[str, str]) -> object:
    """Replace each masked value with the stored value of the same (case-insensitive) name."""
    if not isinstance(incoming, Mapping):
        return incoming  # the check type's parser reports the shape error
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
