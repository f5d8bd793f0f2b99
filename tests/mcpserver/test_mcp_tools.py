"""What each MCP tool does for a grant: through monitors' services, with the API's messages, all or nothing."""

from __future__ import annotations

import pytest
from django.utils import timezone

from alerts.services import outbox_consume
from mcpserver import tools
from mcpserver.auth import Grant
from monitors.models import Healthcheck
from monitors.services import healthcheck_create, listing_set
from probes.checks import check_kind
from tests.alerts.conftest import status_change

pytestmark = pytest.mark.django_db
BASE = "https://uptimy.example.com"
URL = "https://mcp.example.com/mcp"


def grant_of(organization, *scopes: str) -> Grant:
    return Grant(
        organization_id=organization.id,
        scopes=frozenset(scopes or ("read", "write")),
        user_id=None,
        via="key",
    )


@pytest.fixture
def grant(org) -> Grant:
    return grant_of(org)


def add(grant: Grant, *entries: dict) -> dict:
    return tools.add_monitors(grant, list(entries), base_url=BASE)


def refusal(call, *args, **kwargs) -> str:
    with pytest.raises(tools.Refused) as refused:
        call(*args, **kwargs)
    return str(refused.value)


def names(org) -> list[str]:
    return sorted(Healthcheck.objects.filter(organization=org).values_list("name", flat=True))


# --- add_monitors ---------------------------------------------------------------------------------


def test_add_monitors_adds_mcp_monitors_with_their_settings(grant, org):
    added = add(
        grant,
        {"url": URL},
        {
            "url": "https://docs.example.com/mcp",
            "name": "Docs",
            "requiredTools": ["search"],
            "minTools": 2,
            "regions": ["eu-west"],
            "interval": 120,
        },
    )

    assert [monitor["name"] for monitor in added["added"]] == ["mcp.example.com/mcp", "Docs"]
    docs = Healthcheck.objects.get(name="Docs")
    assert (docs.type, docs.interval_seconds) == (13, 120)
    assert (docs.config["requiredTools"], docs.config["minTools"]) == (["search"], 2)
    assert list(docs.regions.values_list("slug", flat=True)) == ["eu-west"]
    assert added["added"][1]["settings_url"] == f"{BASE}/app/healthchecks/{docs.public_id}/edit/"


def test_ten_thousand_entries_are_refused_and_nothing_is_added(grant, org):
    words = refusal(add, grant, *({"url": f"https://mcp{n}.example.com/mcp"} for n in range(10_000)))

    assert words.startswith(f"add_monitors adds at most {tools.MAX_MONITORS_PER_CALL} monitors a call")
    assert "this call has 10,000. Nothing was added" in words
    assert names(org) == []


def test_headers_are_refused_with_where_the_key_goes_in_the_app(grant, org):
    words = refusal(add, grant, {"url": URL}, {"url": URL, "headers": {"Authorization": "Bearer sk-1"}})

    assert words.startswith("Nothing was added. monitors[1]: headers are not taken here")
    assert f"{BASE}/app/healthchecks/new/?type=mcp (Advanced settings, Request headers)" in words
    assert "sk-1" not in words
    assert names(org) == []


def test_a_key_in_the_url_is_refused_with_the_existing_monitors_advanced_settings(grant, org):
    existing = add(grant, {"url": URL, "name": "Docs"})["added"][0]

    words = refusal(add, grant, {"url": f"{URL}?api_key=sk-1"})

    assert "monitors[0].url: it carries a key (the query parameter api_key)" in words
    assert f"Add the monitor with the URL without it ({URL})" in words
    assert f"{existing['settings_url']} (Advanced settings, Request headers)." in words
    assert names(org) == ["Docs"]


def test_a_user_and_password_in_the_url_is_refused_as_a_key(grant, org):
    words = refusal(add, grant, {"url": "https://me:sk-1@mcp.example.com/mcp"})

    assert "it carries a key (a user name or password)" in words
    assert "sk-1" not in words.replace("https://me:sk-1@", "")  # only the URL the caller sent echoes it


