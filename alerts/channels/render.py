"""Say what an alert says, once, for every channel: a headline, plain text, HTML and the webhook JSON.

Names, reasons and tool names came from targets and customers: they are hostile text. Every line
here is flattened (no control characters, no line breaks smuggled into a subject) and capped, and
the HTML escapes everything it did not write itself.
"""

from __future__ import annotations

import html
from datetime import UTC, datetime
from typing import Any

from alerts.channels.base import Alert, EventType, Notice

PAYLOAD_VERSION = 1
# How many incidents a digest spells out in text; the webhook's JSON lists them all.
DIGEST_LINES = 50
_NAME_LIMIT = 120
_REASON_LIMIT = 300


def flat(text: str, limit: int) -> str:
    """Return ``text`` on one line, without control characters, cut to ``limit`` (an ellipsis when cut)."""
    cleaned = " ".join("".join(ch if ch.isprintable() else " " for ch in text[: limit * 2]).split())
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1].rstrip() + "…"


def iso(moment: datetime | None) -> str | None:
    """Return an aware time as ISO 8601 in UTC with a Z, or None."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def shown_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def duration_words(seconds: float) -> str:
    """Return a duration as people say it: "45 s", "12 min", "2 h 5 min", "3 d 4 h"."""
    whole = max(0, round(seconds))
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    if minutes:
        return f"{minutes} min"
    return f"{secs} s"


def _name(notice: Notice) -> str:
    return flat(notice.healthcheck.name, _NAME_LIMIT) or "(unnamed healthcheck)"


def _status(notice: Notice) -> str:
    return flat(notice.healthcheck.status, 20).upper()


def _reason(notice: Notice) -> str:
    return flat(notice.cause.reason, _REASON_LIMIT) if notice.cause else ""


def headline(alert: Alert) -> str:
    """Return the one-line summary: an email's subject, a chat title, PagerDuty's summary."""
    notice = alert.notice
    kind = alert.event_type
    if kind is EventType.CHANNEL_TEST:
        return f"Test alert from Uptimy for {flat(alert.organization, _NAME_LIMIT)}"
    if kind is EventType.INCIDENTS_DIGEST:
        return f"{digest_counts(alert)} in {flat(alert.organization, _NAME_LIMIT)}"
    if notice is None:
        return f"Uptimy: {kind.value}"
    name = _name(notice)
    reason = _reason(notice)
    tail = f" — {reason}" if reason else ""
    if kind is EventType.INCIDENT_OPENED:
        return f"{_status(notice)}: {name}{tail}"
    if kind is EventType.INCIDENT_ESCALATED:
        return f"Escalated to {_status(notice)}: {name}{tail}"
    if kind is EventType.INCIDENT_REMINDER:
        return f"Still {_status(notice)}: {name}{tail}"
    if kind is EventType.INCIDENT_CAUSE_CHANGED:
        return f"Still {_status(notice)}, new cause: {name}{tail}"
    if kind is EventType.INCIDENT_UNACKNOWLEDGED:
        return f"Unacknowledged, {_status(notice)}: {name}{tail}"
    if kind is EventType.INCIDENT_ACKNOWLEDGED:
        who = _acknowledged_by(notice)
        return f"Acknowledged{f' by {who}' if who else ''}: {name}"
    if kind is EventType.INCIDENT_RESOLVED:
        return f"{_resolution_word(notice)}: {name}{_after(notice)}"
    return f"Tool list changed: {name}"


def _acknowledged_by(notice: Notice) -> str:
    return flat(notice.incident.acknowledged_by, _NAME_LIMIT) if notice.incident else ""


def _resolution_word(notice: Notice) -> str:
    resolution = notice.incident.resolution if notice.incident else ""
    if resolution == "paused":
        return "Closed (healthcheck paused)"
    if resolution == "deleted":
        return "Closed (healthcheck deleted)"
    return "RECOVERED"


def _after(notice: Notice) -> str:
    incident = notice.incident
    if incident is None or incident.duration_seconds is None:
        return ""
    return f" after {duration_words(incident.duration_seconds)}"


def _detail_lines(notice: Notice) -> list[str]:
    """Return the facts of one notice as "Label: value" lines (no links)."""
    lines: list[str] = []
    cause = notice.cause
    incident = notice.incident
    if cause is not None:
        if cause.reason:
            lines.append(f"Reason: {_reason(notice)}")
        lines.append(f"Failure kind: {flat(cause.kind, 40)}")
        if cause.regions:
            regions = ", ".join(f"{flat(r.region, 40)} ({flat(r.kind, 40)})" for r in cause.regions[:20])
            lines.append(f"Failing regions: {regions}")
        if cause.missing_tools:
            lines.append(f"Missing tools: {_tool_list(cause.missing_tools)}")
        if cause.since is not None:
            lines.append(f"Since: {shown_time(cause.since)}")
    if incident is not None:
        lines.append(f"Severity: {flat(incident.severity, 20)}")
        lines.append(f"Opened: {shown_time(incident.opened_at)}")
        if incident.acknowledged_at is not None:
            who = _acknowledged_by(notice)
            lines.append(f"Acknowledged: {shown_time(incident.acknowledged_at)}{f' by {who}' if who else ''}")
        if incident.resolved_at is not None:
            lines.append(f"Resolved: {shown_time(incident.resolved_at)}")
        if incident.duration_seconds is not None:
            lines.append(f"Duration: {duration_words(incident.duration_seconds)}")
    tools = notice.tools
    if tools is not None:
        if tools.removed:
            lines.append(f"Tools removed: {_tool_list(tools.removed)}")
        for change in tools.gained_required_inputs[:20]:
            inputs = ", ".join(flat(name, 60) for name in change.inputs[:20])
            lines.append(f"{flat(change.tool, 80)} now requires: {inputs}")
    return lines


def _tool_list(tools: tuple[str, ...]) -> str:
    shown = ", ".join(flat(tool, 80) for tool in tools[:20])
    return shown + (f" and {len(tools) - 20} more" if len(tools) > 20 else "")


def _opening(alert: Alert) -> str:
    notice = alert.notice
    kind = alert.event_type
    if kind is EventType.CHANNEL_TEST:
        return (
            f"This is a test alert from Uptimy for {flat(alert.organization, _NAME_LIMIT)}. "
            "If you can read it, this channel works."
        )
    if kind is EventType.INCIDENTS_DIGEST:
        total = len(alert.notices)
        return (
            f"These {total} alerts for {flat(alert.organization, _NAME_LIMIT)} came at once, "
            f"so they are sent together: {digest_counts(alert)}."
        )
    if notice is None:
        return headline(alert)
    name = _name(notice)
    if kind is EventType.INCIDENT_OPENED:
        return f"{name} is {_status(notice)}."
    if kind is EventType.INCIDENT_ESCALATED:
        return f"{name} is now {_status(notice)} (it was degraded)."
    if kind is EventType.INCIDENT_REMINDER:
        return f"{name} is still {_status(notice)}."
    if kind is EventType.INCIDENT_CAUSE_CHANGED:
        return f"{name} is still {_status(notice)}, for another reason."
    if kind is EventType.INCIDENT_UNACKNOWLEDGED:
        return f"{name} is still {_status(notice)}, and nobody has acknowledged the incident."
    if kind is EventType.INCIDENT_ACKNOWLEDGED:
        who = _acknowledged_by(notice)
        return f"The incident on {name} was acknowledged{f' by {who}' if who else ''}."
    if kind is EventType.INCIDENT_RESOLVED:
        resolution = notice.incident.resolution if notice.incident else ""
        if resolution in {"paused", "deleted"}:
            return f"The incident on {name} was closed: the healthcheck was {resolution}."
        return f"{name} is UP again{_after(notice)}."
    return f"The tool list of {name} changed while it stayed up."


def text(alert: Alert) -> str:
    """Return the plain-text body: what happened, the facts, and the links."""
    parts = [_opening(alert)]
    if alert.event_type is EventType.INCIDENTS_DIGEST:
        lines = [_digest_line(notice) for notice in alert.notices[:DIGEST_LINES]]
        if len(alert.notices) > DIGEST_LINES:
            lines.append(f"… and {len(alert.notices) - DIGEST_LINES} more")
        parts.append("\n".join(lines))
        if alert.incidents_link:
            parts.append(f"All incidents: {alert.incidents_link}")
    elif alert.notice is not None:
        notice = alert.notice
        parts.append("\n".join(_detail_lines(notice)))
        parts.append("\n".join(_link_lines(notice, alert.event_type)))
    return "\n\n".join(part for part in parts if part) + "\n"


# What a digest says happened to its incidents, in the order its summary counts them.
_DIGEST_VERBS = {
    EventType.INCIDENT_OPENED: "opened",
    EventType.INCIDENT_ESCALATED: "escalated",
    EventType.INCIDENT_RESOLVED: "resolved",
}


def digest_event(notice: Notice) -> EventType:
    """Return what a digest's notice stands for (a notice without its event: an opening, as digests once were)."""
    return notice.event or EventType.INCIDENT_OPENED


