"""Measure what a request costs the web process with and without its PostgreSQL connection pool.

``DATABASE_URL=postgres://… python tests/bench/db_pool.py [--requests 300]``

Starts the web process twice, each in a process of its own as gunicorn's workers import it
(``uptimy.asgi``): once as served (``UPTIMY_DB_POOL=1``) and once without the pool, and sends
``--requests`` sequential requests to ``/healthz`` (one ``SELECT 1``) through Django's ASGI
handler in process (httpx's ASGI transport: no sockets, so the difference is the connection).
Prints the median and 95th percentile per request in milliseconds, and the machine's load.
No figure is asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

WEB_PROCESS = """
import asyncio, json, statistics, sys, time
import httpx
from uptimy.asgi import django_application

async def requests(count):
    transport = httpx.ASGITransport(app=django_application)
    took = []
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        await client.get("/healthz")  # warm: imports, URL resolver, the pool's first connection
        for _ in range(count):
            start = time.perf_counter()
            assert (await client.get("/healthz")).status_code == 200
            took.append((time.perf_counter() - start) * 1000)
    return took

took = sorted(asyncio.run(requests(int(sys.argv[1]))))
print(json.dumps({"p50": statistics.median(took), "p95": took[int(len(took) * 0.95) - 1]}))
"""


def measure(pooled: bool, count: int) -> dict[str, float]:
    """Return the per-request median and p95 of a web process with or without the pool."""
    env = {**os.environ, "UPTIMY_DB_POOL": "1" if pooled else "0"}
    env.pop("REDIS_URL", None)  # /healthz would ping the broker too
    done = subprocess.run(
        [sys.executable, "-c", WEB_PROCESS, str(count)], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode:
        sys.exit(done.stderr[-3000:])
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("Set DATABASE_URL=postgres://…: the pool is PostgreSQL's")
    for pooled in (True, False):
        figures = measure(pooled, args.requests)
        label = "pooled (as served)" if pooled else "a new connection per request"
        print(f"{label:30} p50 {figures['p50']:6.2f} ms   p95 {figures['p95']:6.2f} ms")
    print(f"load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