@pytest.mark.parametrize(
    ("url", "words"),
    [
        (
            "http://10.0.0.7/mcp",
            "monitors[0].url: 10.0.0.7 is a private address; Uptimy only checks public addresses.",
        ),
        ("http://127.0.0.1:8000/mcp", "monitors[0].url: 127.0.0.1 is a loopback address"),
        ("http://localhost/mcp", "monitors[0].url: localhost resolves to 127.0.0.1, a loopback address"),
        ("http://[::1]/mcp", "monitors[0].url: ::1 is a loopback address"),
    ],
)
def test_a_private_address_is_refused_with_the_address_guards_sentence(grant, org, url, words):
    assert words in refusal(add, grant, {"url": url})
    assert names(org) == []


def test_a_private_address_is_taken_where_private_targets_are_allowed(grant, org, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True

    add(grant, {"url": "http://127.0.0.1:8000/mcp", "name": "Local"})

    assert names(org) == ["Local"]


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        (
            {"url": "ftp://mcp.example.com/"},
            "monitors[1].config.uri: Enter an absolute http:// or https:// URL.",
        ),
        ({"url": URL, "minTools": -1}, "monitors[1].config.minTools: Must be a whole number of at least 0."),
        (
            {"url": URL, "requiredTools": ["a", "a"]},
            "monitors[1].config.requiredTools: Tool names must be unique",
        ),
        (
            {"url": URL, "interval": 0},
            "monitors[1].interval: Ensure this value is greater than or equal to 1.",
        ),
        (
            {"url": URL, "name": "x" * 201},
            "monitors[1].name: Ensure this field has no more than 200 characters.",
        ),
        ({"url": URL, "tags": ["a"]}, "monitors[1]: unknown field tags; the fields are: url, name"),
    ],
)
def test_a_bad_entry_is_refused_with_the_apis_message_and_nothing_is_added(grant, org, entry, words):
    assert words in refusal(add, grant, {"url": "https://fine.example.com/mcp"}, entry)
    assert names(org) == []


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"url": URL, "regions": ["mars"]}, "monitors[1]: regions: Your plan doesn't allow mars"),
        (
            {"url": URL, "interval": 30},
            "monitors[1]: interval: Your plan (Free) checks at most every 300 seconds.",
        ),
    ],
)
def test_a_refusal_only_a_write_finds_undoes_the_monitors_before_it(make_org, entry, words):
    free = make_org(plan="free")

    assert words in refusal(add, grant_of(free), {"url": "https://first.example.com/mcp"}, entry)
    assert names(free) == []


def test_the_plans_count_is_kept_and_nothing_is_added_past_it(make_org):
    free = make_org(plan="free")  # 10 healthchecks
    add(grant_of(free), *({"url": f"https://mcp{n}.example.com/mcp"} for n in range(9)))

    words = refusal(
        add, grant_of(free), {"url": "https://a.example.com/mcp"}, {"url": "https://b.example.com/mcp"}
    )

    assert "monitors[1]: Your plan (Free) allows 10 healthchecks" in words
    assert len(names(free)) == 9


@pytest.mark.parametrize(
    "call",
    [
        lambda grant: add(grant, {"url": URL}),
        lambda grant: tools.pause_monitor(grant, "Docs", base_url=BASE),
        lambda grant: tools.resume_monitor(grant, "Docs", base_url=BASE),
    ],
    ids=["add_monitors", "pause_monitor", "resume_monitor"],
)
def test_a_read_only_credential_cannot_change_monitors(grant, org, call):
    add(grant, {"url": URL, "name": "Docs"})

    assert refusal(call, grant_of(org, "read")).startswith("This credential is read-only")
    assert Healthcheck.objects.get().paused is False


# --- reading, pausing ---------------------------------------------------------------------------


def test_list_monitors_shows_each_with_its_status_and_links(grant):
    add(grant, {"url": URL, "name": "Docs"})

    listed = tools.list_monitors(grant, status=None, limit=100, base_url=BASE)

    assert listed["total"] == 1
    (monitor,) = listed["monitors"]
    assert (monitor["name"], monitor["type"], monitor["url"], monitor["status"]) == (
        "Docs",
        "mcp",
        URL,
        "pending",
    )
    assert monitor["page_url"] == f"{BASE}/app/healthchecks/{monitor['id']}/"


