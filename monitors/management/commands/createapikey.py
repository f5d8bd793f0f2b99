"""Create an API key for an organization and print it alone on stdout."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from monitors.errors import ServiceError
from monitors.models import ApiKey, Organization
from monitors.services import api_key_create, organization_create


class Command(BaseCommand):
    help = "Create an API key for ORG_SLUG and print it (shown once; only a hash is stored)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("org_slug")
        parser.add_argument(
            "--create-org", action="store_true", help="Create the organization (free plan) if missing."
        )
        parser.add_argument("--read-only", action="store_true", help="The key may read but not write.")
        parser.add_argument("--name", default="", help="A label to tell keys apart.")

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
            api_key, raw_key = api_key_create(organization=organization, name=options["name"], scope=scope)
        self.stderr.write(f"Created {scope} key {api_key.prefix}… for {organization.slug}.")
        self.stdout.write(raw_key)
