"""The JSON body is canonical and its ETag strong: same content, same bytes, same tag; any change, a new tag."""

from __future__ import annotations

import math

import pytest

from statuspages.render.etag import etag_matches, json_body, strong_etag


def test_the_body_is_compact_utf8_in_the_order_built():
    assert json_body({"b": 1, "a": ["é", None, True]}) == '{"b":1,"a":["é",null,true]}'.encode()


def test_a_lone_surrogate_is_escaped_rather_than_failing_the_answer():
    body = json_body({"name": "a\ud800b"})

    assert body == b'{"name":"a\\ud800b"}'


def test_a_body_without_a_json_number_is_refused():
    with pytest.raises(ValueError, match="JSON compliant"):
        json_body({"ms": math.nan})


def test_the_same_content_makes_the_same_strong_tag():
    first = strong_etag(json_body({"page": {"id": "p1"}, "components": []}))
    again = strong_etag(json_body({"page": {"id": "p1"}, "components": []}))

    assert first == again
    assert first.startswith('"')
    assert first.endswith('"')
    assert not first.startswith("W/")
    assert len(first) == 34


def test_any_change_makes_a_new_tag():
    assert strong_etag(b'{"status":"none"}') != strong_etag(b'{"status":"minor"}')


@pytest.mark.parametrize(
    ("header", "matches"),
    [
        (None, False),
        ("", False),
        ('"abc"', True),
        ('W/"abc"', True),  # If-None-Match compares weakly
        ('"xyz", "abc"', True),
        ('"xyz"', False),
        ("*", True),
        ("abc", False),  # unquoted: not the tag
    ],
)
def test_if_none_match_is_compared_weakly(header, matches):
    assert etag_matches(header, '"abc"') is matches
