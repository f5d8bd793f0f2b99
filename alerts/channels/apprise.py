"""Send alerts to Slack, Discord, Teams (workflows), Telegram and the rest through Apprise.

The whole Apprise URL is the secret (its tokens are the credentials). Only the schemes in
:data:`ALLOWED_SCHEMES` are taken: services Apprise reaches over HTTP(S), since those are the
ones whose traffic this module can guard. The URL is read once, by Apprise's own parser
(``apprise.plugins.url_to_dict``, what ``Apprise.instantiate`` runs), and the plugin is built from
that reading without sending anything: so ``;`` between parameters, encoded names, repeated keys
and prefixed keys are seen exactly as Apprise sees them. Only the parameters on the scheme's row
of :data:`ALLOWED_PARAMS` are taken; those that read a file or change how the plugin connects
are refused by name in any spelling, ``verify=`` only as a yes, and the built plugin must check
certificates and hold no attachment or template. On save the host the plugin's first request
would go to (:func:`targets`, a rehearsal with nothing sent) passes the address guard.

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
from urllib.parse import unquote, urlsplit

import apprise
import requests
from apprise import plugins as apprise_plugins
from apprise.attachment.base import AttachBase
from apprise.utils.parse import parse_bool
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

# Parameters no customer may set, named in refusals for what they are. They make a plugin read a
# local file (keys, certificates, attachments, the Block Kit or card templates of Slack, Discord,
# Telegram and Teams, which may also be fetched from any URL), or change how it connects.
_FILE_PARAMS = frozenset(
    {
        "keyfile", "key_file", "cert", "certfile", "cert_file", "cafile", "capath", "ca_certs",
        "attach", "attachment", "attachments", "attach-as", "file", "filename", "file_url",
        "image_path", "icon_path", "path", "template", "templates",
    }
)  # fmt: skip

# Parameters that change how a plugin connects or what Apprise keeps: timeouts, redirects,
# Matrix's server discovery and end-to-end keys, persistent storage, failure reporting. Refused by
# name under any prefix too, as the file parameters are, so no spelling of one is taken.
_CONNECTION_PARAMS = frozenset(
    {"cto", "rto", "redirect", "store", "optional", "discovery", "hsreq", "e2ee", "autoverify"}
)

# What every allowed plugin takes: the message's format, how an overlong one is cut, emoji
# expansion, the zone of its timestamps. ``retry`` and ``wait`` are read but have no effect: a
# delivery is one try (see send). ``verify`` is taken only to say yes (see _refuse_params).
_COMMON = frozenset({"format", "overflow", "emojis", "tz", "retry", "wait"})


def _each(schemes: str, names: str, prefixes: str = "") -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    allowed = (_COMMON | frozenset(names.split()), frozenset(prefixes))
    return {scheme: allowed for scheme in schemes.split()}


# The query parameters a customer may set, by scheme, and the key prefixes (``+`` headers or extra
# fields, ``-`` removed fields or query parameters, ``:`` renamed fields) the plugin takes. Each
# plugin's own ``template_args`` less everything that reads a file or fetches a template
# (_FILE_PARAMS, and the ``:`` template tokens of Slack, Discord, Guilded, Telegram and Teams),
# touches TLS or the connection (``verify`` but as yes, ``cto``, ``rto``, ``redirect``, Matrix's
# ``discovery``, ``hsreq``, ``e2ee`` and ``autoverify``, Pushover's ``e2ee``), or Apprise's own
# state (``store``, ``optional``). A parameter not in this table is refused, whatever Apprise
# would make of it: tests/alerts/test_apprise_params.py checks each name against the plugin.
ALLOWED_PARAMS: Mapping[str, tuple[frozenset[str], frozenset[str]]] = {
    **_each("apprise apprises", "method tags to version", "+"),
    **_each("bark barks", "action archive badge call category click copy delete group icon id image key level "
            "sound subtitle to ttl volume"),
    **_each("cliq zcliq zohocliq", "botname broadcast company image region to token"),
    **_each("dingtalk", "secret to token"),
    **_each("discord guilded", "avatar avatar_url batch fields flags footer footer_logo href image ping thread "
            "tts url"),
    **_each("feishu stackfield", "token"),
    **_each("lark", ""),
    **_each("flock line", "image to"),
    **_each("form forms json jsons xml xmls", "method", "+-:"),
    **_each("gchat", "key thread token workspace"),
    **_each("goalert goalerts", "action dedup to token", "+"),
    **_each("gotify gotifys", "priority"),
    **_each("hassio hassios", "batch nid prefix to token"),
    **_each("ifttt", "to", "+-"),
    **_each("ilert", "action click dedup image key priority route", "+"),
    **_each("incidentio", "action click dedup source token", "+"),
    **_each("matrix matrixs", "image mode msgtype to token version"),
    **_each("mmost mmosts", "botname channel channels icon_url image mode team to"),
    **_each("ntfy ntfys", "actions auth avatar_url click delay email image mode priority to token xtags"),
    **_each("opsgenie", "action alias batch entity priority region tags to", "+:"),
    **_each("pagertree", "action dedup tags thirdparty tid urgency", "+-:"),
    **_each("pbul twist", "to"),
    **_each("pover", "expire interval key priority sound to url url_title"),
    **_each("revolt", "bot_token channel icon_url to url"),
    **_each("rocket rockets", "avatar mode to webhook"),
    **_each("ryver", "image mode"),
    **_each("signal signals", "batch from status to"),
    **_each("signl4", "action alerting_scenario dedup external_id filtering location service status"),
    **_each("slack", "blocks footer image mode timestamp to token"),
    **_each("splunk victorops", "action apikey entity_id route routing_key", ":"),
    **_each("squadcast", "action dedup key priority region", "+"),
    **_each("tgram", "album content detect image mdv preview silent thread to topic"),
    **_each("webex wxteams", "mode to token"),
    **_each("wecombot", "key"),
    **_each("workflow workflows", "api-version id image pa powerautomate route routeid sig ver wrap"),
    **_each("zulip", "to token"),
}  # fmt: skip
_PREFIXES = {"qsd+": "+", "qsd-": "-", "qsd:": ":"}
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


def _parsed(url: str) -> dict[str, Any] | None:
    """Return Apprise's own reading of ``url``: what ``Apprise.instantiate`` would build the plugin from.

    ``url_to_dict`` is the parser ``Apprise.instantiate`` runs on a string (the plugin's
    ``parse_url``, or a service's own https URL through ``parse_native_url``). The guard reads
    its result and the plugin is built from that same result, so there is one reading of the
    URL, not ours beside Apprise's: ``;`` as well as ``&`` between parameters, percent-encoded
    names, repeated keys (the last wins), case, and the ``+``/``-``/``:`` keys are as Apprise sees them.
    """
    try:
        results = apprise_plugins.url_to_dict(url, secure_logging=True)  # type: ignore[no-untyped-call]
    except Exception:  # a plugin's parser bug is a URL Apprise does not accept
        return None
    return results if isinstance(results, dict) else None


def _instantiate(results: Mapping[str, Any]) -> Any:
    # A copy: instantiate adds the asset and tags to the dictionary it is given.
    return apprise.Apprise.instantiate(dict(results), asset=_asset(), suppress_exceptions=True)


def _plugin(url: str) -> Any:
    results = _parsed(url)
    return None if results is None else _instantiate(results)


def _protocols(plugin: Any) -> set[str]:
    names: set[str] = set()
    for attribute in ("protocol", "secure_protocol"):
        value = getattr(plugin, attribute, None)
        if isinstance(value, str):
            names.add(value.lower())
        elif isinstance(value, tuple | list):
            names.update(str(item).lower() for item in value)
    return names


def _refuse_params(results: Mapping[str, Any]) -> None:
    """Refuse every parameter of Apprise's reading that the scheme's row of ALLOWED_PARAMS does not name."""
    schema = str(results.get("schema") or "").lower()
    allowed, prefixes = ALLOWED_PARAMS.get(schema, (frozenset(), frozenset()))
    query: Mapping[str, Any] = results.get("qsd") or {}
    for key in query:
        name = str(key)
        if not name:
            continue  # "?a=b;" has an empty pair, which no plugin reads
        bare = name.lstrip("+-:")
        shown = render.flat(name, 40)
        if bare in _FILE_PARAMS:
            raise ChannelConfigError(
                "config.url", f"the parameter {shown}= names a local file and is not allowed"
            )
        if bare in _CONNECTION_PARAMS:
            raise ChannelConfigError(
                "config.url", f"the parameter {shown}= changes how the plugin connects and is not allowed"
            )
        if bare == "verify":
            # Apprise's own truth table: "no", "off", "0", "disable", "never", "" and anything it
            # can't read all turn the check off; only a yes leaves it on.
            if name != "verify" or not parse_bool(query[key], False):  # type: ignore[no-untyped-call]
                raise ChannelConfigError("config.url", "certificate checks cannot be turned off (verify=)")
            continue
        if name[0] in "+-:":
            if name[0] in prefixes:
                continue
            raise ChannelConfigError(
                "config.url", f"the parameter {shown}= is not allowed: {schema}:// takes no {name[0]}keys"
            )
        if name not in allowed:
            raise ChannelConfigError(
                "config.url",
                f"the parameter {shown}= is not allowed for {schema}:// (allowed: {', '.join(sorted(allowed))})",
            )
    for field, prefix in _PREFIXES.items():
        extra: Mapping[str, Any] = results.get(field) or {}
        if extra and prefix not in prefixes:
            # A key Apprise files under a prefix without the URL spelling it so (" x", from %20x).
            first = render.flat(str(next(iter(extra))), 40)
            raise ChannelConfigError(
                "config.url", f"the parameter {first}= is not allowed: {schema}:// takes no {prefix}keys"
            )


def _refuse_plugin_state(plugin: Any) -> None:
    """Refuse a plugin that, as built, would read a file or skip the certificate check."""
    if getattr(plugin, "verify_certificate", True) is not True:
        raise ChannelConfigError("config.url", "certificate checks cannot be turned off (verify=)")
    for value in vars(plugin).values():
        if isinstance(value, apprise.AppriseAttachment | AttachBase) and len(value):
            raise ChannelConfigError(
                "config.url", "the URL makes the plugin read a file, which is not allowed"
            )


def parse(raw: Mapping[str, Any]) -> AppriseConfig:
    """Return the Apprise config; every problem is a ChannelConfigError naming ``config.url``."""
    require_fields(raw, allowed=_FIELDS, kind="apprise")
    url = string_field(raw, "url", limit=MAX_URL)
    if "://" not in url:
        raise ChannelConfigError("config.url", "must be an Apprise URL such as slack://… or discord://…")
    scheme = url.split("://", 1)[0].lower()
    if scheme not in ALLOWED_SCHEMES and scheme not in {"http", "https"}:
        raise ChannelConfigError("config.url", f"the scheme {render.flat(scheme, 30)}:// is not allowed")
    results = _parsed(url)
    if results is None:
        raise ChannelConfigError(
            "config.url", "Apprise does not accept this URL: check its service and tokens"
        )
    schema = str(results.get("schema") or "").lower()
    if schema not in ALLOWED_SCHEMES:
        raise ChannelConfigError("config.url", f"the service {render.flat(schema, 30)}:// is not allowed")
    _refuse_params(results)
    plugin = _instantiate(results)
    if plugin is None:
        raise ChannelConfigError(
            "config.url", "Apprise does not accept this URL: check its service and tokens"
        )
    if not _protocols(plugin) & ALLOWED_SCHEMES:
        raise ChannelConfigError("config.url", f"the service {type(plugin).__name__} is not allowed")
    _refuse_plugin_state(plugin)
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


class _Rehearsal:
    """Stand in for the network while a plugin shows where it would connect: its first request's URL is kept, none is sent."""

    def __init__(self) -> None:
        self.url = ""

    def send(self, prepared: requests.PreparedRequest) -> requests.Response:
        self.url = self.url or prepared.url or ""
        raise requests.exceptions.ConnectionError("nothing is sent in a rehearsal")


def targets(config: AppriseConfig) -> tuple[str, ...]:
    """Return the URL the plugin's first request would go to, for the address guard on save.

    Learnt from the plugin itself, not from the URL: the plugin is built as a delivery builds it
    and asked to send a test alert, and the first request it makes is taken (its URL kept) and
    refused before any connection. So a service with a fixed host (slack:// goes to
    hooks.slack.com) names that host, and a custom one (json://, ntfy://) the host and port the
    plugin will really use. Empty when the plugin makes no request. Deliveries check every
    request again, since DNS answers change.
    """
    plugin = _plugin(config.url)
    if plugin is None:
        return ()
    plugin.retry = 0
    rehearsal = _Rehearsal()
    before = getattr(_local, "exchange", None)
    _local.exchange = rehearsal
    try:
        plugin.notify(
            body="Where does this channel send?",
            title="Uptimy",
            # A failure: the kind most alerts are, and one every plugin sends (Opsgenie's default
            # mapping sends nothing for an info it has no alert to note on).
            notify_type=apprise.NotifyType.FAILURE,
            body_format=apprise.NotifyFormat.TEXT,
            overflow=apprise.OverflowMode.TRUNCATE,
        )
    except Exception:  # noqa: S110  # the refused request may surface as a plugin's error: the URL is kept
        pass
    finally:
        _local.exchange = before
    return (rehearsal.url,) if rehearsal.url else ()


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
    exchange_: _Exchange | _Rehearsal | None = getattr(_local, "exchange", None)
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
    targets=targets,
    retry_horizon=timedelta(hours=1),
    # Discord allows 30 messages a minute per webhook, Slack about one a second.
    rate_per_minute=30,
)
register(KIND)