def digest_counts(alert: Alert) -> str:
    """Return what a digest holds, counted: "6 incidents opened", "2 incidents opened, 1 escalated and 3 resolved"."""
    counts: dict[EventType, int] = {}
    for notice in alert.notices:
        event = digest_event(notice)
        counts[event] = counts.get(event, 0) + 1
    order = [*_DIGEST_VERBS, *sorted(set(counts) - set(_DIGEST_VERBS))]
    parts = [(counts[event], _DIGEST_VERBS.get(event, "updated")) for event in order if event in counts]
    if not parts:
        return "0 incidents"
    first, *rest = parts
    words = [f"{first[0]} incident{'s' if first[0] != 1 else ''} {first[1]}"]
    words += [f"{count} {verb}" for count, verb in rest]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def digest_sentence(notice: Notice) -> str:
    """Return one digest line's words: what happened to this incident, as its own alert would say it."""
    event = digest_event(notice)
    name = _name(notice)
    reason = _reason(notice)
    because = f" ({reason})" if reason else ""
    if event is EventType.INCIDENT_RESOLVED:
        resolution = notice.incident.resolution if notice.incident else ""
        if resolution in {"paused", "deleted"}:
            return f"{name}: closed, the healthcheck was {resolution}"
        return f"{name} is UP again{_after(notice)}"
    if event is EventType.INCIDENT_ESCALATED:
        return f"{name} is now {_status(notice)} (it was degraded){because}"
    return f"{name} is {_status(notice)}{because}"


