"""The parse rules of every channel kind (tables), masking, and the registry."""

from __future__ import annotations

import base64
import json

import pytest

from alerts.channels import (
    MASK,
    ChannelConfigError,
    channel_kind,
    generate_secret,
    kinds,
    target_problem,
    unmask,
)

SECRET = generate_secret()
KEY = "R0UT1NGKEY0123456789abcdefABCDEF"
SLACK = "slack://T1ABCDEFG/B1ABCDEFG/abcdefghijklmnopqrstuvwx"


def refusal(kind: str, raw: object) -> tuple[str, str]:
    with pytest.raises(ChannelConfigError) as caught:
        channel_kind(kind).parse(raw)  # type: ignore[arg-type]
    return caught.value.field, caught.value.message


def test_every_kind_is_registered_once():
    assert [kind.name for kind in kinds()] == ["apprise", "email", "pagerduty", "webhook"]


def test_an_unknown_kind_names_the_kind_field():
    with pytest.raises(ChannelConfigError) as caught:
        channel_kind("carrier-pigeon")
    assert caught.value.field == "kind"
    assert "apprise, email, pagerduty, webhook" in caught.value.message


@pytest.mark.parametrize(
    ("raw", "field", "words"),
    [
        ([], "config", "must be an object"),
        ({}, "config.recipients", "at least one"),
        ({"recipients": []}, "config.recipients", "at least one"),
        ({"recipients": "nobody"}, "config.recipients[0]", "not a valid email address"),
        ({"recipients": ["a@example.com", 7]}, "config.recipients[1]", "must be an email address"),
        ({"recipients": ["a@example.com", "not an address"]}, "config.recipients[1]", "not a valid"),
        ({"recipients": [f"u{i}@example.com" for i in range(21)]}, "config.recipients", "at most 20"),
        ({"recipients": ["a" * 250 + "@example.com"]}, "config.recipients[0]", "at most 254"),
        ({"recipients": ["a@example.com"], "cc": "b@example.com"}, "config.cc", "not a field"),
    ],
)
def test_email_refusals(raw, field, words):
    got_field, message = refusal("email", raw)
    assert got_field == field
    assert words in message


def test_email_recipients_are_lowered_and_deduplicated():
    config = channel_kind("email").parse({"recipients": "A@example.com, a@example.com; b@example.com"})
    assert config.recipients == ("a@example.com", "b@example.com")


@pytest.mark.parametrize(
    ("raw", "field", "words"),
    [
        ({"secret": SECRET}, "config.url", "required"),
        ({"url": "ftp://example.com/x", "secret": SECRET}, "config.url", "http:// or https://"),
        ({"url": "https://", "secret": SECRET}, "config.url", ""),
        ({"url": "https://user:pw@example.com/x", "secret": SECRET}, "config.url", "user name or password"),
        ({"url": "https://example.com/x#frag", "secret": SECRET}, "config.url", "fragment"),
        ({"url": "https://example.com/" + "a" * 2100, "secret": SECRET}, "config.url", "at most 2048"),
        ({"url": "https://example.com/\nx", "secret": SECRET}, "config.url", ""),
        ({"url": "https://example.com/x"}, "config.secret", "required"),
        ({"url": "https://example.com/x", "secret": "hunter2"}, "config.secret", "whsec_"),
        ({"url": "https://example.com/x", "secret": "whsec_!!!"}, "config.secret", "base64"),
        (
            {"url": "https://example.com/x", "secret": "whsec_" + base64.b64encode(b"short").decode()},
            "config.secret",
            "24 to 64 bytes",
        ),
        (
            {"url": "https://example.com/x", "secret": SECRET, "previous_secret": generate_secret()},
            "config.previous_secret_until",
            "required",
        ),
        (
            {
                "url": "https://example.com/x",
                "secret": SECRET,
                "previous_secret_until": "2026-12-01T00:00:00Z",
            },
            "config.previous_secret",
            "required",
        ),
        (
            {
                "url": "https://example.com/x",
                "secret": SECRET,
                "previous_secret": generate_secret(),
                "previous_secret_until": "2026-12-01T00:00:00",
            },
            "config.previous_secret_until",
            "time zone",
        ),
        (
            {
                "url": "https://example.com/x",
                "secret": SECRET,
                "previous_secret": generate_secret(),
                "previous_secret_until": "2999-01-01T00:00:00Z",
            },
            "config.previous_secret_until",
            "within 30 days",
        ),
        ({"url": "https://example.com/x", "secret": SECRET, "headers": {}}, "config.headers", "not a field"),
    ],
)
def test_webhook_refusals(raw, field, words):
    got_field, message = refusal("webhook", raw)
    assert got_field == field
    assert words in message


