"""Give gunicorn Uptimy's hooks: ``gunicorn -c python:uptimy.gunicorn_conf …``.

gunicorn reads this module's globals as its settings; only hooks and the logger class (which
redacts one-time tokens from the access log) live here, every other setting comes from the
command line (``manage.py serve``, the Dockerfile).
"""

from __future__ import annotations

import gc
import os
from typing import Protocol

from gunicorn import glogging  # type: ignore[import-untyped]
from prometheus_client import multiprocess

from uptimy.log_redaction import redact_handlers


class _Worker(Protocol):
    pid: int


def child_exit(server: object, worker: _Worker) -> None:
    """Drop a dead web worker's live gauges from the metrics files, as prometheus_client's multiprocess mode asks."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        # prometheus_client's multiprocess module has no annotations (the rest of the package has).
        multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]


def post_worker_init(worker: object) -> None:
    """Put what the worker loaded at start (Django, the apps, their modules) out of the garbage collector's sight.

    Those objects live as long as the worker, yet every full collection walked all of them
    (some 150,000): a status page drawn afresh, which makes tens of thousands of objects, paid
    40 ms for it every other time. Frozen, a full collection walks only what requests made.
    """
    gc.freeze()


class RedactingLogger(glogging.Logger):  # type: ignore[misc]  # gunicorn ships no type hints
    """Log as gunicorn does, with the secret parts of request lines, paths, queries and referers redacted.

    The filter sits on gunicorn's handlers themselves, so it also covers the lines uvicorn's
    worker logs through them (``uvicorn.access`` and ``uvicorn.error`` are given these handlers).
    """

    def setup(self, cfg: object) -> None:
        super().setup(cfg)
        redact_handlers(self.access_log, self.error_log)


# gunicorn reads this module's globals as settings: every worker logs through the class above.
logger_class = RedactingLogger
