"""The heartbeat check (type 7): a passive type, pinged by the customer's job, judged by its schedule.

Nothing probes it (``run`` is None): the job calls its ping URL, and the verdict comes from the
pings and the clock (:mod:`probes.heartbeats`). Its config is the schedule (a period in seconds,
or a cron expression in a time zone), the grace after each expected time, and optionally the
longest a /start → success run may take.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from probes.checks.form import FormField, Widget
from probes.checks.registry import CheckKind, register
from probes.config import ConfigError, config_fields, text_problem, whole_number
from probes.heartbeats import Schedule
from probes.types import Headers

CONFIG_KEYS = frozenset({"schedule", "grace", "maxRunSeconds"})
PERIOD_RANGE = (60, 366 * 86_400)
GRACE_RANGE = (60, 31 * 86_400)
MAX_RUN_RANGE = (1, 31 * 86_400)
DEFAULT_GRACE = 300
MAX_CRON = 200
MAX_TZ = 64


@dataclass(frozen=True, slots=True)
class HeartbeatConfig:
    """A heartbeat's schedule, grace and longest run; it watches no host and holds no secret."""

    schedule: Schedule
    grace: int = DEFAULT_GRACE
    max_run_seconds: int | None = None

    @property
    def target(self) -> str:
        return "heartbeat"

    @property
    def host(self) -> str:
        return ""

    @property
    def headers(self) -> Headers:
        return ()

    @property
    def timeout(self) -> float:
        # Nothing is run; the settle window reads a timeout, so the shared default.
        return 10.0


def parse_heartbeat_config(raw: object) -> HeartbeatConfig:
    """Return a HeartbeatConfig from ``{"schedule": {"period"} | {"cron", "tz"}, "grace", "maxRunSeconds"}``."""
    data, errors = config_fields(raw, CONFIG_KEYS)
    schedule = _schedule(data.get("schedule"), errors)
    grace = _seconds(data.get("grace", DEFAULT_GRACE), "grace", GRACE_RANGE, errors)
    max_run = data.get("maxRunSeconds")
    max_run_seconds = None if max_run is None else _seconds(max_run, "maxRunSeconds", MAX_RUN_RANGE, errors)
    if errors:
        raise ConfigError(errors)
    return HeartbeatConfig(schedule=schedule, grace=grace, max_run_seconds=max_run_seconds)


def _seconds(raw: object, key: str, bounds: tuple[int, int], errors: dict[str, str]) -> int:
    value = whole_number(raw, key, *bounds, errors, unit="seconds")
    return bounds[0] if value is None else value


def _schedule(raw: object, errors: dict[str, str]) -> Schedule:
    default = Schedule(period=86_400)
    if raw is None:
        errors["schedule"] = (
            'This field is required: {"period": seconds} or {"cron": "0 3 * * *", "tz": "UTC"}.'
        )
        return default
    if not isinstance(raw, dict):
        errors["schedule"] = 'Must be an object: {"period": seconds} or {"cron": "0 3 * * *", "tz": "UTC"}.'
        return default
    unknown = sorted(set(raw) - {"period", "cron", "tz"})
    if unknown:
        errors["schedule"] = f"Unknown field {', '.join(map(str, unknown))}; allowed: cron, period, tz."
        return default
    if ("period" in raw) == ("cron" in raw):
        errors["schedule"] = "Give either period (seconds) or cron (an expression), not both or neither."
        return default
    if "period" in raw:
        if "tz" in raw:
            errors["schedule.tz"] = "A time zone goes with a cron expression, not a period."
        period = _seconds(raw["period"], "schedule.period", PERIOD_RANGE, errors)
        return Schedule(period=period)
    tz = _zone(raw.get("tz", "UTC"), errors)
    cron = _cron(raw["cron"], tz, errors)
    return Schedule(cron=cron, tz=tz)


