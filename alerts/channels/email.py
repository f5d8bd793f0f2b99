"""Send alerts by email through Django's mail backend: a text part and an HTML part.

The SMTP server is the operator's (``EMAIL_*`` settings), not the customer's, so no address
guard applies; the recipients are the customer's and are validated and bounded. Each message's
Message-ID is made from the delivery's id, so a retried delivery is recognisably the same
message, and every message about one incident refers to it, so mail clients thread them.
"""

from __future__ import annotations

import smtplib
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.core.mail import EmailMultiAlternatives, get_connection
from django.core.validators import EmailValidator

from alerts.channels import render
from alerts.channels.base import (
    Alert,
    Attempt,
    ChannelConfigError,
    ChannelKind,
    EventType,
    register,
    require_fields,
)

MAX_RECIPIENTS = 20
_FIELDS = frozenset({"recipients"})
_MESSAGE_DOMAIN = "alerts.uptimy"
_validate_email = EmailValidator()


@dataclass(frozen=True)
class EmailConfig:
    """The addresses an alert goes to (1 to MAX_RECIPIENTS, lower-cased, each once)."""

    recipients: tuple[str, ...]


def parse(raw: Mapping[str, Any]) -> EmailConfig:
    """Return the email config; every problem is a ChannelConfigError naming its field."""
    require_fields(raw, allowed=_FIELDS, kind="email")
    value = raw.get("recipients")
    if isinstance(value, str):
        value = [part for part in value.replace(";", ",").split(",") if part.strip()]
    if not isinstance(value, list) or not value:
        raise ChannelConfigError("config.recipients", "must be a list of at least one email address")
    if len(value) > MAX_RECIPIENTS:
        raise ChannelConfigError("config.recipients", f"must hold at most {MAX_RECIPIENTS} addresses")
    recipients: list[str] = []
    for index, item in enumerate(value):
        where = f"config.recipients[{index}]"
        if not isinstance(item, str):
            raise ChannelConfigError(where, "must be an email address")
        address = item.strip().lower()
        if len(address) > 254:
            raise ChannelConfigError(where, "must be at most 254 characters")
        try:
            _validate_email(address)
        except ValidationError:
            raise ChannelConfigError(where, "is not a valid email address") from None
        if address not in recipients:
            recipients.append(address)
    return EmailConfig(recipients=tuple(recipients))


def dump(config: EmailConfig) -> dict[str, Any]:
    return {"recipients": list(config.recipients)}


def message_for(alert: Alert, config: EmailConfig, connection: Any) -> EmailMultiAlternatives:
    """Return the message: subject, text and HTML parts, and the ids that thread an incident's mails."""
    headers = {
        "Message-ID": f"<{alert.event_id}@{_MESSAGE_DOMAIN}>",
        "X-Uptimy-Event": alert.event_type.value,
        "X-Uptimy-Event-Id": alert.event_id,
        "Auto-Submitted": "auto-generated",
    }
    notice = alert.notice
    if (
        notice is not None
        and notice.incident is not None
        and alert.event_type is not EventType.INCIDENTS_DIGEST
    ):
        thread = f"<incident-{notice.incident.id}@{_MESSAGE_DOMAIN}>"
        headers["References"] = thread
        if alert.event_type is not EventType.INCIDENT_OPENED:
            headers["In-Reply-To"] = thread
    message = EmailMultiAlternatives(
        subject=f"[Uptimy] {render.headline(alert)}",
        body=render.text(alert),
        to=list(config.recipients),
        headers=headers,
        connection=connection,
    )
    message.attach_alternative(render.html_body(alert), "text/html")
    return message


def send(
    config: EmailConfig,
    alert: Alert,
    *,
    timeout: float,
    allow_private: bool,
    nameservers: tuple[str, ...] = (),
    mail_connection: Any = None,
) -> Attempt:
    """Send the message through ``mail_connection`` (or the default backend, with ``timeout``)."""
    started = time.perf_counter()
    try:
        connection = mail_connection or get_connection(timeout=timeout)
        message_for(alert, config, connection).send(fail_silently=False)
    except smtplib.SMTPRecipientsRefused as exc:
        codes = [code for code, _ in exc.recipients.values()]
        return Attempt(
            ok=False,
            duration=time.perf_counter() - started,
            status_code=codes[0] if codes else None,
            error=f"The mail server refused every recipient (SMTP {', '.join(map(str, sorted(set(codes))))})",
            permanent=bool(codes) and all(code >= 500 for code in codes),
        )
    except smtplib.SMTPResponseException as exc:
        return Attempt(
            ok=False,
            duration=time.perf_counter() - started,
            status_code=exc.smtp_code,
            error=f"The mail server answered SMTP {exc.smtp_code}: {_smtp_words(exc.smtp_error)}",
        )
    except TimeoutError:
        return Attempt(
            ok=False,
            duration=time.perf_counter() - started,
            error=f"The mail server did not answer within {timeout:g} s",
        )
    except (smtplib.SMTPException, OSError) as exc:
        return Attempt(
            ok=False,
            duration=time.perf_counter() - started,
            error=f"The mail server could not be reached: {render.flat(str(exc) or type(exc).__name__, 200)}",
        )
    return Attempt(ok=True, duration=time.perf_counter() - started)


def _smtp_words(error: bytes | str) -> str:
    text = error.decode("utf-8", errors="replace") if isinstance(error, bytes) else error
    return render.flat(text, 200)


KIND: ChannelKind[EmailConfig] = ChannelKind(
    name="email",
    label="Email",
    parse=parse,
    dump=dump,
    masked=dump,
    send=send,
    secret_fields=(),
    retry_horizon=timedelta(days=1),
    rate_per_minute=60,
)
register(KIND)
