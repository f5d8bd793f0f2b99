"""Turn the alert channel form into the API's request body, and the API's refusals into field errors.

The form has one set of fields per kind (tabs, as the healthcheck form); the body is what
``POST /api/v1/channels/`` takes, validated by the API's own serializer and the kind's own
parser (through ``alerts.services.channel_add``), so every message is the API's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from alerts.channels import channel_kind
from alerts.models import Channel


@dataclass(frozen=True, slots=True)
class ChannelField:
    name: str
    label: str
    help: str = ""
    multiline: bool = False
    secret: bool = False


KIND_FIELDS: dict[str, tuple[ChannelField, ...]] = {
    Channel.Kind.EMAIL: (
        ChannelField(
            "recipients", "Recipients", "One email address per line (or separated by commas).", True
        ),
    ),
    Channel.Kind.WEBHOOK: (
        ChannelField("url", "Webhook URL", "We POST a signed JSON body (Standard Webhooks) to it."),
        ChannelField(
            "secret",
            "Signing secret",
            "A whsec_… secret; leave empty to have one generated, shown once.",
            secret=True,
        ),
    ),
    Channel.Kind.PAGERDUTY: (
        ChannelField(
            "routing_key",
            "Routing key",
            "The integration key of a PagerDuty Events API v2 service.",
            secret=True,
        ),
        ChannelField("events_url", "Events URL", "Leave empty for PagerDuty's own."),
    ),
    Channel.Kind.APPRISE: (
        ChannelField("url", "Apprise URL", "Such as slack://… or discord://…", secret=True),
    ),
}
KIND_NAMES: dict[str, str] = {
    Channel.Kind.EMAIL: "Email",
    Channel.Kind.WEBHOOK: "Webhook",
    Channel.Kind.PAGERDUTY: "PagerDuty",
    Channel.Kind.APPRISE: "Chat (Apprise)",
}


@dataclass
class ChannelForm:
    kind: str
    values: dict[str, str] = field(default_factory=dict)
    errors: dict[str, list[str]] = field(default_factory=dict)
    enabled: bool = True

    @property
    def fields(self) -> tuple[ChannelField, ...]:
        return KIND_FIELDS.get(self.kind, ())

    def add_errors(self, errors: Mapping[str, Any]) -> None:
        """Put the API's errors (``{"config": {"url": [...]}}`` or ``{"config.recipients[0]": ...}``) next to fields."""
        for key, messages in errors.items():
            if isinstance(messages, Mapping):
                self.add_errors({f"{key}.{inner}": value for inner, value in messages.items()})
                continue
            self.errors.setdefault(self._field_of(key), []).extend(
                [str(m) for m in messages] if isinstance(messages, list | tuple) else [str(messages)]
            )

    def _field_of(self, key: str) -> str:
        name = key.removeprefix("config.").split("[")[0].split(".")[0]
        if name in {"name", "kind"} or any(f.name == name for f in self.fields):
            return name
        return "non_field_errors"


def blank_form(kind: str) -> ChannelForm:
    return ChannelForm(kind=kind if kind in KIND_FIELDS else Channel.Kind.EMAIL)


def posted_form(data: Mapping[str, str]) -> ChannelForm:
    form = blank_form(str(data.get("kind", "")))
    form.values = {"name": str(data.get("name", ""))} | {
        f.name: str(data.get(f.name, "")) for f in form.fields
    }
    if data.get("kind") not in KIND_FIELDS:
        form.errors["kind"] = [f"Choose one of: {', '.join(KIND_FIELDS)}."]
    return form


def api_body(form: ChannelForm) -> dict[str, Any]:
    """Return the API's body for the form: empty optional fields left out, recipients as a list."""
    config: dict[str, Any] = {}
    for spec in form.fields:
        value = form.values.get(spec.name, "").strip()
        if not value:
            continue
        if spec.name == "recipients":
            config[spec.name] = [part.strip() for part in value.replace("\n", ",").split(",") if part.strip()]
        else:
            config[spec.name] = value
    return {"name": form.values.get("name", ""), "kind": form.kind, "config": config}


def secret_names(kind: str) -> tuple[str, ...]:
    """Return the kind's write-only fields: the API shows them masked, and a masked one sent back keeps its value."""
    return channel_kind(kind).secret_fields


def _text(value: Any) -> str:
    if value is None:
        return ""
    return "\n".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


def form_of(channel: Channel, shown: Mapping[str, Any] | None) -> ChannelForm:
    """Return the form of a stored channel, its config as the API shows it (``shown``: secrets masked)."""
    form = blank_form(channel.kind)
    form.values = {"name": channel.name} | {f.name: _text((shown or {}).get(f.name)) for f in form.fields}
    form.enabled = channel.enabled
    return form


def edited_form(channel: Channel, data: Mapping[str, str]) -> ChannelForm:
    """Return the posted edit form; its kind is the channel's (a channel's kind never changes)."""
    form = posted_form({**{key: str(data.get(key, "")) for key in data}, "kind": channel.kind})
    form.enabled = data.get("enabled") == "on"
    return form


def edit_body(form: ChannelForm, shown: Mapping[str, Any] | None) -> dict[str, Any]:
    """Return the API's body for a change: the form's fields, and the rest of the config as the API showed it.

    What the form has no field for (a webhook's previous secret while a rotation runs) goes back
    as it was read, masked, so the service keeps it, as a client that reads then writes a channel.
    """
    body = api_body(form)
    names = {f.name for f in form.fields}
    carried = {key: value for key, value in (shown or {}).items() if key not in names and value is not None}
    body["config"] = carried | body["config"]
    body["enabled"] = form.enabled
    return body