def _zone(raw: object, errors: dict[str, str]) -> str:
    if not isinstance(raw, str) or not raw.strip() or len(raw) > MAX_TZ or text_problem(raw):
        errors["schedule.tz"] = 'Must be an IANA time zone name, e.g. "Europe/Paris" or "UTC".'
        return "UTC"
    try:
        ZoneInfo(raw)
    except (ZoneInfoNotFoundError, ValueError):
        errors["schedule.tz"] = f'Unknown time zone {raw!r}; use an IANA name, e.g. "Europe/Paris" or "UTC".'
        return "UTC"
    return raw


def _cron(raw: object, tz: str, errors: dict[str, str]) -> str:
    if not isinstance(raw, str) or not raw.strip() or len(raw) > MAX_CRON or text_problem(raw):
        errors["schedule.cron"] = 'Must be a cron expression of five fields, e.g. "0 3 * * *".'
        return ""
    cron = " ".join(raw.split())
    start = datetime(2000, 1, 1, tzinfo=UTC).astimezone(ZoneInfo(tz))
    try:
        # An expression that parses may still never fire (February 30th): ask for its first time.
        next(iter(CronSim(cron, start)))
    except CronSimError as exc:
        errors["schedule.cron"] = f"Not a valid cron expression, or one that never fires ({exc})."
        return ""
    except (StopIteration, ValueError, OverflowError):
        errors["schedule.cron"] = "This cron expression never fires."
        return ""
    return cron


def heartbeat_config_to_api(config: HeartbeatConfig) -> dict[str, Any]:
    """Return the API shape of ``config`` (no ``headers``: a heartbeat sends no request)."""
    schedule = config.schedule
    shape: dict[str, Any] = (
        {"period": schedule.period}
        if schedule.period is not None
        else {"cron": schedule.cron, "tz": schedule.tz}
    )
    api: dict[str, Any] = {"schedule": shape, "grace": config.grace}
    if config.max_run_seconds is not None:
        api["maxRunSeconds"] = config.max_run_seconds
    return api


CONFIG_SCHEMA: dict[str, Any] = {
    "title": "Heartbeat config (type 7)",
    "type": "object",
    "additionalProperties": False,
    "required": ["schedule"],
    "properties": {
        "schedule": {
            "oneOf": [
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["period"],
                    "properties": {
                        "period": {"type": "integer", "minimum": PERIOD_RANGE[0], "maximum": PERIOD_RANGE[1]}
                    },
                },
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["cron"],
                    "properties": {
                        "cron": {"type": "string", "maxLength": MAX_CRON, "example": "0 3 * * *"},
                        "tz": {
                            "type": "string",
                            "maxLength": MAX_TZ,
                            "default": "UTC",
                            "example": "Europe/Paris",
                        },
                    },
                },
            ],
            "description": "When pings are expected: every period seconds, or at each cron time in tz.",
        },
        "grace": {
            "type": "integer",
            "minimum": GRACE_RANGE[0],
            "maximum": GRACE_RANGE[1],
            "default": DEFAULT_GRACE,
            "description": "Seconds after an expected time before a missing ping makes the check down.",
        },
        "maxRunSeconds": {
            "type": "integer",
            "minimum": MAX_RUN_RANGE[0],
            "maximum": MAX_RUN_RANGE[1],
            "description": "A /start → success run longer than this makes the check degraded.",
        },
    },
}

FORM = (
    FormField(
        "schedule",
        "heartbeat_schedule",
        "Schedule",
        Widget.JSON,
        placeholder='{"cron": "0 3 * * *", "tz": "Europe/Paris"}',
        required=True,
        help='{"period": 3600} or {"cron": "0 3 * * *", "tz": "Europe/Paris"}.',
    ),
    FormField("grace", "heartbeat_grace", "Grace (seconds)", Widget.INTEGER),
    FormField("maxRunSeconds", "heartbeat_max_run", "Longest run (seconds)", Widget.INTEGER),
)

HEARTBEAT = register(
    CheckKind(
        number=7,
        name="heartbeat",
        title="Heartbeat",
        config_type=HeartbeatConfig,
        parse=parse_heartbeat_config,
        to_api=heartbeat_config_to_api,
        schema=CONFIG_SCHEMA,
        run=None,
        form=FORM,
    )
)
