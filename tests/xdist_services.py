"""Give each pytest-xdist worker a Redis database of its own (loaded with ``-p tests.xdist_services``).

`make test` splits the suite across the machine's cores (pytest-xdist). pytest-django already
gives each worker its own test database; Redis it can't: every test starts with
``cache.clear()``, which on Redis is FLUSHDB, so two workers on one database would wipe each
other's rate-limit counters and broker keys mid-test. Worker ``gwN`` moves REDIS_URL's database
number up by N + 1 (CI's db 5 becomes 6, 7, …).

This is a plugin, not a conftest hook: pytest-django imports Django's settings, which read
REDIS_URL once, while the initial conftests load, so the variable must change before then.
xdist sets PYTEST_XDIST_WORKER in the worker before any plugin is imported.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

REDIS_DATABASES = 16  # redis.conf's default `databases`


class WorkerDatabaseError(RuntimeError):
    """The worker's Redis database number would pass the server's last database."""


def worker_redis_url(url: str, worker: str) -> str:
    """Return ``url`` with its database number moved up by the worker's index + 1 (``gw0`` → +1)."""
    if not url or not worker.startswith("gw"):
        return url
    parts = urlsplit(url)
    base = int(parts.path.lstrip("/") or 0)
    database = base + int(worker[2:]) + 1
    if database >= REDIS_DATABASES:
        raise WorkerDatabaseError(
            f"xdist worker {worker} would use Redis database {database} (REDIS_URL's {base} + "
            f"{int(worker[2:]) + 1}), past the server's {REDIS_DATABASES}: use fewer workers or a lower database"
        )
    return urlunsplit(parts._replace(path=f"/{database}"))


_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _worker and os.environ.get("REDIS_URL"):
    os.environ["REDIS_URL"] = worker_redis_url(os.environ["REDIS_URL"], _worker)
