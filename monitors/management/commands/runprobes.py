"""Run the scheduler and the probe worker in this process (the embedded default, no broker)."""

import signal
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from monitors import metrics
from monitors.worker.embedded import EmbeddedWorker, PeriodicJob


def queue_metrics_job(worker: EmbeddedWorker, every: float) -> PeriodicJob:
    """Return the job that publishes the worker's pending batches to /metrics every ``every`` seconds."""
    return PeriodicJob(
        "metrics.embedded_queue", every, lambda: metrics.observe_embedded_queue(worker.pending_batches())
    )


class Command(BaseCommand):
    help = "Tick the schedule and run every region's checks in this process, until SIGINT/SIGTERM."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tick", type=float, default=settings.UPTIMY_TICK_SECONDS)

    def handle(self, *args: Any, **options: Any) -> None:
        worker = EmbeddedWorker(tick_seconds=options["tick"])
        # The web processes that answer /metrics can't see this process's memory: the queue
        # goes to them as a gauge, through the metrics files.
        worker.jobs.append(queue_metrics_job(worker, options["tick"]))
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: worker.stop.set())
        self.stdout.write(f"Probing every enabled region from this machine; tick {options['tick']}s.")
        worker.run_forever()
