"""The web process borrows PostgreSQL connections from a pool: many requests, few new connections.

Under ASGI Django gives each request a thread of its own and closes its connection at the end
(uptimy/asgi.py), so without a pool every request would open a new PostgreSQL backend. The
web process is started the way gunicorn's workers import it, in a process of its own, and
requests go through Django's real ASGI handler.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from django.db import connection

from tests.clock import clock_environment

ROOT = Path(__file__).resolve().parents[1]

WEB_PROCESS = """
import asyncio, json
import httpx
from uptimy.asgi import django_application
from django.db import connections

async def requests():
    transport = httpx.ASGITransport(app=django_application)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        return [(await client.get("/healthz")).status_code for _ in range(10)]

statuses = asyncio.run(requests())
pool = connections["default"].pool
stats = pool.get_stats() if pool is not None else {}
print(json.dumps({"statuses": statuses, "pooled": pool is not None, "opened": stats.get("connections_num")}))
"""


def database_url() -> str:
    """Return the URL of the database this test run uses (pytest-django's test database)."""
    settings = connection.settings_dict
    return f"postgres://{settings['USER']}@{settings['HOST'] or '127.0.0.1'}:{settings['PORT'] or 5432}/{settings['NAME']}"


def test_ten_requests_in_the_web_process_open_at_most_two_connections(postgres, settings, tmp_path):
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        **clock_environment(),
        "DATABASE_URL": database_url(),
        "SECRET_KEY": "pool-test-secret-key-" + "x" * 40,
        "UPTIMY_SECRETS_KEY": settings.UPTIMY_SECRETS_KEY,
        "UPTIMY_VAR_DIR": str(tmp_path),
    }
    done = subprocess.run(
        [sys.executable, "-c", WEB_PROCESS], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]

    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["statuses"] == [200] * 10
    assert answer["pooled"]
    # The pool opens its first connection in the background, and may open a second while the
    # first request waits for it; every later request borrows one already open.
    assert answer["opened"] <= 2
