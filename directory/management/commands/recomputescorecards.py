"""Recompute the directory's stored scorecards: ``python manage.py recomputescorecards``."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand
from django.utils import timezone

from directory.services import scorecards_recompute


class Command(BaseCommand):
    help = (
        "Recompute the stored scorecard of every visible listing in the directory (the beat does it "
        "every UPTIMY_DIRECTORY_SCORECARDS_SECONDS); deleted and replaced listings' scorecards are removed."
    )

    def handle(self, *args: object, **options: object) -> None:
        started = time.monotonic()
        written = scorecards_recompute(now=timezone.now())
        self.stdout.write(f"{written} scorecards recomputed in {time.monotonic() - started:.1f} s")
