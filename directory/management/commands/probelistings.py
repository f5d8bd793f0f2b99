"""Probe the directory's remote listings that are due: ``python manage.py probelistings [--once] [--limit N]``."""

from __future__ import annotations

import threading

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from directory.sync import ProbeReport, probe_listings


class Command(BaseCommand):
    help = (
        "Probe the visible, non-templated remote listings that are due (every "
        "UPTIMY_DIRECTORY_PROBE_INTERVAL seconds each) with the MCP engine, politely: robots.txt, "
        "Crawl-delay (at most 2 s), at most 2 probes per host and 8 in all. Runs a round every "
        "UPTIMY_DIRECTORY_PROBE_TICK seconds until stopped, or one with --once."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="run one round and stop")
        parser.add_argument(
            "--limit",
            type=int,
            default=None,
            help=f"at most this many listings a round (default UPTIMY_DIRECTORY_PROBE_BATCH, {settings.UPTIMY_DIRECTORY_PROBE_BATCH})",
        )

    def handle(self, *args: object, **options: object) -> None:
        limit = options["limit"]
        assert limit is None or isinstance(limit, int)
        limit = None if limit is None else max(0, limit)
        stop = threading.Event()
        while True:
            self._say(probe_listings(limit=limit))
            if options["once"] or stop.wait(settings.UPTIMY_DIRECTORY_PROBE_TICK):
                return

    def _say(self, report: ProbeReport) -> None:
        if report.overlapped:
            self.stdout.write("Another probe round is still running; this one probed nothing")
            return
        self.stdout.write(
            f"{report.probed} listing{'' if report.probed == 1 else 's'} probed ({report.listed} listed tools), "
            f"{report.skipped} skipped by robots.txt or their URL, {report.pruned} old rows pruned"
        )
