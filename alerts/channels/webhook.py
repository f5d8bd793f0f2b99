"""Send alerts to any HTTP endpoint as versioned JSON, signed per Standard Webhooks.

The headers are the specification's (https://www.standardwebhooks.com): ``webhook-id`` is the
delivery's id, the same on every retry, so receivers drop duplicates; ``webhook-timestamp`` is
this attempt's Unix time; ``webhook-signature`` is ``v1,<base64 HMAC-SHA256>`` of
``"{id}.{timestamp}.{body}"`` keyed with the bytes base64-encoded after ``whsec_``. While a
rotated-out secret's overlap lasts, its signature follows the new one, space separated, so a
receiver that still holds the old secret keeps verifying until it switches.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from alerts.channels import render
from alerts.channels.base import (
    MASK,
    Alert,
    Attempt,
    ChannelConfigError,
    ChannelKind,
    register,
    require_fields,
    string_field,
)
from alerts.channels.http import Request, send_requests

SECRET_PREFIX = "whsec_"
# The specification asks for keys of 24 to 64 bytes; Uptimy generates 32.
_KEY_BYTES = (24, 64)
MAX_URL = 2048
_FIELDS = frozenset({"url", "secret", "previous_secret", "previous_secret_until"})


@dataclass(frozen=True)
class WebhookConfig:
    """Where to post, the signing secret, and the rotated-out secret with the end of its overlap."""

    url: str
    secret: str
    previous_secret: str = ""
    previous_secret_until: datetime | None = None


def generate_secret() -> str:
    """Return a new signing secret (``whsec_`` and 32 random bytes in base64): shown once by the API."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def rotate(
    config: WebhookConfig, *, now: datetime, overlap: timedelta = timedelta(hours=24)
) -> WebhookConfig:
    """Return ``config`` with a new secret; the current one keeps signing too until ``now + overlap``."""
    return WebhookConfig(
        url=config.url,
        secret=generate_secret(),
        previous_secret=config.secret,
        previous_secret_until=(now + overlap).astimezone(UTC),
    )


def _key(secret: str) -> bytes:
    return base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """Return the ``v1,<signature>`` of one message under ``secret``."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def signatures(config: WebhookConfig, msg_id: str, timestamp: int, body: bytes) -> str:
    """Return the ``webhook-signature`` value: the current secret's, and the previous one's during its overlap."""
    values = [sign(config.secret, msg_id, timestamp, body)]
    until = config.previous_secret_until
    if config.previous_secret and until is not None and timestamp < until.timestamp():
        values.append(sign(config.previous_secret, msg_id, timestamp, body))
    return " ".join(values)


def parse_url(raw: Mapping[str, Any], name: str = "url") -> str:
    """Return an http(s) URL field with a host, refusing credentials in it and anything else."""
    value = string_field(raw, name, limit=MAX_URL)
    where = f"config.{name}"
    try:
        url = httpx.URL(value)
    except (httpx.InvalidURL, UnicodeError):
        raise ChannelConfigError(where, "is not a valid URL") from None
    if url.scheme not in {"http", "https"}:
        raise ChannelConfigError(where, "must be an http:// or https:// URL")
    if not url.host:
        raise ChannelConfigError(where, "must name a host")
    if url.userinfo:
        raise ChannelConfigError(
            where, "must not carry a user name or password; sign with the secret instead"
        )
    if url.fragment:
        raise ChannelConfigError(where, "must not have a #fragment")
    return value


def _parse_secret(raw: Mapping[str, Any], name: str, *, required: bool) -> str:
    value = string_field(raw, name, limit=200, required=required)
    if not value:
        return ""
    where = f"config.{name}"
    if not value.startswith(SECRET_PREFIX):
        raise ChannelConfigError(where, f"must start with {SECRET_PREFIX}")
    try:
        key = _key(value)
    except (binascii.Error, ValueError):
        raise ChannelConfigError(where, f"must be base64 after {SECRET_PREFIX}") from None
    low, high = _KEY_BYTES
    if not low <= len(key) <= high:
        raise ChannelConfigError(where, f"must hold {low} to {high} bytes after {SECRET_PREFIX}")
    return value


def _parse_moment(raw: Mapping[str, Any], name: str) -> datetime | None:
    value = raw.get(name)
    if value is None or value == "":
        return None
    where = f"config.{name}"
    if not isinstance(value, str):
        raise ChannelConfigError(where, "must be an ISO 8601 date and time")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ChannelConfigError(where, "must be an ISO 8601 date and time") from None
    if moment.tzinfo is None:
        raise ChannelConfigError(where, "must carry a time zone (Z or an offset)")
    return moment.astimezone(UTC)


def parse(raw: Mapping[str, Any]) -> WebhookConfig:
    """Return the webhook config; every problem is a ChannelConfigError naming its field."""
    require_fields(raw, allowed=_FIELDS, kind="webhook")
    url = parse_url(raw)
    secret = _parse_secret(raw, "secret", required=True)
    previous = _parse_secret(raw, "previous_secret", required=False)
    until = _parse_moment(raw, "previous_secret_until")
    if previous and until is None:
        raise ChannelConfigError("config.previous_secret_until", "is required with a previous secret")
    if until is not None and not previous:
        raise ChannelConfigError("config.previous_secret", "is required with an overlap end")
    if until is not None and until - datetime.now(UTC) > timedelta(days=30):
        raise ChannelConfigError("config.previous_secret_until", "must be within 30 days")
    return WebhookConfig(url=url, secret=secret, previous_secret=previous, previous_secret_until=until)


def dump(config: WebhookConfig) -> dict[str, Any]:
    data: dict[str, Any] = {"url": config.url, "secret": config.secret}
    if config.previous_secret:
        data["previous_secret"] = config.previous_secret
        data["previous_secret_until"] = render.iso(config.previous_secret_until)
    return data


def masked_url(url: str) -> str:
    """Return the URL's origin, with ``/********`` for a path or query that may carry a token."""
    parsed = httpx.URL(url)
    origin = str(parsed.copy_with(path="/", query=None, fragment=None)).rstrip("/")
    has_more = parsed.path not in {"", "/"} or bool(parsed.query)
    return f"{origin}/{MASK}" if has_more else origin


