"""Create an API key for an organization and print it alone on stdout."""

from argparse import ArgumentTypeError
from datetime import UTC, date, datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from monitors.errors import ServiceError
from monitors.models import ApiKey, Organization
from monitors.services import api_key_create, organization_create


def _expiry(value: str) -> datetime:
    """Read --expires: a bare date is that day's start in UTC; a time must carry its zone."""
    try:
        if len(value) == len("2027-01-31"):
            return datetime.combine(date.fromisoformat(value), datetime.min.time(), tzinfo=UTC)
        return datetime.fromisoformat(value)
    except ValueError:
        raise ArgumentTypeError(f"{value!r} is not a date (YYYY-MM-DD) or an ISO 8601 time") from None


class Command(BaseCommand):
    help = "Create an API key for ORG_SLUG and print it (shown once; only a hash is stored)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("org_slug")
        parser.add_argument(
            "--create-org", action="store_true", help="Create the organization (free plan) if missing."
        )
        parser.add_argument("--read-only", action="store_true", help="The key may read but not write.")
        parser.add_argument("--name", default="", help="A label to tell keys apart.")
        parser.add_argument(
            "--expires",
            type=_expiry,
            default=None,
            metavar="WHEN",
            help="When the key stops working: a date (YYYY-MM-DD, at 00:00 UTC) or an ISO 8601 time "
            "with a zone; within two years. Default: never.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        slug = options["org_slug"]
        with transaction.atomic():
            organization = Organization.objects.filter(slug=slug).first()
            if organization is None:
                if not options["create_org"]:
                    raise CommandError(f"No organization {slug!r}; pass --create-org to create it.")
                try:
                    organization = organization_create(slug=slug)
                except ServiceError as exc:
                    raise CommandError(f"Can't create organization {slug!r}: {exc.message}") from None
            scope = ApiKey.Scope.READ if options["read_only"] else ApiKey.Scope.READ_WRITE
            try:
                api_key, raw_key = api_key_create(
                    organization=organization,
                    name=options["name"],
                    scope=scope,
                    expires_at=options["expires"],
                )
            except ServiceError as exc:
                raise CommandError(f"--expires: {exc.message}") from None
        self.stderr.write(f"Created {scope} key {api_key.prefix}… for {organization.slug}.")
        self.stdout.write(raw_key)