def _digest_line(notice: Notice) -> str:
    link = f" {notice.healthcheck.link}" if notice.healthcheck.link else ""
    return f"- {digest_sentence(notice)}{link}"


def _link_lines(notice: Notice, kind: EventType) -> list[str]:
    lines = [f"Healthcheck: {notice.healthcheck.link}"] if notice.healthcheck.link else []
    if notice.acknowledge_link and needs_acknowledging(kind):
        lines.append(f"Acknowledge: {notice.acknowledge_link}")
    return lines


def needs_acknowledging(kind: EventType) -> bool:
    """Return whether an alert of this kind carries the acknowledge link."""
    return kind in {
        EventType.INCIDENT_OPENED,
        EventType.INCIDENT_ESCALATED,
        EventType.INCIDENT_REMINDER,
        EventType.INCIDENT_CAUSE_CHANGED,
        EventType.INCIDENT_UNACKNOWLEDGED,
    }


def html_body(alert: Alert) -> str:
    """Return the HTML body: the same facts as :func:`text`, every outside string escaped."""
    esc = html.escape
    rows: list[str] = [f"<p>{esc(_opening(alert))}</p>"]
    if alert.event_type is EventType.INCIDENTS_DIGEST:
        items = "".join(
            f'<li><a href="{esc(n.healthcheck.link)}">{esc(digest_sentence(n))}</a></li>'
            for n in alert.notices[:DIGEST_LINES]
        )
        rows.append(f"<ul>{items}</ul>")
        if len(alert.notices) > DIGEST_LINES:
            rows.append(f"<p>… and {len(alert.notices) - DIGEST_LINES} more</p>")
        if alert.incidents_link:
            rows.append(f'<p><a href="{esc(alert.incidents_link)}">All incidents</a></p>')
    elif alert.notice is not None:
        notice = alert.notice
        facts = "".join(
            f"<tr><th align='left'>{esc(label)}</th><td>{esc(value)}</td></tr>"
            for label, _, value in (line.partition(": ") for line in _detail_lines(notice))
        )
        if facts:
            rows.append(f"<table>{facts}</table>")
        links = []
        if notice.healthcheck.link:
            links.append(f'<a href="{esc(notice.healthcheck.link)}">Open the healthcheck</a>')
        if notice.acknowledge_link and needs_acknowledging(alert.event_type):
            links.append(f'<a href="{esc(notice.acknowledge_link)}">Acknowledge</a>')
        if links:
            rows.append(f"<p>{' · '.join(links)}</p>")
    title = esc(headline(alert))
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head>"
        f"<body><h2>{title}</h2>{''.join(rows)}</body></html>"
    )


