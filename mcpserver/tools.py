"""What each tool of Uptimy's MCP server does, for one grant: plain values in, plain values out.

Every tool goes through monitors' services and selectors and the REST API's serializers, the
same ones ``/api/v1/`` uses, so a refusal reads the same here as there. The SDK's side (names,
schemas, annotations) is :mod:`mcpserver.server`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from rest_framework import serializers

from alerts.api.serializers import IncidentSerializer
from alerts.selectors import incidents_of
from mcpserver.auth import Grant
from monitors import selectors, services
from monitors.api.serializers import HealthcheckSerializer, ProbeResultSerializer, check_run_data
from monitors.errors import ConfigInvalid, ServiceError
from monitors.models import Healthcheck, Organization
from monitors.worker.manual import run_once
from probes.checks import check_kind
from probes.config import ConfigError
from probes.netguard import parse_ip, refusal
from probes.types import Status
from probes.urlkeys import key_in_url, without_key

# One call adds at most this many: a list this long is a script's work (uptimyctl), not a chat's.
MAX_MONITORS_PER_CALL = 100
MONITOR_FIELDS = ("url", "name", "requiredTools", "minTools", "regions", "interval")
MAX_LISTED = 500
MAX_INCIDENTS = 100
LOCALHOST_NAMES = ("localhost",)


class Refused(Exception):
    """Refuse a tool call for a reason the caller can fix; the message says what to do."""


def organization_of(grant: Grant) -> Organization:
    return Organization.objects.select_related("plan").get(pk=grant.organization_id)


def require_write(grant: Grant) -> None:
    if not grant.can_write:
        raise Refused(
            "This credential is read-only: it can list and read monitors and run one-off checks, "
            "not add, pause or resume them. Use a read-write API key (or sign in with the write scope)."
        )


# --- add_monitors --------------------------------------------------------------------------------


def add_monitors(grant: Grant, entries: Sequence[Mapping[str, Any]], *, base_url: str) -> dict[str, Any]:
    """Add MCP monitors, all or none: every entry is checked before the first is created."""
    require_write(grant)
    organization = organization_of(grant)
    if not entries:
        raise Refused("Give at least one monitor: monitors=[{url: 'https://mcp.example.com/mcp'}].")
    if len(entries) > MAX_MONITORS_PER_CALL:
        raise Refused(
            f"add_monitors adds at most {MAX_MONITORS_PER_CALL} monitors a call; this call has "
            f"{len(entries):,}. Nothing was added: send them in smaller lists, or use uptimyctl apply for many."
        )
    problems: list[str] = []
    bodies: list[dict[str, Any]] = []
    for index, entry in enumerate(entries):
        where = f"monitors[{index}]"
        entry_problems = list(_entry_problems(organization, entry, where=where, base_url=base_url))
        if entry_problems:
            problems.extend(entry_problems)
            continue
        body, body_problems = _validated(entry, where=where)
        problems.extend(body_problems)
        if body is not None:
            bodies.append(body)
    if problems:
        raise Refused("Nothing was added. " + " ".join(problems))
    now = timezone.now()
    created: list[Healthcheck] = []
    # One transaction: a refusal only a write finds (the plan's count, a region) undoes the earlier ones.
    with transaction.atomic():
        for index, changes in enumerate(bodies):
            try:
                created.append(_create(organization, changes, now=now))
            except ServiceError as exc:
                raise Refused(f"Nothing was added. monitors[{index}]: {_service_words(exc)}") from None
    shown = selectors.healthchecks_of(organization=organization).filter(pk__in=[hc.pk for hc in created])
    by_pk = {hc.pk: hc for hc in shown}
    return {
        "added": [_summary(by_pk[hc.pk], base_url=base_url) for hc in created],
        "note": "Keys are never added here: a server that needs one gets it in the app, under the "
        "monitor's Advanced settings (settings_url).",
    }


def _entry_problems(
    organization: Organization, entry: Mapping[str, Any], *, where: str, base_url: str
) -> Iterator[str]:
    """Yield what is wrong with an entry before its fields are validated: keys, unknown fields."""
    if not isinstance(entry, Mapping):
        yield f"{where}: must be an object with a url."
        return
    url = entry.get("url")
    if "headers" in entry:
        yield (
            f"{where}: headers are not taken here, so keys never pass through a chat. Add the monitor "
            f"without them, then add the key in the app: {_settings_link(organization, url, base_url)}"
        )
    unknown = sorted(str(name) for name in entry if name not in MONITOR_FIELDS and name != "headers")
    if unknown:
        yield f"{where}: unknown field {', '.join(unknown)}; the fields are: {', '.join(MONITOR_FIELDS)}."
    if isinstance(url, str):
        part = key_in_url(url)
        if part is not None:
            yield (
                f"{where}.url: it carries a key ({part}), and keys never pass through a chat. Add the "
                f"monitor with the URL without it ({without_key(url)}), then add the key as a request "
                f"header in the app: {_settings_link(organization, url, base_url)}"
            )


def _settings_link(organization: Organization, url: object, base_url: str) -> str:
    """Return the web app page where the key goes: the existing monitor's Advanced settings, else a new one's."""
    if isinstance(url, str):
        keyless = without_key(url)
        existing = (
            Healthcheck.objects.filter(organization=organization, config__uri__in=[keyless, url])
            .order_by("created_at")
            .first()
        )
        if existing is not None:
            path = reverse("web:healthcheck-edit", kwargs={"public_id": existing.public_id})
            return f"{base_url}{path} (Advanced settings, Request headers)."
    path = reverse("web:healthcheck-new")
    return (
        f"{base_url}{path}?type=mcp (Advanced settings, Request headers), or the monitor's own "
        "Advanced settings once added (its settings_url)."
    )


def _validated(entry: Mapping[str, Any], *, where: str) -> tuple[dict[str, Any] | None, list[str]]:
    """Return an entry as the services take it, validated as POST /api/v1/healthchecks/ validates, or its problems."""
    url = entry.get("url")
    config: dict[str, Any] = {"uri": url}
    for name in ("requiredTools", "minTools"):
        if entry.get(name) is not None:
            config[name] = entry[name]
    body: dict[str, Any] = {"name": entry.get("name") or _default_name(url), "type": "mcp", "config": config}
    for name in ("regions", "interval"):
        if entry.get(name) is not None:
            body[name] = entry[name]
    serializer = HealthcheckSerializer(data=body)
    if not serializer.is_valid():
        return None, [f"{where}.{path}: {message}" for path, message in _flatten(serializer.errors)]
    changes = serializer.to_service_changes()
    try:
        check_kind("mcp").parse(config)
    except ConfigError as exc:  # the check type's own messages, keyed by field, as the API's config.<field>
        return None, [f"{where}.config.{key}: {message}" for key, message in exc.errors.items()]
    private = _private_target(str(url))
    if private is not None:
        return None, [f"{where}.url: {private}."]
    return changes, []


def _private_target(url: str) -> str | None:
    """Return the address guard's refusal of a URL whose host is a private address literal (or localhost).

    A name is resolved when the check runs, where the same guard refuses it (blocked_address):
    resolving every name here would refuse servers whose DNS is down right now.
    """
    if settings.UPTIMY_ALLOW_PRIVATE_TARGETS:
        return None
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host in LOCALHOST_NAMES or host.endswith(".localhost"):
        return refusal(host, [parse_ip("127.0.0.1")])  # type: ignore[list-item]  # a literal: never None
    address = parse_ip(host)
    return refusal(host, [address]) if address is not None else None


def _default_name(url: object) -> str:
    if not isinstance(url, str):
        return "MCP server"
    parts = urlsplit(url)
    return f"{parts.hostname or ''}{parts.path}".rstrip("/")[:200] or url[:200]


def _create(organization: Organization, changes: Mapping[str, Any], *, now: Any) -> Healthcheck:
    # An entry sets no tags, pause or rules (``_validated``): the API's create with its defaults.
    return services.healthcheck_create_from(organization=organization, changes=changes, now=now)


def _service_words(exc: ServiceError) -> str:
    if isinstance(exc, ConfigInvalid):
        return " ".join(f"{key}: {message}" for key, message in exc.errors.items())
    return f"{exc.field}: {exc.message}" if exc.field != "non_field_errors" else exc.message


def _flatten(errors: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """Yield (field path, message) of DRF's nested errors, as the API's 400 body names them."""
    if isinstance(errors, Mapping):
        for key, inner in errors.items():
            name = "" if key == "non_field_errors" else str(key)
            yield from _flatten(inner, f"{prefix}.{name}" if prefix and name else prefix or name)
    elif isinstance(errors, list) and all(isinstance(item, str) for item in errors):
        yield prefix, " ".join(str(item) for item in errors)
    elif isinstance(errors, list):
        for index, inner in enumerate(errors):
            yield from _flatten(inner, f"{prefix}[{index}]")
    else:
        yield prefix, str(errors)


# --- reading --------------------------------------------------------------------------------------


def list_monitors(grant: Grant, *, status: str | None, limit: int, base_url: str) -> dict[str, Any]:
    """List the organization's monitors, newest first: a line each with status and URL."""
    organization = organization_of(grant)
    queryset = selectors.healthchecks_of(organization=organization).order_by("-created_at", "-id")
    if status:
        statuses = [known.value for known in Status]
        if status not in statuses:
            raise Refused(f"status must be one of {', '.join(statuses)}; not {status[:50]!r}.")
        queryset = queryset.filter(status=status)
    limit = max(1, min(limit, MAX_LISTED))
    total = queryset.count()
    return {
        "total": total,
        "shown": min(total, limit),
        "monitors": [_summary(hc, base_url=base_url) for hc in queryset[:limit]],
    }


