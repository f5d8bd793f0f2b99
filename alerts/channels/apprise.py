"""Send alerts to Slack, Discord, Teams (workflows), Telegram and the rest through Apprise.

The whole Apprise URL is the secret (its tokens are the credentials). Only the schemes in
:data:`ALLOWED_SCHEMES` are taken: services Apprise reaches over HTTP(S), since those are the
ones whose traffic this module can guard. URL parameters that name local files (``keyfile=``,
``attach=``, any value that looks like a path) are refused, and the URL is validated with
``Apprise.instantiate``, which builds the plugin without sending anything.

Apprise talks HTTP through ``requests``. While one of our deliveries runs, every request its
plugin makes on this thread goes through :class:`_Exchange` instead of requests' own transport
(``HTTPAdapter.send`` is replaced once, process-wide; other callers of requests and other
threads pass straight through to the original). So an Apprise delivery gets exactly what the
other HTTP channels get: the host resolved once and checked by the address guard, the socket
opened to the checked address (SNI and Host keep the name), no redirect followed, at most
64 KiB of an answer read, and one deadline for the whole attempt, its requests included.

Apprise's own log lines never reach Uptimy's logs: they can carry the URL and its tokens.
"""

from __future__ import annotations

import http
import logging
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import apprise
import requests
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict
from requests.utils import get_encoding_from_headers

from alerts.channels import render
from alerts.channels.base import (
    MASK,
    Alert,
    Attempt,
    ChannelConfigError,
    ChannelKind,
    EventType,
    register,
    require_fields,
    string_field,
)
from alerts.channels.http import Refused, Request, exchange, verdict, within_deadline
from probes.runner import run_sync

MAX_URL = 2048
# The most HTTP requests one delivery may make (a plugin may look something up first).
MAX_REQUESTS = 8

# Services Apprise reaches over HTTP(S), by the scheme Apprise names them with. Apprise also
# turns a service's own https URL (https://hooks.slack.com/services/…, a Discord webhook URL)
# into its plugin: such a URL is taken when that plugin's scheme is here.
ALLOWED_SCHEMES = frozenset(
    {
        # chat
        "slack", "discord", "workflow", "workflows", "tgram", "mmost", "mmosts", "rocket", "rockets",
        "matrix", "matrixs", "zulip", "gchat", "webex", "wxteams", "guilded", "revolt", "flock",
        "ryver", "twist", "lark", "feishu", "dingtalk", "wecombot", "line", "cliq", "zcliq",
        "zohocliq", "stackfield", "signal", "signals",
        # push
        "ntfy", "ntfys", "gotify", "gotifys", "pover", "pbul", "bark", "barks", "apprise", "apprises",
        "ifttt", "hassio", "hassios",
        # incident tools
        "opsgenie", "splunk", "victorops", "pagertree", "squadcast", "ilert", "incidentio",
        "goalert", "goalerts", "signl4",
        # generic HTTP
        "json", "jsons", "form", "forms", "xml", "xmls",
    }
)  # fmt: skip

# Parameters that make a plugin read a local file (keys, certificates, attachments, the Block Kit
# or card templates of Slack, Discord and Teams).
_FILE_PARAMS = frozenset(
    {
        "keyfile", "key_file", "cert", "certfile", "cert_file", "cafile", "capath", "ca_certs",
        "attach", "attachment", "attachments", "file", "filename", "file_url", "image_path", "icon_path",
        "path", "template", "templates",
    }
)  # fmt: skip
_PATH_LIKE = re.compile(r"^(/|~|\\|\./|\.\./|file:|[A-Za-z]:[\\/])", re.IGNORECASE)
_OFF = frozenset({"no", "false", "0", "off", "n"})
_FIELDS = frozenset({"url"})
# Header fields the transport sets itself (or must not forward: the answer must not be compressed).
_OWN_HEADERS = frozenset({"host", "content-length", "connection", "accept-encoding", "transfer-encoding"})

_NOTIFY_TYPES = {
    EventType.INCIDENT_OPENED: apprise.NotifyType.FAILURE,
    EventType.INCIDENT_ESCALATED: apprise.NotifyType.FAILURE,
    EventType.INCIDENT_REMINDER: apprise.NotifyType.FAILURE,
    EventType.INCIDENT_CAUSE_CHANGED: apprise.NotifyType.FAILURE,
    EventType.INCIDENT_UNACKNOWLEDGED: apprise.NotifyType.FAILURE,
    EventType.INCIDENTS_DIGEST: apprise.NotifyType.FAILURE,
    EventType.INCIDENT_ACKNOWLEDGED: apprise.NotifyType.INFO,
    EventType.INCIDENT_RESOLVED: apprise.NotifyType.SUCCESS,
    EventType.TOOLS_CHANGED: apprise.NotifyType.WARNING,
    EventType.CHANNEL_TEST: apprise.NotifyType.INFO,
}


