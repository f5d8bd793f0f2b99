"""Check how a form field's posted text becomes the API's config value, widget by widget."""

from __future__ import annotations

import pytest

from probes.checks.form import ABSENT, FormField, Widget, config_value

DEEP = "[" * 100_000 + "]" * 100_000


def field(widget: Widget, *, required: bool = False) -> FormField:
    return FormField("key", "key", "Key", widget, required=required)


@pytest.mark.parametrize(
    ("widget", "text", "value"),
    [
        (Widget.TEXT, "  hello ", "hello"),
        (Widget.TEXT, "   ", ABSENT),
        (Widget.URL, " https://example.com/ ", "https://example.com/"),
        (Widget.URL, "", ABSENT),
        (Widget.TEXTAREA, "line 1\nline 2\n", "line 1\nline 2\n"),
        (Widget.TEXTAREA, " \n ", ABSENT),
        (Widget.INTEGER, "42", 42),
        (Widget.INTEGER, "4.2", "4.2"),
        (Widget.INTEGER, "", ABSENT),
        (Widget.NUMBER, "2.5", 2.5),
        (Widget.NUMBER, "fast", "fast"),
        (Widget.CHOICE, "GET", "GET"),
        (Widget.CHECKBOX, "on", True),
        (Widget.CHECKBOX, "", False),
        (Widget.LINES, "a\nb, c\n\n", ["a", "b", "c"]),
        (Widget.LINES, " \n", ABSENT),
        (Widget.CODES, "2xx, 301\n200-299", ["2xx", 301, "200-299"]),
        (Widget.CODES, "٣٠١", ["٣٠١"]),
        (Widget.JSON, '{"op": "contains", "values": ["a"]}', {"op": "contains", "values": ["a"]}),
        (Widget.JSON, "[1, 2", "[1, 2"),
        (Widget.JSON, "", ABSENT),
        # Nested past what the engine reads: kept as typed (its parser names the field), never a crash.
        (Widget.JSON, DEEP, DEEP),
        (Widget.HEADERS, "X-Key: v", ABSENT),
    ],
)
def test_posted_text_becomes_the_config_value(widget, text, value):
    assert config_value(field(widget), text) == value


def test_a_required_url_left_empty_is_sent_empty_so_the_parser_names_it():
    assert config_value(field(Widget.URL, required=True), "") == ""


@pytest.mark.parametrize(
    ("widget", "stored", "shown"),
    [
        (Widget.CHECKBOX, True, "on"),
        (Widget.LINES, ["a", "b"], "a\nb"),
        (Widget.JSON, [], ""),
        (Widget.JSON, {"a": 1}, '{\n  "a": 1\n}'),
        (Widget.NUMBER, 10.0, "10"),
        (Widget.TEXT, None, ""),
    ],
)
def test_a_stored_value_is_shown_as_the_form_types_it(widget, stored, shown):
    assert field(widget).shown(stored) == shown
