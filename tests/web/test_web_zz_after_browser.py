"""Run after the browser tests (file order): they leave no event loop running on the main thread."""

import asyncio


def test_asyncio_run_works_after_the_browser_tests():
    async def answer() -> int:
        return 42

    assert asyncio.run(answer()) == 42
