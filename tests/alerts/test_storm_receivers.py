"""A storm as its receivers see it: PagerDuty-shaped, Standard Webhooks and SMTP receivers on loopback.

The recorder writes the outbox from check outcomes, the consumer turns it into incidents and
notifications, the sender delivers them: the tests read only what reached the receivers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest
from django.conf import settings as django_settings

from alerts.models import Incident
from alerts.services import outbox_consume
from alerts.services.sending import deliveries_send
from monitors.models import Healthcheck
from monitors.services import RunResult, healthcheck_create, outcomes_record
from probes.checks.mcp import MCP
from probes.types import Access, FailureKind, ProbeOutcome, Status, Timings, ToolInfo, Transport
from tests.alerts.receivers_support import Receivers, organization_receivers, use_loopback_receivers

pytestmark = pytest.mark.django_db

THRESHOLD = 3
REFUSED = "Connection to 127.0.0.1 port 9 refused"
TOOLS = (ToolInfo("search_docs", ("query",)), ToolInfo("read_page", ("url",)))


def up(*, slow: bool = False) -> ProbeOutcome:
    return ProbeOutcome(
        status=Status.UP,
        timings=Timings(total_ms=5000.0 if slow else 80.0),
        access=Access.OPEN,
        tools=TOOLS,
        tool_count=len(TOOLS),
        tool_digest="d-two",
        transport=Transport.STREAMABLE_HTTP,
    )


def refused() -> ProbeOutcome:
    return ProbeOutcome(
        status=Status.DOWN, kind=FailureKind.CONNECT, reason=REFUSED, timings=Timings(total_ms=0.4)
    )


@dataclass
class Storm:
    """Six checks of one organization in one region, recorded, consumed and sent at chosen moments."""

    checks: list[Healthcheck]
    receivers: Receivers
    start: datetime
    settings: object

    def record(
        self, minute: int, outcomes: dict[int, ProbeOutcome], *, threshold: int = THRESHOLD
    ) -> datetime:
        """Record each check's outcome (by index) in one group at ``minute``, consume it, send what is due."""
        slot = self.start + timedelta(minutes=minute)
        recorded = slot + timedelta(seconds=2)
        outcomes_record(
            region_slug="eu-west",
            results=[
                RunResult(self.checks[index].id, slot, 0, outcome, slot + timedelta(seconds=1))
                for index, outcome in sorted(outcomes.items())
            ],
            now=recorded,
        )
        self.settings.UPTIMY_ALERT_STORM_THRESHOLD = threshold  # type: ignore[attr-defined]
        outbox_consume(now=recorded)
        # Past every digest's collecting window; rounds until the ledger is drained (an
        # incident's deliveries go one after the other on a channel).
        while deliveries_send(now=recorded + timedelta(seconds=10)):
            pass
        return recorded

    def all(self, outcome: Callable[[], ProbeOutcome]) -> dict[int, ProbeOutcome]:
        return {index: outcome() for index in range(len(self.checks))}


@pytest.fixture
def storm(org, now, receiver, smtp_server, settings) -> Iterator[Storm]:
    use_loopback_receivers(settings, smtp_server)
    checks = [
        healthcheck_create(
            organization=org,
            name=f"storm-{index} docs",
            check_type=MCP,
            config={"uri": f"https://mcp{index}.example.com/mcp"},
            now=now,
            region_slugs=["eu-west"],
            rules={"recheck_count": 0, "degraded_threshold_ms": 1000},
        )
        for index in range(1, 7)
    ]
    with organization_receivers(org, webhook=receiver, smtp=smtp_server) as receivers:
        found = Storm(checks, receivers, now, settings)
        found.record(0, found.all(up))
        yield found


def link(check: Healthcheck) -> str:
    return f"{django_settings.UPTIMY_PUBLIC_URL.rstrip('/')}/api/v1/healthchecks/{check.public_id}/"


def test_a_storm_down_and_back_gives_pagerduty_one_trigger_then_one_resolve_per_incident(storm):
    storm.record(1, storm.all(refused))
    storm.record(3, storm.all(up))

    actions = storm.receivers.pagerduty_actions()

    assert Incident.objects.filter(resolved_at__isnull=False).count() == 6
    assert set(actions) == {str(incident.public_id) for incident in Incident.objects.all()}
    assert {key: tuple(seen) for key, seen in actions.items()} == dict.fromkeys(
        actions, ("trigger", "resolve")
    )


