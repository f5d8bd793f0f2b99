"""Say a status page's notice to its subscribers: the versioned webhook body, and an email's subject, text and HTML.

Pure: the notice's data (as decided when it happened, see ``statuspages.services.notices``)
and the recipient's links in, str and bytes out. Every text from the page's owner is escaped
in the HTML part.

The webhook body, version 1 (documented in docs/status-pages.md, "Subscribers")::

    {"type": "incident.updated", "version": 1, "timestamp": "<ISO 8601>", "data": {...}}

``data`` holds ``page`` (id, title, url, time_zone) and either ``incident`` (id, title,
status, impact, url, created_at, resolved_at, components [{id, name}]) with ``update`` (id,
status, body, created_at; null when the status changed without words), or ``maintenance``
(id, name, description, starts_at, ends_at, components).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from html import escape
from typing import Any
from zoneinfo import ZoneInfo

PAYLOAD_VERSION = 1

_INCIDENT_STATUS = {
    "investigating": "Investigating",
    "identified": "Identified",
    "monitoring": "Monitoring",
    "resolved": "Resolved",
}
_IMPACT = {"none": "None", "minor": "Minor", "major": "Major", "critical": "Critical"}


@dataclass(frozen=True)
class Links:
    """The recipient's own links: unsubscribe always; confirm for a confirmation mail."""

    unsubscribe: str
    confirm: str = ""


@dataclass(frozen=True)
class Email:
    subject: str
    text: str
    html: str


def webhook_body(kind: str, at: datetime, data: Mapping[str, Any]) -> bytes:
    """Return the JSON a webhook subscriber gets for a notice."""
    document = {"type": kind, "version": PAYLOAD_VERSION, "timestamp": at.isoformat(), "data": data}
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()


def _when(value: str | None, zone: str) -> str:
    if not value:
        return ""
    moment = datetime.fromisoformat(value).astimezone(ZoneInfo(zone))
    return moment.strftime("%Y-%m-%d %H:%M ") + (moment.tzname() or zone)


def _names(components: Any) -> str:
    return ", ".join(str(component.get("name", "")) for component in components or ())


def _lines(kind: str, data: Mapping[str, Any]) -> tuple[str, list[tuple[str, str]], str, str]:
    """Return (subject, [(label, value)], body text, link) for the notice."""
    page = data.get("page") or {}
    zone = str(page.get("time_zone") or "UTC")
    title = str(page.get("title", ""))
    if kind.startswith("incident."):
        incident = data.get("incident") or {}
        update = data.get("update") or {}
        name = str(incident.get("title", ""))
        status = _INCIDENT_STATUS.get(str(incident.get("status")), str(incident.get("status", "")))
        subject = {
            "incident.created": f"[{title}] {name}",
            "incident.updated": f"[{title}] Update: {name}",
            "incident.resolved": f"[{title}] Resolved: {name}",
        }.get(kind, f"[{title}] {name}")
        facts = [
            ("Status", status),
            ("Impact", _IMPACT.get(str(incident.get("impact")), str(incident.get("impact", "")))),
        ]
        if incident.get("components"):
            facts.append(("Affected", _names(incident["components"])))
        if update.get("created_at"):
            facts.append(("Posted", _when(update.get("created_at"), zone)))
        return subject, facts, str(update.get("body", "")), str(incident.get("url", ""))
    maintenance = data.get("maintenance") or {}
    name = str(maintenance.get("name", ""))
    subject = {
        "maintenance.scheduled": f"[{title}] Scheduled maintenance: {name}",
        "maintenance.started": f"[{title}] Maintenance in progress: {name}",
        "maintenance.completed": f"[{title}] Maintenance completed: {name}",
    }.get(kind, f"[{title}] {name}")
    facts = [
        ("Starts", _when(maintenance.get("starts_at"), zone)),
        ("Ends", _when(maintenance.get("ends_at"), zone)),
    ]
    if maintenance.get("components"):
        facts.append(("Affected", _names(maintenance["components"])))
    return subject, facts, str(maintenance.get("description", "")), str(page.get("url", ""))


def email(kind: str, data: Mapping[str, Any], links: Links) -> Email:
    """Return the email for a notice (or a confirmation), with the recipient's links in both parts."""
    page = data.get("page") or {}
    title = str(page.get("title", ""))
    if kind == "subscription.confirm":
        return _confirmation(title, str(page.get("url", "")), links)
    subject, facts, body, link = _lines(kind, data)
    text = "\n".join(
        [
            subject,
            "",
            *(f"{label}: {value}" for label, value in facts),
            *(["", body] if body else []),
            *(["", f"Details: {link}"] if link else []),
            "",
            "--",
            f"You get this because you subscribed to updates of {title}.",
            f"Unsubscribe: {links.unsubscribe}",
            "",
        ]
    )
    rows = "".join(
        f"<tr><th align='left' style='padding-right:12px'>{escape(label)}</th><td>{escape(value)}</td></tr>"
        for label, value in facts
    )
    paragraphs = "".join(f"<p>{escape(part)}</p>" for part in body.split("\n\n") if part.strip())
    details = f"<p><a href='{escape(link)}'>View the status page</a></p>" if link else ""
    html = (
        "<!doctype html><html><body style='font-family:sans-serif'>"
        f"<h2>{escape(subject)}</h2><table>{rows}</table>{paragraphs}{details}"
        "<hr><p style='color:#666;font-size:12px'>"
        f"You get this because you subscribed to updates of {escape(title)}. "
        f"<a href='{escape(links.unsubscribe)}'>Unsubscribe</a></p></body></html>"
    )
    return Email(subject=subject, text=text, html=html)


def _confirmation(title: str, url: str, links: Links) -> Email:
    subject = f"Confirm your subscription to {title}"
    text = (
        f"Someone, hopefully you, asked to get updates of {title} ({url}) at this address.\n\n"
        f"Confirm: {links.confirm}\n\n"
        "If it was not you, ignore this mail: you will get nothing else.\n"
    )
    html = (
        "<!doctype html><html><body style='font-family:sans-serif'>"
        f"<p>Someone, hopefully you, asked to get updates of <a href='{escape(url)}'>{escape(title)}</a> "
        "at this address.</p>"
        f"<p><a href='{escape(links.confirm)}'>Confirm your subscription</a></p>"
        "<p style='color:#666;font-size:12px'>If it was not you, ignore this mail: you will get nothing "
        "else.</p></body></html>"
    )
    return Email(subject=subject, text=text, html=html)
