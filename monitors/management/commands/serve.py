"""Run Uptimy as one supervised command: migrate, bootstrap the demo, then start every part.

This is the one entry point of `make run`. Each part is a child process under honcho's
manager, so Ctrl-C (or SIGTERM) stops them all and one part dying stops the rest, instead
of leaving a half-running system. Later parts (the scheduler tick, the in-process probe
worker) are added to ``parts()``.
"""

from __future__ import annotations

import os
import sys

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand
from honcho.manager import Manager

from monitors.services import demo_bootstrap


def parts(*, host: str, port: int) -> dict[str, str]:
    """Return the processes to run, by name, for the configured mode."""
    python = sys.executable
    return {
        "web": (
            f"{python} -m gunicorn uptimy.wsgi:application --bind {host}:{port} "
            "--workers 2 --threads 4 --access-logfile - --graceful-timeout 5 --no-control-socket"
        ),
    }


class Command(BaseCommand):
    help = "Migrate, make sure the demo organization, admin and API key exist, then serve until Ctrl-C."

    def add_arguments(self, parser):  # type: ignore[no-untyped-def]
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))

    def handle(self, *args, **options):  # type: ignore[no-untyped-def]
        call_command("migrate", interactive=False, verbosity=0)
        self._announce(demo_bootstrap())
        host, port = options["host"], options["port"]
        self.stdout.write(
            f"Uptimy on http://{host}:{port}/ (API http://{host}:{port}/api/v1/docs/); Ctrl-C stops."
        )
        self.stdout.flush()
        manager = Manager()
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        for name, command in parts(host=host, port=port).items():
            manager.add_process(name, command, env=env)
        manager.loop()
        sys.exit(manager.returncode)

    def _announce(self, created: dict[str, str | None]) -> None:
        if created["password"]:
            self.stdout.write(f"Admin login: {created['username']} / {created['password']}  (shown once)")
        if created["api_key"]:
            self.stdout.write(f"API key for {created['organization']}: {created['api_key']}  (shown once)")
        self.stdout.write(f"Database: {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}")
