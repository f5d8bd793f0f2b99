"""The event-stream parser: WHATWG line, field and dispatch rules, and chunking that never matters."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from probes.sse import SseEvent, SseParser


def parse(*chunks: bytes) -> list[SseEvent]:
    parser = SseParser()
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    return events + parser.close()


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending_dispatches(newline):
    assert parse(b"data: a" + newline + newline) == [SseEvent("a")]


def test_crlf_split_across_chunks_is_one_line_end():
    assert parse(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n") == [SseEvent("a\nb")]


def test_multi_line_data_joins_with_lf():
    assert parse(b'data: {\ndata:  "x": 1\ndata: }\n\n') == [SseEvent('{\n "x": 1\n}')]


def test_comments_are_ignored():
    assert parse(b": keep-alive\n\n: x\ndata: a\n\n") == [SseEvent("a")]


def test_event_type_and_id_are_kept():
    assert parse(b"event: endpoint\nid: 7\ndata: /messages\n\n") == [SseEvent("/messages", "endpoint", "7")]


def test_last_event_id_persists_across_events():
    events = parse(b"id: 1\ndata: a\n\ndata: b\n\n")
    assert [event.last_event_id for event in events] == ["1", "1"]


def test_id_with_nul_is_ignored():
    assert parse(b"id: 1\n\nid: a\x00b\ndata: x\n\n") == [SseEvent("x", last_event_id="1")]


@pytest.mark.parametrize(
    ("line", "expected"), [(b"retry: 2000", 2000), (b"retry: 20x", None), (b"retry: -1", None)]
)
def test_retry_counts_only_when_all_digits(line, expected):
    parser = SseParser()
    parser.feed(line + b"\n\n")
    assert parser.retry_ms == expected


def test_a_block_without_data_dispatches_nothing():
    assert parse(b"id: 5\nevent: x\n\n") == []


def test_empty_data_line_dispatches_an_empty_event():
    assert parse(b"id: 0\ndata:\n\n") == [SseEvent("", last_event_id="0")]


def test_event_type_resets_after_dispatch():
    assert [event.event for event in parse(b"event: a\ndata: 1\n\ndata: 2\n\n")] == ["a", "message"]


def test_field_without_colon_and_one_space_rule():
    assert parse(b"data\n\ndata:  two spaces\n\n") == [SseEvent(""), SseEvent(" two spaces")]


def test_unknown_fields_are_ignored():
    assert parse(b"foo: bar\ndata: a\n\n") == [SseEvent("a")]


def test_leading_bom_is_dropped_once():
    assert parse(b"\xef\xbb\xbfdata: a\n\n") == [SseEvent("a")]


def test_an_unfinished_event_at_the_end_is_discarded():
    assert parse(b"data: a\n\ndata: b\n") == [SseEvent("a")]


def test_a_held_back_cr_still_ends_a_line_at_the_end():
    assert parse(b"data: a\r\r") == [SseEvent("a")]


def test_utf8_split_inside_a_character_decodes():
    text = "data: héllo ✓\n\n".encode()
    assert parse(*(text[i : i + 1] for i in range(len(text)))) == [SseEvent("héllo ✓")]


def test_invalid_utf8_is_replaced_not_fatal():
    assert parse(b"data: \xff\n\n") == [SseEvent("\ufffd")]


_field_text = st.text(
    st.characters(blacklist_characters="\r\n\x00", blacklist_categories=("Cs",)), max_size=20
)
_events = st.lists(
    st.tuples(st.lists(_field_text, min_size=1, max_size=3), st.sampled_from(["", "message", "endpoint"])),
    max_size=6,
)


def _serialize(events: list[tuple[list[str], str]], newline: str) -> bytes:
    out = []
    for lines, kind in events:
        if kind:
            out.append(f"event: {kind}{newline}")
        out.append(": comment" + newline)
        out.extend(f"data: {line}{newline}" for line in lines)
        out.append(newline)
    return "".join(out).encode()


@given(_events, st.sampled_from(["\n", "\r\n", "\r"]), st.lists(st.integers(0, 400), max_size=8))
def test_round_trip_survives_any_chunking(events, newline, cuts):
    data = _serialize(events, newline)
    points = sorted({min(cut, len(data)) for cut in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    expected = [SseEvent("\n".join(lines), kind or "message") for lines, kind in events]
    assert parse(*chunks) == expected
    assert parse(data) == expected


@given(st.binary(max_size=300), st.lists(st.integers(0, 300), max_size=6))
def test_arbitrary_bytes_never_crash_and_chunking_never_matters(data, cuts):
    points = sorted({min(cut, len(data)) for cut in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    assert parse(*chunks) == parse(data)
