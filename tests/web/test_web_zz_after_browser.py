"""Run after the browser tests (file order): they leave no event loop running on the main thread.

Split across workers (pytest-xdist), this runs after whichever browser modules its worker took;
the peers' asyncio.run tests, spread over both workers, would fail too if a loop were left.
"""

import asyncio


def test_asyncio_run_works_after_the_browser_tests():
    async def answer() -> int:
        return 42

    assert asyncio.run(answer()) == 42
