"""A key pasted into a monitor's URL is found (and taken out), so add_monitors can refuse it."""

from __future__ import annotations

import pytest

from mcpserver.keys import key_in_url, without_key


@pytest.mark.parametrize(
    ("url", "found"),
    [
        ("https://mcp.example.com/mcp", None),
        ("https://mcp.example.com/mcp?region=eu&page=2", None),
        ("https://user:secret@mcp.example.com/mcp", "a user name or password"),
        ("https://token@mcp.example.com/mcp", "a user name or password"),
        ("https://mcp.example.com/mcp?key=abc", "the query parameter key"),
        ("https://mcp.example.com/mcp?token=abc", "the query parameter token"),
        ("https://mcp.example.com/mcp?api_key=abc", "the query parameter api_key"),
        ("https://mcp.example.com/mcp?apiKey=abc", "the query parameter apiKey"),
        ("https://mcp.example.com/mcp?api-key=abc", "the query parameter api-key"),
        ("https://mcp.example.com/mcp?access_token=abc", "the query parameter access_token"),
        ("https://mcp.example.com/mcp?x_api_key=abc", "the query parameter x_api_key"),
        ("https://mcp.example.com/mcp?client_secret=abc", "the query parameter client_secret"),
        ("https://mcp.example.com/mcp?tokenizer=bpe", None),
        ("https://mcp.example.com/mcp?monkey=1", None),
        ("not a url at all", None),
    ],
)
def test_a_key_in_a_url_is_named_by_where_it_is(url, found):
    assert key_in_url(url) == found


@pytest.mark.parametrize(
    ("url", "keyless"),
    [
        ("https://user:secret@mcp.example.com/mcp", "https://mcp.example.com/mcp"),
        ("https://mcp.example.com/mcp?token=abc&region=eu", "https://mcp.example.com/mcp?region=eu"),
        ("https://mcp.example.com:8443/mcp?api_key=abc", "https://mcp.example.com:8443/mcp"),
    ],
)
def test_the_url_without_its_key_keeps_everything_else(url, keyless):
    assert without_key(url) == keyless