def get_monitor(grant: Grant, monitor: str, *, base_url: str) -> dict[str, Any]:
    """Return one monitor: its settings and status as the API shows them, and each region's newest result."""
    healthcheck = _find(grant, monitor)
    context = {
        "maintenance": selectors.MaintenanceNow(organization=healthcheck.organization, at=timezone.now()),
        "may_change": grant.can_write,
    }
    shown = dict(HealthcheckSerializer(healthcheck, context=context).data)
    shown["regions_now"] = [
        {
            "region": region.region,
            "status": region.status,
            "since": serializers.DateTimeField().to_representation(region.since) if region.since else None,
            "latest": (
                {**ProbeResultSerializer(region.latest).data, "tools": region.tools}
                if region.latest is not None
                else None
            ),
        }
        for region in selectors.regions_now(healthcheck=healthcheck)
    ]
    shown["page_url"] = _page_url(healthcheck, base_url)
    shown["settings_url"] = _settings_url(healthcheck, base_url)
    return shown


def get_incidents(grant: Grant, *, monitor: str | None, open_only: bool, limit: int) -> dict[str, Any]:
    """Return the organization's incidents, newest first, with their timelines."""
    organization = organization_of(grant)
    queryset = incidents_of(organization=organization).order_by("-opened_at", "-id")
    if monitor:
        queryset = queryset.filter(healthcheck=_find(grant, monitor))
    if open_only:
        queryset = queryset.filter(resolved_at__isnull=True)
    limit = max(1, min(limit, MAX_INCIDENTS))
    total = queryset.count()
    return {
        "total": total,
        "incidents": [dict(IncidentSerializer(incident).data) for incident in queryset[:limit]],
    }


