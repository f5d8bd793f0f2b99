"""Factories for the status-page tests: healthchecks with a history, pages and their components."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone

from monitors.models import Healthcheck, Organization, StatusChange
from monitors.services import healthcheck_create
from probes.checks.mcp import MCP
from statuspages import services
from statuspages.models import Component, StatusPage
from tests.alerts.channel_support import receiver, smtp_server  # noqa: F401  (fixtures: a loopback HTTP receiver, an SMTP server)
from tests.browser_support import chromium  # noqa: F401  (fixture: Chromium through Playwright, per module)


@pytest.fixture
def make_check(db) -> Callable[..., Healthcheck]:
    """Return a factory of healthchecks created ``age`` ago with status ``status`` (no history)."""

    def make(
        organization: Organization,
        *,
        name: str = "api",
        age: timedelta = timedelta(days=200),
        status: str = "up",
        now: datetime | None = None,
    ) -> Healthcheck:
        moment = now or timezone.now()
        check = healthcheck_create(
            organization=organization,
            name=name,
            check_type=MCP,
            config={"uri": "https://mcp.example.com/mcp"},
            now=moment,
            interval_seconds=3600,
        )
        Healthcheck.objects.filter(pk=check.pk).update(created_at=moment - age, status=status)
        check.refresh_from_db()
        return check

    return make


@pytest.fixture
def change():
    """Return a function that records a status change of a check at a moment."""

    def record(check: Healthcheck, at: datetime, from_status: str, to_status: str) -> StatusChange:
        return StatusChange.objects.create(
            healthcheck=check, at=at, from_status=from_status, to_status=to_status
        )

    return record


@pytest.fixture
def make_page(db) -> Callable[..., StatusPage]:
    counter = iter(range(1, 10_000))

    def make(organization: Organization, **changes: Any) -> StatusPage:
        fields = {"slug": f"page-{next(counter)}", "title": "Acme status", **changes}
        return services.status_page_create(organization=organization, changes=fields)

    return make


@pytest.fixture
def add_component():
    def add(page: StatusPage, check: Healthcheck, **changes: Any) -> Component:
        return services.component_create(page=page, changes={"healthcheck": check.public_id, **changes})

    return add