def notice_data(notice: Notice) -> dict[str, Any]:
    """Return one notice as the webhook's JSON shows it."""
    hc = notice.healthcheck
    data: dict[str, Any] = {
        "healthcheck": {"id": hc.id, "name": hc.name, "status": hc.status, "url": hc.link},
    }
    if notice.incident is not None:
        inc = notice.incident
        data["incident"] = {
            "id": inc.id,
            "status": inc.status,
            "severity": inc.severity,
            "opened_at": iso(inc.opened_at),
            "acknowledged_at": iso(inc.acknowledged_at),
            "acknowledged_by": inc.acknowledged_by or None,
            "resolved_at": iso(inc.resolved_at),
            "resolution": inc.resolution or None,
            "duration_seconds": inc.duration_seconds,
            "acknowledge_url": notice.acknowledge_link or None,
        }
    if notice.cause is not None:
        cause = notice.cause
        data["cause"] = {
            "kind": cause.kind,
            "reason": cause.reason,
            "regions": [{"region": r.region, "kind": r.kind, "reason": r.reason} for r in cause.regions],
            "missing_tools": list(cause.missing_tools),
            "since": iso(cause.since),
        }
    if notice.tools is not None:
        data["tools"] = {
            "removed": list(notice.tools.removed),
            "gained_required_inputs": [
                {"tool": change.tool, "inputs": list(change.inputs)}
                for change in notice.tools.gained_required_inputs
            ],
        }
    return data


def payload(alert: Alert) -> dict[str, Any]:
    """Return the versioned JSON a webhook receives (``{"version": 1, "type", "id", "timestamp", "data"}``).

    ``data`` holds the organization and, for one check's event, that check's healthcheck,
    incident, cause and tools objects; a digest lists its notices under ``incidents``, each with
    the ``event`` it stands for.
    """
    data: dict[str, Any] = {"organization": {"name": alert.organization}, "summary": headline(alert)}
    if alert.event_type is EventType.INCIDENTS_DIGEST:
        data["incidents"] = [
            {"event": digest_event(notice).value, **notice_data(notice)} for notice in alert.notices
        ]
        data["incidents_url"] = alert.incidents_link or None
    elif alert.notice is not None:
        data.update(notice_data(alert.notice))
    return {
        "version": PAYLOAD_VERSION,
        "type": alert.event_type.value,
        "id": alert.event_id,
        "timestamp": iso(alert.occurred_at),
        "data": data,
    }
