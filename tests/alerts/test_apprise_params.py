"""Apprise URLs' parameters: Apprise's own reading of them, per-scheme allow-lists, no file ever read.

Every spelling Apprise reads (``&`` and ``;`` between pairs, percent-encoded names, repeated keys,
case, ``+``/``-``/``:`` and space-prefixed keys) is refused for every allowed scheme and every
parameter that reads a file or weakens TLS; a spy on ``open`` and a real receiver show that nothing
is read and nothing arrives. The samples are one valid URL per allowed scheme.
"""

from __future__ import annotations

import builtins
import json
import os
from pathlib import Path

import pytest
from apprise.manager_plugins import NotificationManager

import alerts.channels.http
from alerts.channels import ChannelConfigError, channel_kind
from alerts.channels.apprise import _CONNECTION_PARAMS, _FILE_PARAMS, ALLOWED_PARAMS, ALLOWED_SCHEMES

KIND = channel_kind("apprise")
URL = "/api/v1/channels/"
MARKER = "uptimy-secret-3f9a7c"

T = "abcdefghijklmnopqrstuvwx"
SAMPLES = {
    "slack": f"slack://T1ABCDEFG/B1ABCDEFG/{T}",
    "discord": "discord://123456789012345678/abcdefghijklmnopqrstuvwxyz0123456789",
    "workflow": "workflow://hooks.test:8443/workflowid123/signature456",
    "workflows": "workflows://hooks.test:8443/workflowid123/signature456",
    "tgram": "tgram://123456789:abcdefghijklmnopqrstuvwxyz123456789/12345",
    "mmost": "mmost://hooks.test/abcdefghijklmnopqrstuvwxyz",
    "mmosts": "mmosts://hooks.test/abcdefghijklmnopqrstuvwxyz",
    "rocket": "rocket://user:pass@hooks.test/#general",
    "rockets": "rockets://user:pass@hooks.test/#general",
    "matrix": "matrix://user:pass@hooks.test/#room",
    "matrixs": "matrixs://user:pass@hooks.test/#room",
    "zulip": "zulip://botname@organization/abcdefghijklmnopqrstuvwxyzABCDEF",
    "gchat": "gchat://workspace/key/token",
    "webex": "webex://" + "a" * 80,
    "wxteams": "wxteams://" + "a" * 80,
    "guilded": "guilded://123456789012345678/abcdefghijklmnopqrstuvwxyz0123456789",
    "revolt": "revolt://bottoken/channelid",
    "flock": "flock://abcdefghijklmnopqrstuvwxyz",
    "ryver": "ryver://organization/abcdefghijklmno",
    "twist": "twist://password:user@example.com",
    "lark": "lark://abcdefghijklmnopqrstuvwxyz",
    "feishu": "feishu://abcdefghijklmnopqrstuvwxyz",
    "dingtalk": "dingtalk://abcdefghijklmnopqrstuvwxyz/12345678901",
    "wecombot": "wecombot://abcdefghijklmnopqrstuvwxyz",
    "line": "line://abcdefghijklmnopqrstuvwxyz/U1234567890",
    "cliq": "cliq://1001.abcdefghijklmnop/channel",
    "zcliq": "zcliq://1001.abcdefghijklmnop/channel",
    "zohocliq": "zohocliq://1001.abcdefghijklmnop/channel",
    "stackfield": "stackfield://0123abcd-0123-abcd-0123-0123456789ab",
    "signal": "signal://hooks.test/12345678901/12345678902",
    "signals": "signals://hooks.test/12345678901/12345678902",
    "ntfy": "ntfy://hooks.test/uptimy-alerts",
    "ntfys": "ntfys://hooks.test/uptimy-alerts",
    "gotify": "gotify://hooks.test/abcdefghijklmno",
    "gotifys": "gotifys://hooks.test/abcdefghijklmno",
    "pover": "pover://" + "u" * 30 + "@" + "a" * 30,
    "pbul": "pbul://abcdefghijklmnopqrstuvwxyz",
    "bark": "bark://hooks.test/devicekey",
    "barks": "barks://hooks.test/devicekey",
    "apprise": "apprise://hooks.test/abcdefghijklmno",
    "apprises": "apprises://hooks.test/abcdefghijklmno",
    "ifttt": "ifttt://abcdefghijklmnopqrstuvwxyz/event",
    "hassio": "hassio://hooks.test/" + "a" * 40,
    "hassios": "hassios://hooks.test/" + "a" * 40,
    "opsgenie": "opsgenie://abcdefghijklmnopqrstuvwxyz",
    "splunk": "splunk://route@abcdefghijklmnopqrstuvwxyz/entity",
    "victorops": "victorops://route@abcdefghijklmnopqrstuvwxyz/entity",
    "pagertree": "pagertree://int_abcdefghij",
    "squadcast": "squadcast://abcdefghijklmnopqrstuvwxyz",
    "ilert": "ilert://abcdefghijklmnopqrstuvwxyz",
    "incidentio": "incidentio://source01/abcdefghijklmnopqrstuvwxyz",
    "goalert": "goalert://hooks.test/abcdefghijklmno",
    "goalerts": "goalerts://hooks.test/abcdefghijklmno",
    "signl4": "signl4://abcdefghijklmnopqrstuvwxyz",
    "json": "json://hooks.test/alerts",
    "jsons": "jsons://hooks.test/alerts",
    "form": "form://hooks.test/alerts",
    "forms": "forms://hooks.test/alerts",
    "xml": "xml://hooks.test/alerts",
    "xmls": "xmls://hooks.test/alerts",
}

