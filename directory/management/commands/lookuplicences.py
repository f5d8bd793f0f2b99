"""Ask GitHub for the licences of the directory's repositories: ``python manage.py lookuplicences [--limit N]``."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from directory.sync import look_up_licences


class Command(BaseCommand):
    help = (
        "Ask GitHub (UPTIMY_GITHUB_API_URL, UPTIMY_GITHUB_TOKEN) for the licence of each listed "
        "repository not looked up within a week, one request at a time; stops at GitHub's rate limit."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--limit", type=int, default=50, help="at most this many repositories (default 50)"
        )

    def handle(self, *args: object, **options: object) -> None:
        limit = options["limit"]
        assert isinstance(limit, int)
        report = look_up_licences(limit=max(0, limit))
        ending = "; stopped at GitHub's rate limit" if report.rate_limited else ""
        self.stdout.write(f"{report.looked_up} licences looked up, {report.failed} failed{ending}")
