"""stream_batch: each outcome leaves the batch as its check ends, stamped with when it ended."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from datetime import UTC, datetime, timedelta

from probe_support import mcp

from probes import runner
from probes.runner import ProbeEnv, stream_batch
from probes.types import ProbeOutcome, Status

SLOW = "https://slow.example.com/mcp"
EPOCH = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def slow_until(release: asyncio.Event, cancelled: list[str] | None = None):
    """Return a run_check whose checks of SLOW wait for ``release``; the others end at once."""

    async def check(config, env):
        if config.uri == SLOW:
            try:
                await release.wait()
            except asyncio.CancelledError:
                if cancelled is not None:
                    cancelled.append(config.uri)
                raise
        return ProbeOutcome(status=Status.UP)

    return check


def test_a_fast_checks_outcome_comes_out_while_a_slow_one_still_runs(monkeypatch):
    async def main() -> list[str]:
        release = asyncio.Event()
        monkeypatch.setattr(runner, "run_check", slow_until(release))
        seen = []
        stream = stream_batch([("slow", mcp(SLOW)), ("fast", mcp())], ProbeEnv())
        async with contextlib.aclosing(stream):
            async for finished in stream:
                seen.append(finished.key)
                release.set()  # the slow check ends only after the fast one came out
        return seen

    assert asyncio.run(main()) == ["fast", "slow"]


def test_each_outcome_is_stamped_when_its_own_check_ends(monkeypatch):
    ticks = itertools.count()

    def clock() -> datetime:
        return EPOCH + timedelta(seconds=next(ticks))

    async def main() -> dict[str, datetime]:
        release = asyncio.Event()
        monkeypatch.setattr(runner, "run_check", slow_until(release))
        ended = {}
        stream = stream_batch([("slow", mcp(SLOW)), ("fast", mcp())], ProbeEnv(), clock=clock)
        async with contextlib.aclosing(stream):
            async for finished in stream:
                ended[finished.key] = finished.at
                next(ticks)  # time passes between the two checks' ends
                release.set()
        return ended

    assert asyncio.run(main()) == {"fast": EPOCH, "slow": EPOCH + timedelta(seconds=2)}


def test_closing_the_stream_cancels_the_checks_still_running(monkeypatch):
    cancelled: list[str] = []

    async def main() -> None:
        monkeypatch.setattr(runner, "run_check", slow_until(asyncio.Event(), cancelled))
        stream = stream_batch([("slow", mcp(SLOW)), ("fast", mcp())], ProbeEnv())
        async with contextlib.aclosing(stream):
            async for _ in stream:
                break

    asyncio.run(main())

    assert cancelled == [SLOW]
