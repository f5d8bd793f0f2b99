"""Write tenancy and healthchecks; every function is keyword-only and owns its transaction."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import transaction

from monitors.errors import ConfigInvalid, ServiceError
from monitors.models import ApiKey, Healthcheck, HealthcheckTag, Membership, Organization, Plan, Region
from monitors.secrets import MASK, decrypt_headers, encrypt_headers, masked
from monitors.selectors import regions_allowed
from probes.config import ConfigError, config_to_api, parse_config
from probes.types import CheckType, Status

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
) -> Healthcheck:
    """Create a healthcheck within the organization's plan; it is due at once unless paused."""
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
        healthcheck = Healthcheck.objects.create(
            organization=organization,
            name=name,
            type=int(check_type),
            config=api_config,
            secret_headers=encrypt_headers(headers),
            interval_seconds=interval,
            paused=paused,
            status=Status.PAUSED if paused else Status.PENDING,
            status_changed_at=now,
            next_check_at=None if paused else now,
        )
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
    if "interval_seconds" in changes:
        healthcheck.interval_seconds = changes["interval_seconds"]
    with transaction.atomic():
        healthcheck.save()
        if regions is not None:
            healthcheck.regions.set(regions)
        if "tags" in changes:
            _set_tags(healthcheck, changes["tags"])
    if "paused" in changes and changes["paused"] != healthcheck.paused:
        fn = healthcheck_pause if changes["paused"] else healthcheck_resume
        healthcheck = fn(healthcheck=healthcheck, now=now)
    return healthcheck


def healthcheck_delete(*, healthcheck: Healthcheck) -> None:
    healthcheck.delete()


def healthcheck_pause(*, healthcheck: Healthcheck, now: datetime) -> Healthcheck:
    """Stop checking; the status reads paused until resumed."""
    with transaction.atomic():
        Healthcheck.objects.filter(pk=healthcheck.pk).update(
            paused=True, status=Status.PAUSED, status_changed_at=now, next_check_at=None, updated_at=now
        )
    healthcheck.refresh_from_db()
    return healthcheck


def healthcheck_resume(*, healthcheck: Healthcheck, now: datetime) -> Healthcheck:
    """Check again at once; the status is pending until the first result decides it."""
    with transaction.atomic():
        Healthcheck.objects.filter(pk=healthcheck.pk, paused=True).update(
            paused=False, status=Status.PENDING, status_changed_at=now, next_check_at=now, updated_at=now
        )
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
