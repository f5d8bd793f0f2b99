"""Send alerts to PagerDuty through the Events API v2: trigger, acknowledge and resolve one incident.

Every event of one Uptimy incident carries the incident's public id as ``dedup_key``, so
PagerDuty keeps one incident of its own for it: a reminder or a retried trigger adds to it, an
acknowledgement or a resolve closes it. The storm guard's digests are for text channels: PagerDuty
gets each incident's own events, storm or not (alerts.services.notifications). Should a digest
reach it all the same, each of its incidents gets the event it stands for (an opening triggers,
a recovery resolves; one request each, on one connection: a retried digest dedups). A tool-list change is not an
incident: it goes to the Change Events endpoint beside the events one. A channel test triggers
and at once resolves an event of its own, so it leaves no open incident behind.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx

from alerts.channels import render
from alerts.channels.base import (
    MASK,
    Alert,
    Attempt,
    ChannelConfigError,
    ChannelKind,
    EventType,
    Notice,
    register,
    require_fields,
    string_field,
)
from alerts.channels.http import Answer, Request, send_requests
from alerts.channels.webhook import parse_url

DEFAULT_EVENTS_URL = "https://events.pagerduty.com/v2/enqueue"
SUMMARY_LIMIT = 1024
_ROUTING_KEY = re.compile(r"[A-Za-z0-9]{20,64}")
_FIELDS = frozenset({"routing_key", "events_url"})
_SEVERITIES = {"critical": "critical", "warning": "warning"}
_ACTIONS = {
    EventType.INCIDENT_OPENED: "trigger",
    EventType.INCIDENT_ESCALATED: "trigger",
    EventType.INCIDENT_REMINDER: "trigger",
    # A trigger with the incident's dedup_key updates the open PagerDuty incident's summary.
    EventType.INCIDENT_CAUSE_CHANGED: "trigger",
    EventType.INCIDENT_UNACKNOWLEDGED: "trigger",
    EventType.INCIDENT_ACKNOWLEDGED: "acknowledge",
    EventType.INCIDENT_RESOLVED: "resolve",
}


@dataclass(frozen=True)
class PagerDutyConfig:
    """The integration's routing key (the secret) and the Events API URL (EU or the US default)."""

    routing_key: str
    events_url: str = DEFAULT_EVENTS_URL


def parse(raw: Mapping[str, Any]) -> PagerDutyConfig:
    """Return the PagerDuty config; every problem is a ChannelConfigError naming its field."""
    require_fields(raw, allowed=_FIELDS, kind="pagerduty")
    key = string_field(raw, "routing_key", limit=64)
    if not _ROUTING_KEY.fullmatch(key):
        raise ChannelConfigError(
            "config.routing_key", "must be the integration's routing key: 20 to 64 letters and digits"
        )
    events_url = parse_url(raw, "events_url") if raw.get("events_url") else DEFAULT_EVENTS_URL
    return PagerDutyConfig(routing_key=key, events_url=events_url)


def dump(config: PagerDutyConfig) -> dict[str, Any]:
    return {"routing_key": config.routing_key, "events_url": config.events_url}


def masked(config: PagerDutyConfig) -> dict[str, Any]:
    return {"routing_key": MASK, "events_url": config.events_url}


def change_url(events_url: str) -> str:
    """Return the Change Events URL beside an Events API URL (``/v2/enqueue`` → ``/v2/change/enqueue``)."""
    return str(httpx.URL(events_url).join("change/enqueue"))


def _severity(notice: Notice) -> str:
    severity = notice.incident.severity if notice.incident else ""
    return _SEVERITIES.get(severity, "error")


def _links(notice: Notice) -> list[dict[str, str]]:
    links = []
    if notice.healthcheck.link:
        links.append({"href": notice.healthcheck.link, "text": "Healthcheck in Uptimy"})
    if notice.acknowledge_link:
        links.append({"href": notice.acknowledge_link, "text": "Acknowledge in Uptimy"})
    return links


def trigger_event(config: PagerDutyConfig, alert: Alert, notice: Notice, dedup_key: str) -> dict[str, Any]:
    """Return a trigger event for one notice: summary, source, severity and the alert's facts."""
    # A digest's incidents are each triggered as the event they stand for.
    digest = alert.event_type is EventType.INCIDENTS_DIGEST
    event_type = render.digest_event(notice) if digest else alert.event_type
    single = Alert(event_type, alert.event_id, alert.occurred_at, alert.organization, (notice,))
    cause = notice.cause
    return {
        "routing_key": config.routing_key,
        "event_action": "trigger",
        "dedup_key": dedup_key,
        "payload": {
            "summary": render.flat(render.headline(single), SUMMARY_LIMIT),
            "source": render.flat(notice.healthcheck.name, 255) or notice.healthcheck.id,
            "severity": _severity(notice),
            "timestamp": render.iso(alert.occurred_at),
            "component": render.flat(notice.healthcheck.name, 255),
            "group": render.flat(alert.organization, 255),
            "class": cause.kind if cause else "",
            "custom_details": render.notice_data(notice),
        },
        "links": _links(notice),
        "client": "Uptimy",
        "client_url": notice.healthcheck.link,
    }


