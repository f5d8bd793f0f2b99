"""Parse a text/event-stream incrementally, by the WHATWG "event stream interpretation" rules.

Pure: bytes go in through :meth:`SseParser.feed`, dispatched events come out. Line ends are
CRLF, LF or CR (a CR at the end of one chunk may pair with an LF at the start of the next);
a leading BOM is dropped; ``:`` lines are comments; several ``data`` lines join with LF;
``id`` containing NUL is ignored; ``retry`` counts only when it is all ASCII digits; and an
event still being built when the stream ends is discarded, never dispatched.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SseEvent:
    """Hold one dispatched event; ``last_event_id`` is the stream's id when it was dispatched."""

    data: str
    event: str = "message"
    last_event_id: str = ""


class SseParser:
    """Turn chunks of an event stream into :class:`SseEvent` values as they complete."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        self._started = False
        self._data: list[str] = []
        self._has_data = False
        self._event = ""
        self.last_event_id = ""
        self.retry_ms: int | None = None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Return the events that ``chunk`` completes."""
        return self._consume(self._decoder.decode(chunk))

    def close(self) -> list[SseEvent]:
        """Return the events completed by the end of the stream (an unfinished event is dropped)."""
        events = self._consume(self._decoder.decode(b"", final=True))
        pending, self._pending = self._pending, ""
        if pending.endswith("\r"):
            # The CR held back in case an LF followed was a line end after all.
            self._line(pending[:-1], events)
        return events

    def _consume(self, text: str) -> list[SseEvent]:
        if not self._started and text:
            self._started = True
            text = text.removeprefix("\ufeff")
        text = self._pending + text
        events: list[SseEvent] = []
        start = 0
        length = len(text)
        while start < length:
            cr = text.find("\r", start)
            lf = text.find("\n", start)
            if cr == -1 and lf == -1:
                break
            if cr == -1 or (lf != -1 and lf < cr):
                self._line(text[start:lf], events)
                start = lf + 1
                continue
            if cr == length - 1:
                # Wait for the next chunk: this CR may be the first half of a CRLF.
                break
            self._line(text[start:cr], events)
            start = cr + 2 if text[cr + 1] == "\n" else cr + 1
        self._pending = text[start:]
        return events

    def _line(self, line: str, events: list[SseEvent]) -> None:
        if not line:
            self._dispatch(events)
            return
        if line[0] == ":":
            return
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._has_data = True
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry_ms = int(value)

    def _dispatch(self, events: list[SseEvent]) -> None:
        if self._has_data:
            events.append(SseEvent("\n".join(self._data), self._event or "message", self.last_event_id))
        self._data = []
        self._has_data = False
        self._event = ""