def _notify_type(alert: Alert) -> apprise.NotifyType:
    """Return the plugin's kind of message: a digest of recoveries alone is a success, any other a failure."""
    if alert.event_type is EventType.INCIDENTS_DIGEST and all(
        render.digest_event(notice) is EventType.INCIDENT_RESOLVED for notice in alert.notices
    ):
        return apprise.NotifyType.SUCCESS
    return _NOTIFY_TYPES.get(alert.event_type, apprise.NotifyType.INFO)


def _drop(record: logging.LogRecord) -> bool:
    return False


# Apprise logs through one logger, and its lines quote URLs with their tokens and the bodies it
# sent and got. A filter on that logger drops every record before any handler sees it, even one
# attached to it directly (a handler-level or propagate switch would not stop those); the
# attempt's own sentence says what went wrong instead.
logging.getLogger("apprise").addFilter(_drop)


@dataclass(frozen=True)
class AppriseConfig:
    """The Apprise URL: its scheme names the service, the rest is the secret."""

    url: str

    @property
    def scheme(self) -> str:
        return self.url.split("://", 1)[0].lower()


def _asset() -> apprise.AppriseAsset:
    # Memory only: a plugin's persistent store must never write files on a worker.
    return apprise.AppriseAsset(storage_mode="memory", http_redirects=False)


def _plugin(url: str) -> Any:
    return apprise.Apprise.instantiate(url, asset=_asset(), suppress_exceptions=True)


def _protocols(plugin: Any) -> set[str]:
    names: set[str] = set()
    for attribute in ("protocol", "secure_protocol"):
        value = getattr(plugin, attribute, None)
        if isinstance(value, str):
            names.add(value.lower())
        elif isinstance(value, tuple | list):
            names.update(str(item).lower() for item in value)
    return names


def _refuse_file_params(url: str) -> None:
    """Refuse parameters that name local files, and certificate checks turned off."""
    # Everything after the first "?", as Apprise reads it: even after a "#channel", which a URL
    # parser would take for a fragment with the parameters inside it.
    query = url.split("?", 1)[1] if "?" in url else ""
    for name, value in parse_qsl(query, keep_blank_values=True):
        bare = name.lstrip("+-:").lower()
        if bare in _FILE_PARAMS:
            raise ChannelConfigError(
                "config.url", f"the parameter {bare}= names a local file and is not allowed"
            )
        if _PATH_LIKE.match(unquote(value).strip()):
            raise ChannelConfigError(
                "config.url", f"the parameter {bare}= looks like a local path and is not allowed"
            )
        if bare == "verify" and value.strip().lower() in _OFF:
            raise ChannelConfigError("config.url", "certificate checks cannot be turned off (verify=)")


def parse(raw: Mapping[str, Any]) -> AppriseConfig:
    """Return the Apprise config; every problem is a ChannelConfigError naming ``config.url``."""
    require_fields(raw, allowed=_FIELDS, kind="apprise")
    url = string_field(raw, "url", limit=MAX_URL)
    if "://" not in url:
        raise ChannelConfigError("config.url", "must be an Apprise URL such as slack://… or discord://…")
    scheme = url.split("://", 1)[0].lower()
    if scheme not in ALLOWED_SCHEMES and scheme not in {"http", "https"}:
        raise ChannelConfigError("config.url", f"the scheme {render.flat(scheme, 30)}:// is not allowed")
    _refuse_file_params(url)
    plugin = _plugin(url)
    if plugin is None:
        raise ChannelConfigError(
            "config.url", "Apprise does not accept this URL: check its service and tokens"
        )
    if not _protocols(plugin) & ALLOWED_SCHEMES:
        raise ChannelConfigError("config.url", f"the service {type(plugin).__name__} is not allowed")
    return AppriseConfig(url=url)


def dump(config: AppriseConfig) -> dict[str, Any]:
    return {"url": config.url}


def masked(config: AppriseConfig) -> dict[str, Any]:
    return {"url": f"{config.scheme}://{MASK}"}