# --- pausing --------------------------------------------------------------------------------------


def pause_monitor(grant: Grant, monitor: str, *, base_url: str) -> dict[str, Any]:
    require_write(grant)
    healthcheck = services.healthcheck_pause(healthcheck=_find(grant, monitor), now=timezone.now())
    return _summary(healthcheck, base_url=base_url)


def resume_monitor(grant: Grant, monitor: str, *, base_url: str) -> dict[str, Any]:
    require_write(grant)
    healthcheck = services.healthcheck_resume(healthcheck=_find(grant, monitor), now=timezone.now())
    return _summary(healthcheck, base_url=base_url)


# --- a one-off check ------------------------------------------------------------------------------


def run_check(
    grant: Grant,
    *,
    url: str,
    required_tools: Sequence[str] | None,
    min_tools: int | None,
    timeout: float | None,
) -> dict[str, Any]:
    """Run one MCP check of ``url`` from this server, as POST /api/v1/checks/run/ does; nothing is stored."""
    organization_of(grant)  # the credential's organization still exists
    config: dict[str, Any] = {"uri": url}
    if required_tools is not None:
        config["requiredTools"] = list(required_tools)
    if min_tools is not None:
        config["minTools"] = min_tools
    if timeout is not None:
        config["timeout"] = timeout
    try:
        outcome, checked_at = run_once(check_type=check_kind("mcp"), config=config)
    except ConfigInvalid as invalid:
        raise Refused(" ".join(f"{key}: {message}" for key, message in invalid.errors.items())) from None
    return check_run_data(outcome, checked_at=checked_at)


# --- shared -----------------------------------------------------------------------------------------


def _find(grant: Grant, monitor: str) -> Healthcheck:
    """Return the organization's monitor named by id or by exact name; another organization's is not found."""
    queryset = selectors.healthchecks_of(organization=organization_of(grant))
    text = (monitor or "").strip()
    try:
        return queryset.get(public_id=uuid.UUID(text))
    except (ValueError, Healthcheck.DoesNotExist):
        pass
    named = list(queryset.filter(name=text)[:2])
    if len(named) == 1:
        return named[0]
    if named:
        raise Refused(f"More than one monitor is named {text!r}; give its id (list_monitors shows ids).")
    raise Refused(f"No monitor {text!r} in this organization; list_monitors shows their ids and names.")


def _summary(healthcheck: Healthcheck, *, base_url: str) -> dict[str, Any]:
    return {
        "id": str(healthcheck.public_id),
        "name": healthcheck.name,
        "type": HealthcheckSerializer().get_type_name(healthcheck),
        "url": healthcheck.config.get("uri"),  # http and mcp only, as before `target`
        "target": selectors.healthcheck_target(healthcheck=healthcheck),
        "status": healthcheck.status,
        "status_changed_at": serializers.DateTimeField().to_representation(healthcheck.status_changed_at)
        if healthcheck.status_changed_at
        else None,
        "paused": healthcheck.paused,
        "reason": healthcheck.cause_reason or None,
        "page_url": _page_url(healthcheck, base_url),
        "settings_url": _settings_url(healthcheck, base_url),
    }


def _page_url(healthcheck: Healthcheck, base_url: str) -> str:
    return base_url + reverse("web:healthcheck", kwargs={"public_id": healthcheck.public_id})


def _settings_url(healthcheck: Healthcheck, base_url: str) -> str:
    return base_url + reverse("web:healthcheck-edit", kwargs={"public_id": healthcheck.public_id})
