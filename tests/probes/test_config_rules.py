"""Config rules where input enters: each bad value is refused naming its field, and no secret is echoed."""

from __future__ import annotations

import pytest

from probes.checks.http import parse_http_config
from probes.checks.mcp import parse_mcp_config
from probes.config import ConfigError

URI = "https://mcp.example.com/mcp"
SECRET = "sk-live-4f9a8b7c6d5e"


def errors_of(parse, config: dict) -> dict[str, str]:
    with pytest.raises(ConfigError) as caught:
        parse(config)
    return caught.value.errors


@pytest.mark.parametrize(
    "value",
    [
        f"Bearer {SECRET} ",
        f" Bearer {SECRET}",
        f"Bearer {SECRET}\t",
        f"Bearer {SECRET}\x00",
        f"Bearer {SECRET}\x7f",
        f"Bearer {SECRET}\u0085",
        f"Bearer {SECRET}\ud800",
        f"Bearer {SECRET}é",
        f"Bearer\r\n{SECRET}",
    ],
    ids=["trailing space", "leading space", "tab", "NUL", "DEL", "C1", "lone surrogate", "non-ASCII", "CRLF"],
)
def test_a_header_value_that_can_not_be_sent_as_is_is_refused_without_echoing_it(value):
    errors = errors_of(parse_mcp_config, {"uri": URI, "headers": {"Authorization": value}})

    assert list(errors) == ["headers.Authorization"]
    assert SECRET not in str(errors)


@pytest.mark.parametrize(
    "name",
    [
        "Transfer-Encoding",
        "content-length",
        "Connection",
        "Host",
        "Keep-Alive",
        "TE",
        "Trailer",
        "Upgrade",
        "Proxy-Connection",
        "Expect",
    ],
)
def test_a_header_the_engine_owns_can_not_be_configured(name):
    errors = errors_of(parse_http_config, {"uri": URI, "headers": {name: "x"}})

    assert "Uptimy sets this header itself" in errors[f"headers.{name}"]


@pytest.mark.parametrize(
    ("uri", "words"),
    [
        ("http://0177.0.0.1/mcp", "four decimal numbers"),
        ("http://010.1.1.1/mcp", "four decimal numbers"),
        ("http://127.1/mcp", "four decimal numbers"),
        ("http://3232235521/mcp", "four decimal numbers"),
        ("http://0x7f.0.0.1/mcp", "four decimal numbers"),
        ("http://\uff11\uff12\uff17.0.0.1/mcp", "four decimal numbers"),
        ("http://example.\u0661\u0662/mcp", "ASCII"),
        ("http://a..example.com/mcp", "empty label"),
        ("http://ex$ample.com/mcp", "characters DNS names can't hold"),
        ("http://[fe80::1%25eth0]/mcp", "zone"),
        ("http://exa\u00admple.com/mcp", "Not a valid URL"),
        ("http://example.com/\ud800", "invalid Unicode"),
        ("http://example.com/\x00", "control characters"),
    ],
)
def test_a_uri_whose_host_is_not_canonical_is_refused(uri, words):
    errors = errors_of(parse_mcp_config, {"uri": uri})

    assert words in errors["uri"]


@pytest.mark.parametrize(
    "uri",
    [
        "https://mcp.example.com/mcp",
        "http://192.0.2.1:8080/mcp",
        "http://[2001:db8::1]/mcp",
        "https://bücher.example/mcp",
        "https://xn--bcher-kva.example/mcp",
        "http://my_service.internal/mcp",
        "https://1e100.net/",
        "https://example.com./mcp",
    ],
)
def test_canonical_hosts_are_accepted(uri):
    assert parse_mcp_config({"uri": uri}).uri == uri


@pytest.mark.parametrize("name", ["search\x00", "search\ud800", "search\nnow"])
def test_a_required_tool_name_with_nul_a_surrogate_or_a_line_break_is_refused(name):
    errors = errors_of(parse_mcp_config, {"uri": URI, "requiredTools": [name]})

    assert "control characters or invalid Unicode" in errors["requiredTools"]


@pytest.mark.parametrize(
    ("field", "value"),
    [("keyword", "ok\x00"), ("keyword", "ok\udfff"), ("body", '{"q": 1}\x00'), ("body", "\ud800")],
)
def test_http_texts_refuse_nul_and_lone_surrogates(field, value):
    config = {"uri": URI, field: value, "method": "POST"}

    assert field in errors_of(parse_http_config, config)


def test_an_http_body_may_hold_line_breaks_and_tabs():
    body = '{\n\t"query": "status"\r\n}'

    assert parse_http_config({"uri": URI, "method": "POST", "body": body}).body == body
