"""The storm on the embedded default (what `make run` starts): six checks of an official SDK server go down and come back.

The embedded worker probes, records, consumes and sends on its own ticks; an SMTP server, a
Standard Webhooks receiver and a PagerDuty-shaped receiver on loopback are all the test reads.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from urllib.parse import urlsplit

from django.utils import timezone

from alerts.models import Delivery
from alerts.services import notifications
from monitors.models import Healthcheck
from monitors.services import healthcheck_create
from probes.checks.mcp import MCP
from tests.alerts.receivers_support import organization_receivers, use_loopback_receivers
from tests.monitors.conftest import start_sdk_peer, stop
from tests.monitors.worker_support import embedded, quick_check, run_worker

CHECKS = 6


@embedded
def test_a_storm_down_and_back_gives_one_digest_each_way_per_text_channel_and_pagerduty_a_trigger_and_resolve_each(
    org, receiver, smtp_server, settings, monkeypatch
):
    use_loopback_receivers(settings, smtp_server)
    settings.UPTIMY_ALERT_STORM_THRESHOLD = 3
    # A digest collects for 3 s; six checks decided in their own slots on a busy machine (CI runs
    # two suites at once) can recover over more than that, which rightly makes a second digest.
    # A longer collection keeps this test about one storm each way, not about the machine's speed;
    # the server comes back only once the openings' digest has gone out, so the two never mix.
    monkeypatch.setattr(notifications, "DIGEST_WINDOW", timedelta(seconds=10))
    server, url = start_sdk_peer("stateful")
    port = urlsplit(url).port

    def create(uri: str, name: str, **rules: object) -> Healthcheck:
        healthcheck = healthcheck_create(
            organization=org, name=name, check_type=MCP, config={"uri": uri}, now=timezone.now()
        )
        Healthcheck.objects.filter(pk=healthcheck.pk).update(**rules)
        return healthcheck

    with organization_receivers(org, webhook=receiver, smtp=smtp_server) as receivers:
        checks = [
            quick_check(
                lambda uri, now, index=index, **rules: create(uri, f"storm-{index} docs", **rules), url
            )
            for index in range(1, CHECKS + 1)
        ]
        ids = [check.pk for check in checks]
        walked: list[str] = []

        def statuses() -> set[str]:
            return set(Healthcheck.objects.filter(pk__in=ids).values_list("status", flat=True))

        def opened_digest_sent() -> bool:
            return any(hook["type"] == "incidents.digest" for hook in receivers.webhooks())

        def storm(_: object) -> bool:
            nonlocal server
            now = statuses()
            if not walked and now == {"up"}:
                walked.append("up")
                stop(server)
            elif walked == ["up"] and now == {"down"} and opened_digest_sent():
                walked.append("down")
                server, _ = start_sdk_peer("stateful", port=port)
            elif walked == ["up", "down"] and now == {"up"}:
                walked.append("up again")
            # Each incident's trigger and resolve, and nothing left to send.
            return (
                walked == ["up", "down", "up again"]
                and len(receivers.pagerduty.received) >= 2 * CHECKS
                and not Delivery.objects.filter(state__in=Delivery.UNFINISHED).exists()
            )

        try:
            finished = run_worker(storm, seconds=100)
        finally:
            stop(server)
        got = (len(receivers.pagerduty.received), len(receiver.received), len(smtp_server.handler.messages))
        assert finished, f"walked {walked}; PagerDuty, webhook and mail got {got}; statuses {statuses()}"

        actions = receivers.pagerduty_actions()
        hooks = receivers.webhooks()
        subjects = [subject for subject, _ in receivers.mail_texts()]

    assert len(actions) == CHECKS
    assert {key: tuple(seen) for key, seen in actions.items()} == dict.fromkeys(
        actions, ("trigger", "resolve")
    )
    # Each text channel: every incident's opening and its resolve exactly once, alone or in a digest
    # (a recovery within the storm's minute is part of the storm), and one digest each way.
    told: Counter[tuple[str, str]] = Counter()
    digests = []
    for hook in hooks:
        if hook["type"] == "incidents.digest":
            entries = hook["data"]["incidents"]
            told.update((entry["event"], entry["incident"]["id"]) for entry in entries)
            (event,) = {entry["event"] for entry in entries}
            digests.append((event, hook["data"]["summary"]))
            assert hook["data"]["summary"] == f"{len(entries)} incidents {event.split('.')[1]} in acme"
        else:
            told[(hook["type"], hook["data"]["incident"]["id"])] += 1
    assert told == {(event, key): 1 for key in actions for event in ("incident.opened", "incident.resolved")}
    assert [event for event, _ in digests] == ["incident.opened", "incident.resolved"]
    assert [subject for subject in subjects if subject.endswith("in acme")] == [
        f"[Uptimy] {summary}" for _, summary in digests
    ]
    assert len(subjects) == len(hooks)
    assert not [body for _, body in receivers.mail_texts() if "tool list" in body.lower()]
