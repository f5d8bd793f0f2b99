"""The public JSON in Atlassian Statuspage's shapes: field names and order, nulls, both arrays, times with the page's offset.

The key lists below are Statuspage's, as its public ``/api/v2`` answers them (a live page's
``summary.json`` and ``incidents.json``); ``fixtures/summary.json`` pins a whole answer.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from statuspages.render.etag import json_body
from statuspages.render.statuspage_api import (
    INCIDENTS_LIMIT,
    AffectedComponent,
    Component,
    Incident,
    IncidentStatus,
    IncidentUpdate,
    Page,
    PageContent,
    active_maintenances_json,
    components_json,
    incidents_json,
    iso_time,
    scheduled_maintenances_json,
    status_json,
    summary_json,
    unresolved_incidents_json,
    upcoming_maintenances_json,
)
from statuspages.render.vocabulary import ComponentStatus, Impact, page_status

FIXTURES = Path(__file__).parent / "fixtures"
T0 = datetime(2026, 11, 28, 17, 5, 9, 123456, tzinfo=UTC)

PAGE_KEYS = ["id", "name", "url", "time_zone", "updated_at"]
COMPONENT_KEYS = [
    "id",
    "name",
    "status",
    "created_at",
    "updated_at",
    "position",
    "description",
    "showcase",
    "start_date",
    "group_id",
    "page_id",
    "group",
    "only_show_if_degraded",
]
INCIDENT_KEYS = [
    "id",
    "name",
    "status",
    "created_at",
    "updated_at",
    "monitoring_at",
    "resolved_at",
    "impact",
    "shortlink",
    "started_at",
    "page_id",
    "incident_updates",
    "components",
]
UPDATE_KEYS = [
    "id",
    "status",
    "body",
    "incident_id",
    "created_at",
    "updated_at",
    "display_at",
    "affected_components",
    "deliver_notifications",
    "custom_tweet",
    "tweet_id",
]


def page(time_zone: str = "America/Los_Angeles") -> Page:
    return Page(
        id="pg8x2k4m9q1z",
        name="Acme <Status>",
        url="https://status.acme.example",
        time_zone=time_zone,
        updated_at=T0,
    )


def component(ident: str, name: str, status: ComponentStatus, position: int, **extra) -> Component:
    return Component(
        id=ident,
        name=name,
        status=status,
        created_at=datetime(2026, 1, 15, 9, 30, tzinfo=UTC),
        updated_at=T0,
        position=position,
        **extra,
    )


API = component("cmp0api00001", "API", ComponentStatus.PARTIAL_OUTAGE, 1, group_id="grp0core0001")
MCP = component(
    "cmp0mcp00001",
    "MCP server",
    ComponentStatus.OPERATIONAL,
    2,
    description="Tools for assistants",
    group_id="grp0core0001",
    start_date=date(2026, 1, 15),
)
CORE = component(
    "grp0core0001",
    "Core",
    ComponentStatus.PARTIAL_OUTAGE,
    1,
    group=True,
    components=("cmp0api00001", "cmp0mcp00001"),
)
DOCS = component("cmp0docs0001", "Docs", ComponentStatus.OPERATIONAL, 2, only_show_if_degraded=True)

OPEN = Incident(
    id="inc0open0001",
    name="Elevated errors in eu-west",
    status=IncidentStatus.IDENTIFIED,
    impact=Impact.MINOR,
    created_at=T0 - timedelta(minutes=40),
    updated_at=T0,
    started_at=T0 - timedelta(minutes=45),
    shortlink="https://status.acme.example/incidents/inc0open0001",
    updates=(
        IncidentUpdate(
            id="upd0open0001",
            status=IncidentStatus.INVESTIGATING,
            body="We are looking into errors from eu-west.",
            created_at=T0 - timedelta(minutes=40),
            updated_at=T0 - timedelta(minutes=40),
            display_at=T0 - timedelta(minutes=40),
            affected_components=(
                AffectedComponent(
                    "cmp0api00001", "API", ComponentStatus.OPERATIONAL, ComponentStatus.PARTIAL_OUTAGE
                ),
            ),
        ),
        IncidentUpdate(
            id="upd0open0002",
            status=IncidentStatus.IDENTIFIED,
            body="A bad deploy; rolling back.",
            created_at=T0,
            updated_at=T0,
            display_at=T0,
        ),
    ),
    components=(API,),
)
RESOLVED = Incident(
    id="inc0done0001",
    name="Slow answers",
    status=IncidentStatus.RESOLVED,
    impact=Impact.NONE,
    created_at=T0 - timedelta(days=3),
    updated_at=T0 - timedelta(days=3) + timedelta(hours=1),
    started_at=T0 - timedelta(days=3),
    shortlink="https://status.acme.example/incidents/inc0done0001",
    monitoring_at=T0 - timedelta(days=3) + timedelta(minutes=30),
    resolved_at=T0 - timedelta(days=3) + timedelta(hours=1),
)


def maintenance(ident: str, status: IncidentStatus, starts_in: timedelta) -> Incident:
    return Incident(
        id=ident,
        name=f"Database upgrade {ident[-1]}",
        status=status,
        impact=Impact.MAINTENANCE,
        created_at=T0 - timedelta(days=7),
        updated_at=T0 - timedelta(days=7),
        started_at=T0 - timedelta(days=7),
        shortlink=f"https://status.acme.example/incidents/{ident}",
        scheduled_for=T0 + starts_in,
        scheduled_until=T0 + starts_in + timedelta(hours=2),
        components=(MCP,),
    )


SOON = maintenance("mnt0next0001", IncidentStatus.SCHEDULED, timedelta(days=2))
LATER = maintenance("mnt0next0002", IncidentStatus.SCHEDULED, timedelta(days=9))
NOW_ON = maintenance("mnt0now00003", IncidentStatus.IN_PROGRESS, timedelta(hours=-1))
DONE = maintenance("mnt0done0004", IncidentStatus.COMPLETED, timedelta(days=-20))


def content(**overrides) -> PageContent:
    fields = {
        "page": page(),
        "status": page_status([API.status, MCP.status, DOCS.status], [OPEN.impact]),
        "components": (DOCS, MCP, CORE, API),
        "incidents": (RESOLVED, OPEN),
        "maintenances": (DONE, LATER, NOW_ON, SOON),
        **overrides,
    }
    return PageContent(**fields)


def roundtrip(payload: dict) -> dict:
    return json.loads(json_body(payload))


def test_summary_json_matches_its_fixture():
    expected = json.loads((FIXTURES / "summary.json").read_text())

    assert roundtrip(summary_json(content())) == expected


def test_summary_keys_are_statuspage_s_in_its_order():
    summary = roundtrip(summary_json(content()))

    assert list(summary) == ["page", "components", "incidents", "scheduled_maintenances", "status"]
    assert list(summary["page"]) == PAGE_KEYS
    assert list(summary["status"]) == ["indicator", "description"]
    for shape in summary["components"]:
        assert list(shape) == COMPONENT_KEYS + (["components"] if shape["group"] else [])
    incident = summary["incidents"][0]
    assert list(incident) == INCIDENT_KEYS
    assert [list(update) for update in incident["incident_updates"]] == [UPDATE_KEYS, UPDATE_KEYS]
    assert list(summary["scheduled_maintenances"][0]) == [*INCIDENT_KEYS, "scheduled_for", "scheduled_until"]


def test_an_empty_page_still_answers_both_arrays():
    empty = content(components=(), incidents=(), maintenances=(), status=page_status([]))

    summary = roundtrip(summary_json(empty))

    assert summary["components"] == []
    assert summary["incidents"] == []
    assert summary["scheduled_maintenances"] == []
    assert summary["status"] == {"indicator": "none", "description": "All Systems Operational"}
    assert roundtrip(incidents_json(empty))["incidents"] == []
    assert roundtrip(unresolved_incidents_json(empty))["incidents"] == []
    assert roundtrip(scheduled_maintenances_json(empty))["scheduled_maintenances"] == []
    assert roundtrip(upcoming_maintenances_json(empty))["scheduled_maintenances"] == []
    assert roundtrip(active_maintenances_json(empty))["scheduled_maintenances"] == []
    assert roundtrip(components_json(empty))["components"] == []


def test_status_json_is_the_page_and_its_indicator():
    assert roundtrip(status_json(content())) == {
        "page": {
            "id": "pg8x2k4m9q1z",
            "name": "Acme <Status>",
            "url": "https://status.acme.example",
            "time_zone": "America/Los_Angeles",
            "updated_at": "2026-11-28T09:05:09.123-08:00",
        },
        "status": {"indicator": "minor", "description": "Minor Service Outage"},
    }


def test_components_are_listed_by_position_with_groups_naming_their_members():
    shapes = roundtrip(components_json(content()))["components"]

    assert [c["id"] for c in shapes] == ["cmp0api00001", "grp0core0001", "cmp0docs0001", "cmp0mcp00001"]
    core = shapes[1]
    assert core["group"] is True
    assert core["components"] == ["cmp0api00001", "cmp0mcp00001"]
    assert shapes[0]["group_id"] == "grp0core0001"
    assert shapes[3]["start_date"] == "2026-01-15"
    assert shapes[2]["only_show_if_degraded"] is True
    assert {c["page_id"] for c in shapes} == {"pg8x2k4m9q1z"}


def test_incidents_list_newest_first_with_their_updates_newest_first():
    shapes = roundtrip(incidents_json(content()))["incidents"]

    assert [i["id"] for i in shapes] == ["inc0open0001", "inc0done0001"]
    assert [u["id"] for u in shapes[0]["incident_updates"]] == ["upd0open0002", "upd0open0001"]
    assert shapes[0]["incident_updates"][1]["affected_components"] == [
        {"code": "cmp0api00001", "name": "API", "old_status": "operational", "new_status": "partial_outage"}
    ]
    assert shapes[0]["incident_updates"][0]["affected_components"] is None
    assert shapes[1]["resolved_at"] == "2026-11-25T10:05:09.123-08:00"


def test_unresolved_lists_only_open_incidents():
    shapes = roundtrip(unresolved_incidents_json(content()))["incidents"]

    assert [i["id"] for i in shapes] == ["inc0open0001"]


def test_incidents_json_lists_the_latest_fifty():
    many = tuple(
        Incident(
            id=f"inc{n:09d}",
            name=f"Incident {n}",
            status=IncidentStatus.RESOLVED,
            impact=Impact.MINOR,
            created_at=T0 - timedelta(hours=n),
            updated_at=T0,
            started_at=T0 - timedelta(hours=n),
            shortlink="https://status.acme.example",
        )
        for n in range(80)
    )

    shapes = roundtrip(incidents_json(content(incidents=many)))["incidents"]

    assert len(shapes) == INCIDENTS_LIMIT
    assert shapes[0]["id"] == "inc000000000"
    assert shapes[-1]["id"] == f"inc{INCIDENTS_LIMIT - 1:09d}"


@pytest.mark.parametrize(
    ("render", "ids"),
    [
        (upcoming_maintenances_json, ["mnt0next0001", "mnt0next0002"]),
        (active_maintenances_json, ["mnt0now00003"]),
        (scheduled_maintenances_json, ["mnt0next0002", "mnt0next0001", "mnt0now00003", "mnt0done0004"]),
    ],
)
def test_maintenances_are_filtered_by_status(render, ids):
    shapes = roundtrip(render(content()))["scheduled_maintenances"]

    assert [m["id"] for m in shapes] == ids
    assert all(m["impact"] == "maintenance" for m in shapes)


def test_summary_lists_active_then_upcoming_maintenances():
    shapes = roundtrip(summary_json(content()))["scheduled_maintenances"]

    assert [m["id"] for m in shapes] == ["mnt0now00003", "mnt0next0001", "mnt0next0002"]
    assert shapes[1]["scheduled_for"] == "2026-11-30T09:05:09.123-08:00"


def test_every_id_is_a_string():
    def ids(value, key=None):
        if isinstance(value, dict):
            for k, v in value.items():
                yield from ids(v, k)
        elif isinstance(value, list):
            for item in value:
                yield from ids(item, key)
        elif key in ("id", "page_id", "incident_id", "group_id", "code"):
            yield value

    found = list(ids(roundtrip(summary_json(content()))))

    assert found
    assert all(isinstance(value, str) or value is None for value in found)


@pytest.mark.parametrize(
    ("moment", "zone", "expected"),
    [
        (
            datetime(2026, 7, 1, 12, 0, 0, 5_000, tzinfo=UTC),
            "America/Los_Angeles",
            "2026-07-01T05:00:00.005-07:00",
        ),
        (datetime(2026, 12, 1, 12, 0, tzinfo=UTC), "America/Los_Angeles", "2026-12-01T04:00:00.000-08:00"),
        (datetime(2026, 12, 1, 12, 0, tzinfo=UTC), "Asia/Kolkata", "2026-12-01T17:30:00.000+05:30"),
        (datetime(2026, 12, 1, 12, 0, tzinfo=UTC), "Etc/UTC", "2026-12-01T12:00:00.000Z"),
        (datetime(2026, 12, 1, 12, 0, tzinfo=UTC), "UTC", "2026-12-01T12:00:00.000Z"),
        # London in winter is on UTC's clock but is not UTC: Statuspage writes the offset.
        (datetime(2026, 12, 1, 12, 0, tzinfo=UTC), "Europe/London", "2026-12-01T12:00:00.000+00:00"),
        (datetime(2026, 7, 1, 12, 0, tzinfo=UTC), "Europe/London", "2026-07-01T13:00:00.000+01:00"),
        (None, "UTC", None),
    ],
)
def test_times_are_iso_with_milliseconds_in_the_page_zone(moment, zone, expected):
    assert iso_time(moment, zone) == expected


def test_naive_times_are_refused():
    with pytest.raises(ValueError, match="aware"):
        iso_time(datetime(2026, 12, 1), "UTC")
