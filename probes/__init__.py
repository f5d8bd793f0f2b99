"""Uptimy's check engine: pure asyncio + httpx, no Django, no settings.

Callers (monitors' worker tasks, the ``mcpcheck`` command, the benchmark) read settings and
pass plain values in; every function here takes and returns plain values.
"""

__version__ = "0.1.0"
