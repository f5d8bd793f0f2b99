"""Fetch IANA's RDAP bootstrap for the domain check: ``python manage.py refreshrdap [--url URL]``."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from monitors.rdap_bootstrap import RefreshFailed, refresh


class Command(BaseCommand):
    help = (
        "Fetch IANA's RDAP bootstrap (which registry answers for which TLD) into "
        "UPTIMY_RDAP_BOOTSTRAP_FILE; workers read it in place of the shipped snapshot. "
        "Run it monthly (IANA changes the file a few times a month)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--url", default=None, help="where to fetch it (default UPTIMY_RDAP_BOOTSTRAP_URL)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            found = refresh(url=options["url"])
        except RefreshFailed as exc:
            raise CommandError(f"{exc}; the bootstrap in use is unchanged") from None
        self.stdout.write(
            f"RDAP bootstrap of {found.publication or 'an unknown date'}: {len(found.services)} TLDs, "
            f"written to {settings.UPTIMY_RDAP_BOOTSTRAP_FILE}"
        )
