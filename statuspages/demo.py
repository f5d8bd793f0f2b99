"""Give the demo organization a status page, so `make run` has one to show."""

from __future__ import annotations

from typing import Any

from monitors.errors import ServiceError
from monitors.models import Organization
from statuspages.models import StatusPage
from statuspages.services import status_page_create

DEMO_SLUG = "demo"


def demo_status_page(*, organization_slug: str, base_url: str, **_: Any) -> str | None:
    """Make sure the organization has a status page; return the line that tells where it is."""
    organization = Organization.objects.get(slug=organization_slug)
    page = StatusPage.objects.filter(organization=organization).order_by("id").first()
    if page is None:
        try:
            page = status_page_create(
                organization=organization,
                changes={"slug": DEMO_SLUG, "title": f"{organization.name} status"},
            )
        except ServiceError:
            return None  # the slug belongs to another organization: no demo page, no harm
    return f"Status page: {base_url}/s/{page.slug}/ (components: POST /api/v1/status-pages/{page.public_id}/components/)"