# What reads a file, fetches a template, or changes how the plugin connects (none is on any row).
FILE_PARAMS = sorted(_FILE_PARAMS)
CONNECTION_PARAMS = sorted(_CONNECTION_PARAMS)
VERIFY_OFF = ["no", "No", "NO", "off", "0", "false", "False", "n", "f", "fa", "disable", "never", "deny", ""]


def spellings(name: str, value: str) -> list[str]:
    """Return every way of writing ``name=value`` into a query that Apprise reads as that parameter."""
    encoded = "".join(f"%{ord(ch):02X}" for ch in name)
    return [
        f"?{name}={value}",
        f"?format=text&{name}={value}",
        f"?format=text;{name}={value}",
        f"?{name.upper()}={value}",
        f"?{name[:1].upper()}{name[1:]}={value}",
        f"?{encoded}={value}",
        f"?{name[:-1]}%{ord(name[-1]):02x}={value}",
        f"?{name}=x&{name}={value}",
        f"?{name}={value}&format=text",
        f"?+{name}={value}",
        f"?-{name}={value}",
        f"?:{name}={value}",
        f"?%2B{name}={value}",
        f"?%20{name}={value}",
        f"?{name}%20={value}",
    ]


def with_query(url: str, query: str) -> str:
    return url + ("/" if "#" not in url and not url.endswith("/") else "") + query


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "card.json"
    # A card Teams' Workflows plugin takes whole as its payload, so a read file would arrive.
    card = {
        "type": "message",
        "attachments": [
            {"contentType": "application/vnd.microsoft.card.adaptive", "content": {"text": MARKER}}
        ],
        "text": MARKER,
        "blocks": [],
    }
    path.write_text(json.dumps(card))
    return path


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch, secret_file: Path) -> list[str]:
    """Record every open() of the secret file, by any spelling of its path, from any module."""
    real_open = builtins.open
    seen: list[str] = []

    def spy(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        if isinstance(file, str | bytes | os.PathLike):
            try:
                if Path(os.fsdecode(file)).resolve() == secret_file.resolve():
                    seen.append(os.fsdecode(file))
            except (OSError, ValueError):
                pass
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy)
    monkeypatch.chdir(secret_file.parent)
    return seen


def refused(url: str) -> str | None:
    """Return the refusal's message, or None when the URL is taken."""
    try:
        KIND.parse({"url": url})
    except ChannelConfigError as exc:
        field, message = exc.field, exc.message
    else:
        return None
    assert field == "config.url"
    return message


def test_every_allowed_scheme_has_a_sample_and_a_row():
    assert set(SAMPLES) == set(ALLOWED_SCHEMES) == set(ALLOWED_PARAMS)


