"""Run Uptimy as one supervised command: migrate, bootstrap the demo, then start every part.

This is the one entry point of `make run`. Each part is a child process under honcho's
manager, so Ctrl-C (or SIGTERM) stops them all and one part dying stops the rest, instead
of leaving a half-running system. Without a broker the scheduler and the probe worker run
in one process (``runprobes``); with REDIS_URL, a Celery worker on every queue and beat.

Every part counts its metrics into one directory of files (prometheus_client's multiprocess
mode, PROMETHEUS_MULTIPROC_DIR), which the web processes sum at each scrape of /metrics: a
directory of this run's own under the var dir, made empty at start.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

# honcho ships no type hints (no py.typed) and no stubs package exists for it.
from honcho.manager import Manager  # type: ignore[import-untyped]

from monitors.selectors import regions_enabled
from monitors.services import demo_bootstrap
from monitors.signals import demo_ready


def parts(*, host: str, port: int, broker: bool, region_queues: list[str]) -> dict[str, str]:
    """Return the processes to run, by name: web, plus the embedded worker or Celery's worker and beat."""
    python = sys.executable
    processes = {
        "web": (
            # ASGI with uvicorn's worker: the MCP server at /mcp (the official SDK) is an ASGI app.
            f"{python} -m gunicorn uptimy.asgi:application --worker-class uvicorn_worker.UvicornWorker "
            f"--bind {host}:{port} --workers 2 --access-logfile - --graceful-timeout 5 --no-control-socket "
            # Its hooks: a dead worker's live gauges leave the metrics files (child_exit).
            "--config python:uptimy.gunicorn_conf"
        ),
    }
    if broker:
        queues = ",".join(["default", *region_queues])
        processes["worker"] = (
            f"{python} -m celery -A uptimy worker -Q {queues} --loglevel INFO --concurrency 2"
        )
        processes["beat"] = (
            f"{python} -m celery -A uptimy beat --loglevel INFO --schedule {settings.VAR_DIR}/celerybeat-schedule"
        )
    else:
        processes["probes"] = f"{python} manage.py runprobes"
    return processes


RUN_DIR_PREFIX = "run-"


def metrics_dir(given: str | None = None) -> Path:
    """Return an empty directory for this run's metrics files, and remove those of runs that ended.

    ``given`` (PROMETHEUS_MULTIPROC_DIR from the environment) is used as it is, emptied of its
    metrics files. Otherwise each run gets ``<var>/metrics/run-<pid>``: two servers sharing a
    var dir never wipe each other's counters, and a run killed before it could clean up is
    cleaned by the next start.
    """
    if given:
        path = Path(given)
        path.mkdir(parents=True, exist_ok=True)
        for stale in path.glob("*.db"):
            stale.unlink(missing_ok=True)
        return path
    root = Path(settings.VAR_DIR) / "metrics"
    root.mkdir(parents=True, exist_ok=True)
    for run in root.glob(f"{RUN_DIR_PREFIX}*"):
        pid = run.name.removeprefix(RUN_DIR_PREFIX)
        if not pid.isdigit() or not _alive(int(pid)):
            shutil.rmtree(run, ignore_errors=True)
    path = root / f"{RUN_DIR_PREFIX}{os.getpid()}"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir()
    return path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


class Command(BaseCommand):
    help = "Migrate, make sure the demo organization, admin and API key exist, then serve until Ctrl-C."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))

    def handle(self, *args: Any, **options: Any) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        host, port = options["host"], options["port"]
        created = demo_bootstrap()
        self._announce(created)
        self._announce_demo_parts(created["organization"], base_url=f"http://{host}:{port}")
        self.stdout.write(
            f"Uptimy on http://{host}:{port}/ (API http://{host}:{port}/api/v1/docs/); Ctrl-C stops."
        )
        self.stdout.write(
            f"MCP server: http://{host}:{port}/mcp (sign in from the assistant, or Authorization: Bearer <API key>)"
        )
        self.stdout.flush()
        given_metrics_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
        metrics_path = metrics_dir(given_metrics_dir)
        self.stdout.write(
            f"Metrics: http://{host}:{port}/metrics "
            + (
                "(bearer token UPTIMY_METRICS_TOKEN)"
                if settings.UPTIMY_METRICS_TOKEN
                else "(loopback clients only)"
            )
        )
        self.stdout.flush()
        manager = Manager()
        # Set in the children's environment, not by them: prometheus_client picks its file-backed
        # values when it is first imported, and every process must pick them.
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "PROMETHEUS_MULTIPROC_DIR": str(metrics_path)}
        # gunicorn here speaks plain HTTP: Secure-only cookies would never come back to the
        # admin's login over it. Behind a TLS proxy, set SECURE_COOKIES=true.
        env.setdefault("SECURE_COOKIES", "false")
        # The links in alerts point here unless UPTIMY_PUBLIC_URL says where the server is reached.
        env.setdefault("UPTIMY_PUBLIC_URL", f"http://{host}:{port}")
        queues = [region.queue for region in regions_enabled()]
        for name, command in parts(
            host=host, port=port, broker=bool(settings.REDIS_URL), region_queues=queues
        ).items():
            manager.add_process(name, command, env=env)
        manager.loop()
        if not given_metrics_dir:
            with contextlib.suppress(OSError):
                shutil.rmtree(metrics_path)
        sys.exit(manager.returncode)

    def _announce_demo_parts(self, organization_slug: str | None, *, base_url: str) -> None:
        """Let the apps above monitors make their demo parts, and print where they are."""
        for _, line in demo_ready.send(
            sender=self.__class__, organization_slug=organization_slug, base_url=base_url
        ):
            if line:
                self.stdout.write(str(line))

    def _announce(self, created: dict[str, str | None]) -> None:
        if created["password"]:
            self.stdout.write(f"Admin login: {created['username']} / {created['password']}  (shown once)")
        if created["api_key"]:
            self.stdout.write(f"API key for {created['organization']}: {created['api_key']}  (shown once)")
        self.stdout.write(f"Database: {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}")
        if settings.LOCAL_SECRETS_FILE is not None:
            self.stdout.write(
                f"Secrets: {settings.LOCAL_SECRETS_FILE} (generated on first start; keep it with the database)"
            )
        if settings.DEBUG:
            self.stdout.write(
                "DEBUG is on: never expose this server; error pages show settings and requests."
            )