@pytest.mark.parametrize(
    ("raw", "field", "words"),
    [
        ({}, "config.routing_key", "required"),
        ({"routing_key": "short"}, "config.routing_key", "20 to 64 letters and digits"),
        ({"routing_key": "k" * 31 + "!"}, "config.routing_key", "letters and digits"),
        ({"routing_key": KEY, "events_url": "pagerduty"}, "config.events_url", ""),
        ({"routing_key": KEY, "events_url": "gopher://events.eu.pagerduty.com"}, "config.events_url", "http"),
    ],
)
def test_pagerduty_refusals(raw, field, words):
    got_field, message = refusal("pagerduty", raw)
    assert got_field == field
    assert words in message


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("mailto://user:pass@example.com", "the scheme mailto:// is not allowed"),
        ("syslog://", "the scheme syslog:// is not allowed"),
        ("file:///etc/passwd", "the scheme file:// is not allowed"),
        ("windows://", "the scheme windows:// is not allowed"),
        ("json://example.com/?keyfile=/etc/ssl/private/key.pem", "keyfile= names a local file"),
        ("json://example.com/?attach=x", "attach= names a local file"),
        (f"{SLACK}?template=/etc/passwd", "template= names a local file"),
        (
            "slack://T1ABCDEFG/B1ABCDEFG/abcdefghijklmnopqrstuvwx/#alerts?keyfile=/x",
            "keyfile= names a local file",
        ),
        # No parameter on json://'s row reads a file: one it does not document is refused by name.
        ("json://example.com/?to=~/secrets", "the parameter to= is not allowed for json://"),
        ("json://example.com/?a=b;keyfile=/etc/ssl/private/key.pem", "the parameter a= is not allowed"),
        ("json://example.com/?format=text;keyfile=/etc/ssl/private/key.pem", "keyfile= names a local file"),
        ("json://example.com/?verify=never", "certificate checks cannot be turned off"),
        ("json://example.com/?verify=no", "certificate checks cannot be turned off"),
        ("slack://onlyonetoken", "Apprise does not accept this URL"),
        ("https://example.com/not-a-known-service", "Apprise does not accept this URL"),
        ("no scheme at all", "must be an Apprise URL"),
    ],
)
def test_apprise_refusals(url, words):
    field, message = refusal("apprise", {"url": url})
    assert field == "config.url"
    assert words in message


@pytest.mark.parametrize(
    "url",
    [
        SLACK,
        "https://hooks.slack.com/services/T1ABCDEFG/B1ABCDEFG/abcdefghijklmnopqrstuvwx",
        "discord://123456789012345678/abcdefghijklmnopqrstuvwxyz0123456789",
        "tgram://123456789:abcdefghijklmnopqrstuvwxyz123456789/12345",
        "workflows://prod.westus.logic.azure.com:443/workflowid123/signature456",
        "ntfy://ntfy.sh/uptimy-alerts",
        "json://hooks.example.com/alerts?+X-Token=abcdef",
        "form://hooks.example.com/alerts",
    ],
)
def test_apprise_accepts_allowed_services(url):
    assert channel_kind("apprise").parse({"url": url}).url == url


@pytest.mark.parametrize(
    ("kind", "raw", "shown"),
    [
        ("webhook", {"url": "https://hooks.example.com/t/abc123", "secret": SECRET}, {
            "url": f"https://hooks.example.com/{MASK}", "secret": MASK}),
        ("webhook", {"url": "https://hooks.example.com", "secret": SECRET}, {
            "url": "https://hooks.example.com", "secret": MASK}),
        ("pagerduty", {"routing_key": KEY}, {
            "routing_key": MASK, "events_url": "https://events.pagerduty.com/v2/enqueue"}),
        ("apprise", {"url": SLACK}, {"url": f"slack://{MASK}"}),
        ("email", {"recipients": ["a@example.com"]}, {"recipients": ["a@example.com"]}),
    ],
)  # fmt: skip
def test_masked_configs_hide_every_secret(kind, raw, shown):
    channel = channel_kind(kind)
    masked = channel.masked(channel.parse(raw))
    assert masked == shown
    text = json.dumps(masked)
    for name in channel.secret_fields:
        if name in raw and raw[name] != shown.get(name):
            assert raw[name] not in text


@pytest.mark.parametrize("kind", ["webhook", "pagerduty", "apprise", "email"])
def test_a_stored_config_parses_back_to_itself(kind):
    raw = {
        "webhook": {"url": "https://hooks.example.com/t/abc123", "secret": SECRET},
        "pagerduty": {"routing_key": KEY, "events_url": "https://events.eu.pagerduty.com/v2/enqueue"},
        "apprise": {"url": SLACK},
        "email": {"recipients": ["a@example.com"]},
    }[kind]
    channel = channel_kind(kind)
    config = channel.parse(raw)
    assert channel.parse(channel.dump(config)) == config


def test_unmask_keeps_stored_secrets_sent_back_masked():
    channel = channel_kind("webhook")
    stored = channel.parse({"url": "https://hooks.example.com/t/abc123", "secret": SECRET})
    edited = unmask(channel, stored, {"url": f"https://hooks.example.com/{MASK}", "secret": MASK})
    assert edited == {"url": "https://hooks.example.com/t/abc123", "secret": SECRET}


def test_unmask_takes_a_new_secret():
    channel = channel_kind("apprise")
    stored = channel.parse({"url": SLACK})
    assert unmask(channel, stored, {"url": "json://example.com/"}) == {"url": "json://example.com/"}


@pytest.mark.parametrize(
    ("url", "allow_private", "words"),
    [
        ("http://127.0.0.1:9/x", False, "127.0.0.1 is a loopback address"),
        ("http://10.1.2.3/x", False, "10.1.2.3 is a private address"),
        ("http://[::1]/x", False, "::1 is a loopback address"),
        ("http://169.254.169.254/latest", False, "a link-local address"),
        ("http://127.0.0.1:9/x", True, None),
    ],
)
def test_target_problem_runs_the_address_guard(url, allow_private, words):
    problem = target_problem(url, allow_private=allow_private)
    if words is None:
        assert problem is None
    else:
        assert problem is not None
        assert words in problem


def test_kinds_name_their_targets():
    webhook = channel_kind("webhook")
    config = webhook.parse({"url": "https://hooks.example.com/x", "secret": SECRET})
    assert webhook.targets(config) == ("https://hooks.example.com/x",)