@pytest.mark.parametrize("scheme", sorted(SAMPLES))
def test_every_sample_is_taken(scheme):
    assert refused(SAMPLES[scheme]) is None


@pytest.mark.parametrize("scheme", sorted(ALLOWED_PARAMS))
def test_every_allowed_parameter_is_one_the_plugin_documents(scheme):
    plugin = NotificationManager()[scheme]
    names, prefixes = ALLOWED_PARAMS[scheme]
    assert names <= set(plugin.template_args)
    assert prefixes <= {spec.get("prefix") for spec in plugin.template_kwargs.values()}
    assert not names & (_FILE_PARAMS | _CONNECTION_PARAMS | {"verify"})


@pytest.mark.parametrize("scheme", sorted(SAMPLES))
def test_no_spelling_of_a_file_or_tls_parameter_is_taken_or_read(scheme, secret_file, opened):
    # Each refusal must be for the parameter itself (named, or the certificate sentence), not for
    # some other fault of the URL, so a guard that refused everything would fail here too.
    wrong: list[tuple[str, str | None]] = []
    for name in [*FILE_PARAMS, *CONNECTION_PARAMS]:
        for value in (str(secret_file), secret_file.name, f"https://hooks.test/{secret_file.name}"):
            for query in spellings(name, value):
                url = with_query(SAMPLES[scheme], query)
                message = refused(url)
                if message is None or f"{name}= " not in message:
                    wrong.append((url, message))
    for value in VERIFY_OFF:
        for query in spellings("verify", value):
            url = with_query(SAMPLES[scheme], query)
            message = refused(url)
            if message != "certificate checks cannot be turned off (verify=)":
                wrong.append((url, message))
    assert wrong == []
    assert opened == []


@pytest.mark.parametrize("scheme", sorted(SAMPLES))
def test_an_encoded_separator_hides_no_parameter(scheme, secret_file, opened):
    # %3B and %26 are not separators to Apprise: "format=text%3Btemplate=…" is one odd format value,
    # which Apprise drops. Taken or refused, the plugin built from it reads no file when it runs.
    for separator in ("%3B", "%26", "%3b"):
        url = with_query(SAMPLES[scheme], f"?format=text{separator}template={secret_file}")
        if refused(url) is None:
            KIND.targets(KIND.parse({"url": url}))
    assert opened == []


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("?a=b;template=card.json", "the parameter a= is not allowed for workflows://"),
        ("?image=no;template=card.json", "the parameter template= names a local file"),
        ("?image=no;TEMPLATE=card.json", "the parameter template= names a local file"),
        ("?image=no;te%6Dplate=card.json", "the parameter template= names a local file"),
        ("?image=no;%20template=card.json", "the parameter template= names a local file"),
        ("?image=no;:template=card.json", "the parameter :template= names a local file"),
        ("?image=no;verify=no", "certificate checks cannot be turned off (verify=)"),
        ("?image=no;verify=disable", "certificate checks cannot be turned off (verify=)"),
        ("?image=no;verify=", "certificate checks cannot be turned off (verify=)"),
        ("?image=no;+verify=yes", "certificate checks cannot be turned off (verify=)"),
        ("?image=no;cto=1", "the parameter cto= changes how the plugin connects"),
        ("?image=no;+X-Header=1", "the parameter +x-header= is not allowed: workflows:// takes no +keys"),
    ],
)
def test_refusals_name_the_parameter(query, words):
    message = refused(with_query(SAMPLES["workflows"], query))
    assert message is not None
    assert words in message


@pytest.mark.parametrize(
    "url",
    [
        with_query(
            SAMPLES["json"], "?format=text&overflow=split&emojis=yes&+X-Team=ops&-sound=&:message=text"
        ),
        with_query(SAMPLES["workflows"], "?image=no;wrap=yes&verify=yes"),
        with_query(SAMPLES["slack"], "?footer=no&image=no&format=markdown&tz=Europe/Paris"),
        with_query(SAMPLES["ntfy"], "?priority=high&xtags=warning&click=https://status.example.com"),
        "https://hooks.slack.com/services/T1ABCDEFG/B1ABCDEFG/abcdefghijklmnopqrstuvwx?footer=no",
    ],
)
def test_allowed_parameters_are_taken(url):
    assert refused(url) is None