def test_pagerduty_hears_of_each_storm_incident_in_its_own_words(storm):
    storm.record(1, storm.all(refused))
    storm.record(3, storm.all(up))

    triggers = [event for event in storm.receivers.pagerduty_events() if event["event_action"] == "trigger"]

    assert sorted(event["payload"]["summary"] for event in triggers) == [
        f"DOWN: storm-{index} docs — {REFUSED}" for index in range(1, 7)
    ]


def test_a_storm_down_and_back_gives_each_text_channel_its_alerts_then_one_digest_each_way(storm):
    storm.record(1, storm.all(refused))
    storm.record(3, storm.all(up))

    hooks = storm.receivers.webhooks()
    subjects = [subject for subject, _ in storm.receivers.mail_texts()]

    assert Counter(hook["type"] for hook in hooks) == {
        "incident.opened": 3,
        "incident.resolved": 3,
        "incidents.digest": 2,
    }
    assert [hook["data"]["summary"] for hook in hooks if hook["type"] == "incidents.digest"] == [
        "3 incidents opened in acme",
        "3 incidents resolved in acme",
    ]
    assert [subject for subject in subjects if "incidents" in subject] == [
        "[Uptimy] 3 incidents opened in acme",
        "[Uptimy] 3 incidents resolved in acme",
    ]
    assert len(subjects) == 8


OPENED, ESCALATED, RESOLVED = "incident.opened", "incident.escalated", "incident.resolved"


@dataclass(frozen=True)
class Case:
    """A storm's steps (minute, outcomes by check index, threshold) and what its one digest must say."""

    steps: tuple[tuple[int, dict[int, Callable[[], ProbeOutcome]], int], ...]
    title: str
    # Check index -> the event its line stands for, and the line's words before the link.
    lines: dict[int, tuple[str, str]]


EVERY = range(6)
QUIET = 100  # a threshold no step reaches: everything is told one by one

CASES = {
    "opened": Case(
        steps=((1, dict.fromkeys(EVERY, refused), THRESHOLD),),
        title="3 incidents opened in acme",
        lines={index: (OPENED, f"storm-{index + 1} docs is DOWN ({REFUSED})") for index in (3, 4, 5)},
    ),
    "resolved": Case(
        steps=((1, dict.fromkeys(EVERY, refused), QUIET), (3, dict.fromkeys(EVERY, up), THRESHOLD)),
        title="3 incidents resolved in acme",
        lines={index: (RESOLVED, f"storm-{index + 1} docs is UP again after 2 min") for index in (3, 4, 5)},
    ),
    "escalated": Case(
        steps=(
            (1, dict.fromkeys(EVERY, lambda: up(slow=True)), QUIET),
            (3, dict.fromkeys(EVERY, refused), THRESHOLD),
        ),
        title="3 incidents escalated in acme",
        lines={
            index: (ESCALATED, f"storm-{index + 1} docs is now DOWN (it was degraded) ({REFUSED})")
            for index in (3, 4, 5)
        },
    ),
    "mixed": Case(
        # Checks 0, 2, 4 went down long before; then, in one minute, they come back while 1, 3, 5
        # go down: resolve, open, resolve are told one by one, the rest is the digest.
        steps=(
            (1, dict.fromkeys((0, 2, 4), refused), QUIET),
            (5, {0: up, 1: refused, 2: up, 3: refused, 4: up, 5: refused}, THRESHOLD),
        ),
        title="2 incidents opened and 1 resolved in acme",
        lines={
            3: (OPENED, f"storm-4 docs is DOWN ({REFUSED})"),
            4: (RESOLVED, "storm-5 docs is UP again after 4 min"),
            5: (OPENED, f"storm-6 docs is DOWN ({REFUSED})"),
        },
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_a_digest_says_what_happened_with_counts_and_one_line_per_incident_in_its_own_words(storm, case):
    for minute, outcomes, threshold in case.steps:
        storm.record(minute, {index: make() for index, make in outcomes.items()}, threshold=threshold)
    expected = [f"- {words} {link(storm.checks[index])}" for index, (_, words) in case.lines.items()]

    (digest_hook,) = [hook for hook in storm.receivers.webhooks() if hook["type"] == "incidents.digest"]
    (body,) = [body for subject, body in storm.receivers.mail_texts() if subject == f"[Uptimy] {case.title}"]

    assert digest_hook["data"]["summary"] == case.title
    assert [(item["event"], item["healthcheck"]["id"]) for item in digest_hook["data"]["incidents"]] == [
        (event, str(storm.checks[index].public_id)) for index, (event, _) in case.lines.items()
    ]
    assert [line for line in body.splitlines() if line.startswith("- ")] == expected
    assert "tool list" not in body.lower()
