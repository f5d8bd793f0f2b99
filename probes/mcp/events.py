"""Read an event stream one event at a time, within the check's byte and event caps.

Both transports read server-sent events (a POST answered with ``text/event-stream``, and the
long-lived GET stream of a legacy HTTP+SSE session), so the caps that bound a hostile stream live
in this one reader and hold the same on either path. It knows nothing of JSON-RPC or of the
exchange, which is what lets the exchange's state hold a reader without an import cycle.
"""

from __future__ import annotations

from probes.connection import MAX_BODY_BYTES, CheckFailed, too_large_words
from probes.sse import SseEvent, SseParser
from probes.types import FailureKind
from probes.wire import Response, WireError

MAX_EVENTS = 1000


class EventReader:
    """Read events from an event-stream response, within the byte and event caps."""

    def __init__(self, response: Response) -> None:
        self.response = response
        self._parser = SseParser()
        self._ready: list[SseEvent] = []
        self._size = 0
        self._count = 0
        self._ended = False

    async def next(self) -> SseEvent | None:
        """Return the next event, or None when the stream has ended."""
        while not self._ready:
            if self._ended:
                return None
            try:
                chunk = await self.response.read_chunk()
            except WireError:
                # A connection dropped mid-stream ends the stream as surely as a clean close.
                self._ended = True
                continue
            if not chunk:
                self._ended = True
                self._ready.extend(self._parser.close())
                continue
            self._size += len(chunk)
            if self._size > MAX_BODY_BYTES:
                raise CheckFailed(FailureKind.TOO_LARGE, too_large_words(MAX_BODY_BYTES))
            self._ready.extend(self._parser.feed(chunk))
        self._count += 1
        if self._count > MAX_EVENTS:
            raise CheckFailed(
                FailureKind.PROTOCOL,
                f"The event stream sent more than {MAX_EVENTS} events without the answer",
            )
        return self._ready.pop(0)

    async def aclose(self) -> None:
        await self.response.aclose()