# --- through the API, against a real receiver --------------------------------------------------


@pytest.fixture
def api(make_client, org, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    settings.UPTIMY_ALERT_SEND_TIMEOUT = 5.0
    return make_client(org)


@pytest.fixture
def tls(tls_receiver, monkeypatch):
    monkeypatch.setattr(alerts.channels.http, "default_ssl_context", lambda: tls_receiver.client)
    return tls_receiver.receiver


def add_and_test(api, url: str):
    """POST the channel; when it is taken, ask for a test send as an attacker would."""
    response = api.post(URL, {"name": "chat", "kind": "apprise", "config": {"url": url}}, format="json")
    if response.status_code == 201:
        api.post(f"{URL}{response.json()['id']}/test/")
    return response


def delivered(receiver) -> bytes:
    return b"".join(got.body for got in receiver.received)


@pytest.mark.django_db
@pytest.mark.parametrize("template", ["card.json", "absolute"])
def test_a_template_behind_a_semicolon_is_refused_and_never_sent(api, tls, secret_file, opened, template):
    path = secret_file.name if template == "card.json" else str(secret_file)
    url = f"workflows://hooks.test:{tls.port}/wf/sig/?image=no;template={path}"

    response = add_and_test(api, url)

    assert response.status_code == 400, response.content
    assert "template= names a local file" in response.json()["config.url"][0]
    assert MARKER.encode() not in delivered(tls)
    assert opened == []


@pytest.mark.django_db
def test_no_spelling_of_a_template_is_saved_for_any_scheme(api, tls, secret_file, opened):
    saved = []
    for scheme, sample in sorted(SAMPLES.items()):
        for query in spellings("template", secret_file.name)[:9]:
            response = add_and_test(api, with_query(sample, query))
            if response.status_code != 400 or "config.url" not in response.json():
                saved.append((scheme, query, response.status_code))
    assert saved == []
    assert MARKER.encode() not in delivered(tls)
    assert opened == []


@pytest.mark.django_db
@pytest.mark.parametrize("name", [*FILE_PARAMS, "verify", *CONNECTION_PARAMS])
def test_no_spelling_of_a_dangerous_parameter_is_saved(api, tls, secret_file, opened, name):
    value = "no" if name == "verify" else secret_file.name
    base = f"workflows://hooks.test:{tls.port}/wf/sig"
    saved = []
    for query in spellings(name, value):
        response = add_and_test(api, f"{base}/{query}")
        if response.status_code != 400:
            saved.append((query, response.status_code))
    assert saved == []
    assert MARKER.encode() not in delivered(tls)
    assert opened == []


@pytest.mark.django_db
def test_an_allowed_url_with_allowed_parameters_saves_and_sends(api, receiver):
    url = f"json://127.0.0.1:{receiver.port}/hook?format=text&overflow=truncate&verify=yes;+X-Team=ops"

    response = api.post(URL, {"name": "chat", "kind": "apprise", "config": {"url": url}}, format="json")
    assert response.status_code == 201, response.content
    attempt = api.post(f"{URL}{response.json()['id']}/test/").json()

    assert attempt["ok"] is True, attempt
    (got,) = receiver.received
    assert got.headers["x-team"] == "ops"
    assert json.loads(got.body)["title"].startswith("Test alert from Uptimy")


@pytest.mark.django_db
def test_an_allowed_workflows_url_saves_and_sends_over_tls(api, tls):
    url = f"workflows://hooks.test:{tls.port}/wf/sig/?image=no;wrap=yes"

    response = api.post(URL, {"name": "teams", "kind": "apprise", "config": {"url": url}}, format="json")
    assert response.status_code == 201, response.content
    attempt = api.post(f"{URL}{response.json()['id']}/test/").json()

    assert attempt["ok"] is True, attempt
    (got,) = tls.received
    assert got.path.startswith("/workflows/wf/triggers/manual/paths/invoke")
    assert b"Test alert from Uptimy" in got.body