def _incident_event(config: PagerDutyConfig, alert: Alert, notice: Notice, action: str) -> dict[str, Any]:
    """Return the event of ``action`` on the notice's incident (its public id is the dedup_key)."""
    assert notice.incident is not None
    dedup_key = notice.incident.id
    if action == "trigger":
        return trigger_event(config, alert, notice, dedup_key)
    return {"routing_key": config.routing_key, "event_action": action, "dedup_key": dedup_key}


def requests_for(config: PagerDutyConfig, alert: Alert) -> list[Request]:
    """Return the Events API requests that deliver ``alert``, in order."""
    kind = alert.event_type
    events: list[tuple[str, dict[str, Any]]] = []
    if kind is EventType.CHANNEL_TEST:
        key = f"uptimy-test-{alert.event_id}"
        test = {
            "routing_key": config.routing_key,
            "event_action": "trigger",
            "dedup_key": key,
            "payload": {
                "summary": render.flat(render.headline(alert), SUMMARY_LIMIT),
                "source": "Uptimy",
                "severity": "info",
                "timestamp": render.iso(alert.occurred_at),
            },
        }
        resolve = {"routing_key": config.routing_key, "event_action": "resolve", "dedup_key": key}
        events = [(config.events_url, test), (config.events_url, resolve)]
    elif kind is EventType.INCIDENTS_DIGEST:
        for notice in alert.notices:
            if notice.incident is not None and (action := _ACTIONS.get(render.digest_event(notice))):
                events.append((config.events_url, _incident_event(config, alert, notice, action)))
    elif kind is EventType.TOOLS_CHANGED and alert.notice is not None:
        notice = alert.notice
        change = {
            "routing_key": config.routing_key,
            "payload": {
                "summary": render.flat(render.headline(alert), SUMMARY_LIMIT),
                "timestamp": render.iso(alert.occurred_at),
                "source": render.flat(notice.healthcheck.name, 255),
                "custom_details": render.notice_data(notice),
            },
            "links": _links(notice),
        }
        events = [(change_url(config.events_url), change)]
    elif kind in _ACTIONS and alert.notice is not None and alert.notice.incident is not None:
        events = [(config.events_url, _incident_event(config, alert, alert.notice, _ACTIONS[kind]))]
    headers = (("Content-Type", "application/json"),)
    return [
        Request("POST", url, headers, json.dumps(event, ensure_ascii=False).encode()) for url, event in events
    ]


def _refuses_key(answer: Answer) -> bool:
    """Return whether PagerDuty refused the event for good: gone, or a 400 naming the routing key."""
    if answer.status == 410:
        return True
    text = answer.body.decode("utf-8", errors="replace").lower()
    return answer.status in {400, 404} and ("routing_key" in text or "routing key" in text)


def send(
    config: PagerDutyConfig,
    alert: Alert,
    *,
    timeout: float,
    allow_private: bool,
    nameservers: tuple[str, ...] = (),
    mail_connection: Any = None,
) -> Attempt:
    """Send the alert's events; PagerDuty answers 202, 429 when throttled, 400 for a refused event."""
    requests = requests_for(config, alert)
    if not requests:
        return Attempt(ok=False, duration=0.0, error=f"PagerDuty has no event for {alert.event_type.value}")
    return send_requests(
        requests,
        timeout=timeout,
        allow_private=allow_private,
        nameservers=nameservers,
        secrets=[config.routing_key],
        is_permanent=_refuses_key,
    )


def targets(config: PagerDutyConfig) -> tuple[str, ...]:
    return (config.events_url,)


KIND: ChannelKind[PagerDutyConfig] = ChannelKind(
    name="pagerduty",
    label="PagerDuty (Events API v2)",
    parse=parse,
    dump=dump,
    masked=masked,
    send=send,
    secret_fields=("routing_key",),
    retry_horizon=timedelta(days=1),
    # PagerDuty's Events API allows about 120 events a minute per integration key.
    rate_per_minute=120,
    targets=targets,
)
register(KIND)
