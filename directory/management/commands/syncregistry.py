"""Import the Official MCP Registry into the directory: ``python manage.py syncregistry [--full]``."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from directory.sync import sync_registry


class Command(BaseCommand):
    help = (
        "Read the Official MCP Registry (UPTIMY_MCP_REGISTRY_URL) into the directory: what changed "
        "since the last sync, or everything with --full. Exits 1 when a page could not be read "
        "(the pages read before it are kept)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--full", action="store_true", help="read every server's latest version again")

    def handle(self, *args: object, **options: object) -> None:
        report = sync_registry(full=bool(options["full"]))
        kind = "full" if report.full else "incremental"
        self.stdout.write(
            f"{kind} sync: {report.pages} pages, {report.stored} listings stored, {len(report.rejected)} skipped"
        )
        for reason in report.rejected:
            self.stdout.write(f"skipped {reason}")
        for note in report.left_out:
            self.stdout.write(f"stored without a field: {note}")
        if report.error:
            raise CommandError(f"stopped: {report.error}")