def test_list_monitors_filters_by_status_and_refuses_an_unknown_one(grant):
    add(grant, {"url": URL, "name": "Docs"})

    assert tools.list_monitors(grant, status="down", limit=100, base_url=BASE)["total"] == 0
    assert tools.list_monitors(grant, status="pending", limit=100, base_url=BASE)["total"] == 1
    assert refusal(tools.list_monitors, grant, status="broken", limit=100, base_url=BASE).startswith(
        "status must be one of pending, up, "
    )


def test_another_organizations_monitor_is_not_found(grant, other_org):
    add(grant, {"url": URL, "name": "Docs"})
    theirs = grant_of(other_org)

    assert tools.list_monitors(theirs, status=None, limit=100, base_url=BASE)["total"] == 0
    assert refusal(tools.get_monitor, theirs, "Docs", base_url=BASE).startswith("No monitor 'Docs'")


def test_get_monitor_shows_settings_status_and_each_regions_newest_result(grant):
    monitor_id = add(grant, {"url": URL, "name": "Docs"})["added"][0]["id"]

    shown = tools.get_monitor(grant, monitor_id, base_url=BASE)

    assert (shown["name"], shown["type_name"], shown["status"]) == ("Docs", "mcp", "pending")
    assert [region["region"] for region in shown["regions_now"]] == ["ap-southeast", "eu-west", "us-east"]
    assert all(region["latest"] is None for region in shown["regions_now"])


@pytest.mark.parametrize(("scopes", "shown"), [(("read", "write"), True), (("read",), False)])
def test_get_monitor_shows_a_heartbeat_s_ping_url_only_to_a_grant_that_may_write(org, scopes, shown):
    # Whoever holds the URL can report the job done or failed: a change.
    heartbeat = healthcheck_create(
        organization=org,
        name="nightly",
        check_type=check_kind(7),
        config={"schedule": {"period": 86400}, "grace": 300},
        now=timezone.now(),
    )

    ping_url = tools.get_monitor(grant_of(org, *scopes), str(heartbeat.public_id), base_url=BASE)["ping_url"]

    assert (ping_url is not None) == shown
    assert ping_url is None or ping_url.startswith("/ping/")


def test_list_monitors_names_what_each_type_watches(org, grant):
    healthcheck_create(
        organization=org,
        name="ssh",
        check_type=check_kind("tcp"),
        config={"host": "db.example.com", "port": 22},
        now=timezone.now(),
    )

    listed = tools.list_monitors(grant, status=None, limit=100, base_url=BASE)["monitors"]

    assert [(m["name"], m["target"], m["url"]) for m in listed] == [("ssh", "db.example.com:22", None)]


def test_get_monitor_shows_the_monitor_s_listing_as_the_api_does(grant, now):
    monitor_id = add(grant, {"url": URL, "name": "Docs"})["added"][0]["id"]
    assert tools.get_monitor(grant, monitor_id, base_url=BASE)["listing"] is None
    listing_set(
        healthcheck=Healthcheck.objects.get(public_id=monitor_id),
        data={"namespace": "com.acme/docs"},
        now=now,
    )

    shown = tools.get_monitor(grant, monitor_id, base_url=BASE)

    assert shown["listing"] == {
        "namespace": "com.acme/docs",
        "website_url": "",
        "repository_url": "",
        "pricing_url": "",
        "quote": "",
    }


def test_pause_then_resume_by_name(grant):
    add(grant, {"url": URL, "name": "Docs"})

    assert tools.pause_monitor(grant, "Docs", base_url=BASE)["status"] == "paused"
    assert tools.resume_monitor(grant, "Docs", base_url=BASE)["status"] == "pending"


def test_get_incidents_lists_the_organizations_incidents(grant, org, now):
    add(grant, {"url": URL, "name": "Docs"})
    status_change(
        Healthcheck.objects.get(), "down", at=now, reason="Connection refused", regions={"eu-west": "connect"}
    )
    outbox_consume(now=now)

    incidents = tools.get_incidents(grant, monitor="Docs", open_only=True, limit=20)

    assert incidents["total"] == 1
    assert incidents["incidents"][0]["healthcheck"]["name"] == "Docs"
    assert incidents["incidents"][0]["state"] == "open"