class _Exchange:
    """Carry one delivery's HTTP through the guarded connection layer, and remember how it went."""

    def __init__(
        self, *, deadline: float, allow_private: bool, nameservers: tuple[str, ...], secrets: list[str]
    ) -> None:
        self.deadline = deadline
        self.allow_private = allow_private
        self.nameservers = nameservers
        self.secrets = secrets
        self.requests = 0
        self.status: int | None = None
        self.error = ""
        self.permanent = False
        self.retry_after: float | None = None

    def fail(self, sentence: str, *, permanent: bool = False) -> requests.exceptions.ConnectionError:
        self.error = sentence
        self.permanent = permanent
        return requests.exceptions.ConnectionError(sentence)

    def send(self, prepared: requests.PreparedRequest) -> requests.Response:
        self.requests += 1
        if self.requests > MAX_REQUESTS:
            raise self.fail(f"The plugin made more than {MAX_REQUESTS} requests for one alert")
        remaining = self.deadline - time.perf_counter()
        if remaining <= 0:
            raise self.fail("The delivery ran out of time")
        body = prepared.body
        if isinstance(body, str):
            body = body.encode("utf-8")
        if body is not None and not isinstance(body, bytes):
            raise self.fail("The plugin tried to stream a request body, which alerts never send")
        url = prepared.url or ""
        headers = tuple(
            (name, value.decode("latin-1") if isinstance(value, bytes) else value)
            for name, value in prepared.headers.items()
            if name.lower() not in _OWN_HEADERS
        )
        request = Request(prepared.method or "GET", url, headers, body)
        try:
            answer = run_sync(
                lambda: within_deadline(
                    lambda conn: exchange(conn, request),
                    timeout=remaining,
                    allow_private=self.allow_private,
                    nameservers=self.nameservers,
                    shown=_host(url),
                )
            )
        except Refused as exc:
            raise self.fail(exc.sentence, permanent=exc.permanent) from None
        attempt = verdict(answer, duration=0.0, secrets=self.secrets)
        self.status = answer.status
        self.error = attempt.error
        self.permanent = attempt.permanent
        self.retry_after = attempt.retry_after
        if 300 <= answer.status < 400:
            raise requests.exceptions.ConnectionError(attempt.error)
        return _response(prepared, answer.status, answer.headers, answer.body)


def _host(url: str) -> str:
    return urlsplit(url).hostname or "the service"


def _response(
    prepared: requests.PreparedRequest, status: int, headers: tuple[tuple[str, str], ...], body: bytes
) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    response.headers = CaseInsensitiveDict(dict(headers))
    response._content = body
    response.encoding = get_encoding_from_headers(response.headers)
    response.url = prepared.url or ""
    response.request = prepared
    try:
        response.reason = http.HTTPStatus(status).phrase
    except ValueError:
        response.reason = ""
    return response


_local = threading.local()
_original_send = HTTPAdapter.send


def _guarded_send(self: HTTPAdapter, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> Any:
    exchange_: _Exchange | None = getattr(_local, "exchange", None)
    if exchange_ is None:
        return _original_send(self, request, *args, **kwargs)
    return exchange_.send(request)


# Once, process-wide: requests has no other hook that sees every request a plugin makes.
setattr(HTTPAdapter, "send", _guarded_send)  # noqa: B010


def send(
    config: AppriseConfig,
    alert: Alert,
    *,
    timeout: float,
    allow_private: bool,
    nameservers: tuple[str, ...] = (),
    mail_connection: Any = None,
) -> Attempt:
    """Notify through the URL's plugin; every request it makes is guarded and bounded as above."""
    started = time.perf_counter()
    plugin = _plugin(config.url)
    if plugin is None:
        return Attempt(ok=False, duration=0.0, error="Apprise no longer accepts this URL", permanent=True)
    plugin.redirects = False
    # The ledger retries, with backoff, within the kind's horizon: one delivery is one try here,
    # whatever the URL's retry= and wait= say (Apprise would sleep between its own tries).
    plugin.retry = 0
    state = _Exchange(
        deadline=started + timeout,
        allow_private=allow_private,
        nameservers=nameservers,
        secrets=_secrets_of(config.url),
    )
    _local.exchange = state
    try:
        delivered = bool(
            plugin.notify(
                body=render.text(alert),
                title=render.headline(alert),
                notify_type=_notify_type(alert),
                body_format=apprise.NotifyFormat.TEXT,
                overflow=apprise.OverflowMode.TRUNCATE,
            )
        )
    except Exception as exc:  # a plugin's bug must be this attempt's failure, not the worker's
        state.error = state.error or f"The {type(plugin).__name__} plugin failed: {type(exc).__name__}"
        delivered = False
    finally:
        _local.exchange = None
    duration = time.perf_counter() - started
    if delivered:
        return Attempt(ok=True, duration=duration, status_code=state.status)
    error = state.error or f"{type(plugin).__name__} did not accept the notification"
    return Attempt(
        ok=False,
        duration=duration,
        status_code=state.status,
        error=error,
        permanent=state.permanent,
        retry_after=state.retry_after,
    )


def _secrets_of(url: str) -> list[str]:
    """Return the URL's parts that may be tokens, to keep out of error sentences."""
    rest = url.split("://", 1)[-1]
    parts = re.split(r"[/?&=:@#]", unquote(rest))
    return [part for part in parts if len(part) >= 6]


KIND: ChannelKind[AppriseConfig] = ChannelKind(
    name="apprise",
    label="Slack, Discord, Teams, Telegram and more (Apprise)",
    parse=parse,
    dump=dump,
    masked=masked,
    send=send,
    secret_fields=("url",),
    retry_horizon=timedelta(hours=1),
    # Discord allows 30 messages a minute per webhook, Slack about one a second.
    rate_per_minute=30,
)
register(KIND)
