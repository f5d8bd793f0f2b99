"""The page's /api/v2 JSON read by a client nobody here wrote: statuspage.io (npm, a test peer).

statuspage.io (Florian Imdahl's api-clients) is a client of Atlassian Statuspage's public API: it
builds each endpoint's path itself and declares each answer's fields (``dist/interfaces/Result.d.ts``).
Pointed at a page under /s/<slug>/ on the live server, every call must succeed, carry every
field the client declares, and say what the page says. Its 3.3.8 is pinned (3.4.6 was published
without its code). Its three maintenance calls all read upcoming.json: scheduled-maintenances.json
is read through the client's own path (``Endpoint``) and HTTP client; active.json it can't reach.
"""

from __future__ import annotations

import json
import re
import subprocess
import urllib.request
from typing import Any

import pytest
from django.utils import timezone

from statuspages import services
from statuspages.models import Component, PublishedIncident
from tests.conftest import PEERS_SWITCH, unavailable
from tests.peers.peer_support import NODE22, PEERS_DIR
from tests.statuspages.live_support import (
    ACTIVE_MAINTENANCE,
    OLD_TITLE,
    OUTAGE_TITLE,
    UPCOMING_MAINTENANCE,
    live_page,
)

pytestmark = [pytest.mark.peers, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

CLIENT = PEERS_DIR / "node_modules" / "statuspage.io"
RESULT_TYPES = CLIENT / "dist" / "interfaces" / "Result.d.ts"

READ = """
const { createRequire } = require('module')
const load = createRequire(process.cwd() + '/')
const { Statuspage } = load('statuspage.io')
const { Endpoint } = load('statuspage.io/dist/Endpoints')
const client = new Statuspage('unused-page-id')
client.setApiUrl(process.argv[1])
const calls = {
  summary: () => client.api.getSummary(),
  status: () => client.api.getStatus(),
  components: () => client.api.getComponents(),
  incidents: () => client.api.incidents.getAll(),
  unresolved: () => client.api.incidents.getUnresolved(),
  // getAll() reads upcoming.json in 3.3.8: the client's own path and HTTP client instead.
  maintenances: async () => (await client.apiClient.get(Endpoint.ScheduledMaintenances.all())).data,
  upcoming: () => client.api.scheduledMaintenances.getUpcoming(),
}
;(async () => {
  const out = {}
  for (const [name, call] of Object.entries(calls)) out[name] = await call()
  process.stdout.write(JSON.stringify(out))
})().catch((error) => { console.error(String(error)); process.exit(1) })
"""


def declared_fields(interface: str) -> set[str]:
    """Return the fields the client declares for ``interface`` in its Result.d.ts (flat interfaces only)."""
    text = RESULT_TYPES.read_text()
    body = re.search(rf"export interface {interface} \{{(.*?)\n\}}", text, re.S)
    assert body, f"{interface} is not declared in {RESULT_TYPES}"
    return set(re.findall(r"^\s+(\w+):", body.group(1), re.M))


def client_read(base: str) -> dict[str, Any]:
    """Return what the client read of each endpoint of the page at ``base``."""
    if not (NODE22.exists() and (CLIENT / "dist" / "index.js").exists()):
        unavailable(
            "statuspage.io is not installed: run tests/peers/install (needs npm)", switch=PEERS_SWITCH
        )
    result = subprocess.run(
        [str(NODE22), "-e", READ, base],
        cwd=PEERS_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    answers: dict[str, Any] = json.loads(result.stdout)
    return answers


@pytest.fixture
def read(live_server, org):
    """Make the page and return what the client read of each endpoint, and the page's HTML."""
    made = live_page(org, now=timezone.now())
    base = f"{live_server.url}/s/{made.page.slug}"
    answers = client_read(base)
    with urllib.request.urlopen(f"{base}/") as answer:
        html = answer.read().decode()
    return answers, html


@pytest.fixture
def declared(live_server, org):
    """Make the page, declare Docs' status in an update of the open incident and Search's by hand; return what the client read."""
    now = timezone.now()
    made = live_page(org, now=now)
    docs, search = (Component.objects.get(healthcheck=check) for check in (made.docs, made.search))
    services.incident_update_add(
        incident=PublishedIncident.objects.get(title=OUTAGE_TITLE),
        status="monitoring",
        body="A fix is out; docs are slow meanwhile.",
        now=now,
        components={docs.public_id: "degraded_performance"},
    )
    services.component_update(component=search, changes={"declared_status": "major_outage"})
    return client_read(f"{live_server.url}/s/{made.page.slug}"), docs


def by_name(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {item["name"]: item for item in items}


def test_the_client_reads_the_overall_status_the_page_shows(read):
    answers, html = read
    status = answers["status"]["status"]

    assert status == {"indicator": "major", "description": "Partial System Outage"}
    assert answers["summary"]["status"] == status
    assert f'role="status">{status["description"]}</p>' in html


def test_the_client_reads_every_component_with_the_page_s_statuses(read):
    answers, html = read
    components = by_name(answers["components"]["components"])

    assert {name: c["status"] for name, c in components.items()} == {
        "Core": "major_outage",
        "API": "major_outage",
        "Docs": "operational",
        "Search": "under_maintenance",
    }
    assert components["API"]["group_id"] == components["Core"]["id"]
    assert components["Core"]["group"] is True
    assert by_name(answers["summary"]["components"]) == components
    for name in components:
        assert name in html


def test_the_client_reads_each_incident_s_components_in_their_groups(read):
    answers, _ = read
    groups = {c["id"]: c["group_id"] for c in answers["components"]["components"]}
    embedded = [
        component
        for endpoint in ("incidents", "unresolved", "summary")
        for incident in answers[endpoint]["incidents"]
        for component in incident["components"]
    ]

    assert embedded
    assert all(component["group_id"] == groups[component["id"]] is not None for component in embedded)


@pytest.mark.parametrize(
    ("endpoint", "titles"),
    [
        ("incidents", [OUTAGE_TITLE, OLD_TITLE]),
        ("unresolved", [OUTAGE_TITLE]),
        ("summary", [OUTAGE_TITLE]),  # unresolved ones only, as Statuspage's summary
    ],
)
def test_the_client_reads_the_published_incidents(read, endpoint, titles):
    answers, _ = read
    assert [incident["name"] for incident in answers[endpoint]["incidents"]] == titles


def test_an_incident_s_updates_and_impact_read_as_written(read):
    answers, html = read
    (incident,) = answers["unresolved"]["incidents"]

    assert (incident["status"], incident["impact"]) == ("identified", "major")
    assert [u["body"] for u in incident["incident_updates"]] == [
        "A bad deploy; rolling back.",
        "Investigating errors on the API.",
    ]
    assert all(u["incident_id"] == incident["id"] for u in incident["incident_updates"])
    assert "A bad deploy; rolling back." in html


def test_the_client_reads_the_scheduled_maintenances(read):
    answers, html = read

    statuses = {m["name"]: m["status"] for m in answers["maintenances"]["scheduled_maintenances"]}
    assert statuses == {ACTIVE_MAINTENANCE: "in_progress", UPCOMING_MAINTENANCE: "scheduled"}
    assert [m["name"] for m in answers["upcoming"]["scheduled_maintenances"]] == [UPCOMING_MAINTENANCE]
    assert {m["name"] for m in answers["summary"]["scheduled_maintenances"]} == set(statuses)
    for name in statuses:
        assert name in html


@pytest.mark.parametrize(
    ("interface", "items"),
    [
        ("Component", lambda a: a["components"]["components"]),
        ("Incident", lambda a: a["incidents"]["incidents"]),
        ("IncidentUpdate", lambda a: [u for i in a["incidents"]["incidents"] for u in i["incident_updates"]]),
        ("Incident", lambda a: a["maintenances"]["scheduled_maintenances"]),
    ],
)
def test_every_field_the_client_declares_is_there(read, interface, items):
    answers, _ = read
    wanted = declared_fields(interface)
    found = items(answers)

    assert found
    for item in found:
        assert wanted <= set(item), wanted - set(item)


def test_every_answer_names_the_page_as_the_client_declares_it(read):
    answers, _ = read
    pages = [answer["page"] for answer in answers.values()]

    assert all(set(page) == {"id", "name", "time_zone", "updated_at", "url"} for page in pages)
    assert {page["name"] for page in pages} == {"Acme status"}


def test_the_client_reads_the_statuses_declared_by_an_update_and_by_hand(declared):
    answers, _ = declared
    components = by_name(answers["components"]["components"])

    assert {name: c["status"] for name, c in components.items()} == {
        "Core": "major_outage",
        "API": "major_outage",
        "Docs": "degraded_performance",
        "Search": "major_outage",  # set by hand: worse than its maintenance
    }
    assert by_name(answers["summary"]["components"]) == components


def test_the_client_reads_an_update_s_affected_components(declared):
    answers, docs = declared
    (incident,) = answers["unresolved"]["incidents"]
    latest, *earlier = incident["incident_updates"]

    assert latest["affected_components"] == [
        {
            "code": str(docs.public_id),
            "name": "Docs",
            "old_status": "operational",
            "new_status": "degraded_performance",
        }
    ]
    assert all(update["affected_components"] is None for update in earlier)
    assert {c["name"]: c["status"] for c in incident["components"]} == {
        "API": "major_outage",
        "Docs": "degraded_performance",
    }


def test_the_shortlink_the_client_reads_opens_the_incident_s_page(declared):
    answers, _ = declared
    (incident,) = answers["unresolved"]["incidents"]

    with urllib.request.urlopen(incident["shortlink"]) as answer:
        status, html = answer.status, answer.read().decode()
    assert status == 200
    assert f'<h1 class="incident-title">{incident["name"]}</h1>' in html
    assert "A fix is out; docs are slow meanwhile." in html