def masked(config: WebhookConfig) -> dict[str, Any]:
    data: dict[str, Any] = {"url": masked_url(config.url), "secret": MASK}
    if config.previous_secret:
        data["previous_secret"] = MASK
        data["previous_secret_until"] = render.iso(config.previous_secret_until)
    return data


def body_of(alert: Alert) -> bytes:
    """Return the JSON body a receiver gets for ``alert``."""
    return json.dumps(render.payload(alert), ensure_ascii=False, separators=(",", ":")).encode()


def request_for(config: WebhookConfig, alert: Alert, *, timestamp: int) -> Request:
    """Return the signed request that delivers ``alert`` at ``timestamp`` (Unix seconds)."""
    body = body_of(alert)
    headers = (
        ("Content-Type", "application/json"),
        ("webhook-id", alert.event_id),
        ("webhook-timestamp", str(timestamp)),
        ("webhook-signature", signatures(config, alert.event_id, timestamp, body)),
    )
    return Request("POST", config.url, headers, body)


def send(
    config: WebhookConfig,
    alert: Alert,
    *,
    timeout: float,
    allow_private: bool,
    nameservers: tuple[str, ...] = (),
    mail_connection: Any = None,
) -> Attempt:
    """Post the signed alert; 2xx delivers, 410 is permanent (the receiver is gone), the rest retry."""
    request = request_for(config, alert, timestamp=int(time.time()))
    # A receiver that quotes the request back quotes its signatures too: a valid one replays
    # for the receiver's tolerance, so they are kept out of the sentence like the secrets.
    signed = [
        part for name, value in request.headers if name == "webhook-signature" for part in value.split()
    ]
    secrets_ = [config.secret, config.previous_secret, *_url_secrets(config.url), *signed]
    return send_requests(
        [request],
        timeout=timeout,
        allow_private=allow_private,
        nameservers=nameservers,
        secrets=[s for s in secrets_ if s],
    )


def _url_secrets(url: str) -> list[str]:
    """Return the parts of a URL that may be tokens (path segments, query values): kept out of errors."""
    parsed = httpx.URL(url)
    parts = [segment for segment in parsed.path.split("/") if len(segment) >= 8]
    parts.extend(value for _, value in parsed.params.multi_items() if len(value) >= 8)
    return parts


def targets(config: WebhookConfig) -> tuple[str, ...]:
    return (config.url,)


KIND: ChannelKind[WebhookConfig] = ChannelKind(
    name="webhook",
    label="Webhook (Standard Webhooks)",
    parse=parse,
    dump=dump,
    masked=masked,
    send=send,
    secret_fields=("url", "secret", "previous_secret"),
    retry_horizon=timedelta(days=3),
    rate_per_minute=3000,
    targets=targets,
)
register(KIND)
