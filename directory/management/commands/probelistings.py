"""Probe the directory's remote listings that are due: ``python manage.py probelistings [--once] [--limit N]``."""

from __future__ import annotations

import signal

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from directory.sync import ProbeReport, RoundStop, probe_listings

OVERLAPPED = "Another probe round is still running; this one probed nothing"
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Command(BaseCommand):
    help = (
        "Probe the visible, non-templated remote listings that are due (every "
        "UPTIMY_DIRECTORY_PROBE_INTERVAL seconds each) with the MCP engine, politely: robots.txt, "
        "Crawl-delay (at most 2 s), at most 2 probes per host and 8 in all. Runs a round every "
        "UPTIMY_DIRECTORY_PROBE_TICK seconds until stopped (SIGTERM or SIGINT: the round's "
        "finished probes are recorded, the rest are due again, the lease is released), or one with "
        "--once, which exits 1 when another round holds the probes."
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
        stop = RoundStop()
        # A clean stop (SIGTERM from a supervisor, Ctrl-C): end the round's probes, record the
        # finished ones, give the rest back and release the lease, then exit.
        previous = {number: signal.signal(number, lambda *_: stop.request()) for number in STOP_SIGNALS}
        try:
            while True:
                report = probe_listings(limit=limit, stop=stop)
                if options["once"] and report.overlapped:
                    raise CommandError(OVERLAPPED)
                self._say(report)
                if options["once"] or stop.requested.wait(settings.UPTIMY_DIRECTORY_PROBE_TICK):
                    return
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)

    def _say(self, report: ProbeReport) -> None:
        if report.overlapped:
            self.stdout.write(OVERLAPPED)
            return
        self.stdout.write(
            f"{report.probed} listing{'' if report.probed == 1 else 's'} probed ({report.listed} listed tools), "
            f"{report.skipped} skipped by robots.txt or their URL, {report.pruned} old rows pruned"
        )
        if report.stopped:
            self.stdout.write(f"Stopped: {report.returned} claimed listings left unprobed are due again")
