"""Uptimy's check engine: pure asyncio, HTTP/1.1 through h11 (``probes.wire``), no Django, no settings.

httpx supplies only its URL type; names resolve through c-ares (``probes.resolver``).

Callers (monitors' worker tasks, the ``mcpcheck`` command, the benchmark) read settings and
pass plain values in; every function here takes and returns plain values.
"""

__version__ = "0.1.0"
