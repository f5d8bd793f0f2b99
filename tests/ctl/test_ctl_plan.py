"""Planning: a file's monitors against the organization's, matched by name or key, field by field."""

from __future__ import annotations

import textwrap

import pytest

from uptimy.ctl.plan import Change, PlanRefused, make_plan
from uptimy.ctl.spec import MASK, load

ID_A = "0f1e2d3c-0000-4000-8000-00000000000a"
ID_B = "0f1e2d3c-0000-4000-8000-00000000000b"


def current(name="Docs MCP", id_=ID_A, **changes):
    """Return a healthcheck as the API answers it."""
    config = {
        "uri": "https://mcp.example.com/mcp",
        "headers": {},
        "requiredTools": [],
        "minTools": 0,
        "timeout": 10.0,
    }
    config.update(changes.pop("config", {}))
    return {
        "id": id_,
        "name": name,
        "type": 13,
        "type_name": "mcp",
        "config": config,
        "interval": 60,
        "regions": ["eu-west", "us-east"],
        "tags": [],
        "paused": False,
        "status": "up",
        "listing": None,
        **changes,
    }


def monitors(body: str, env=None):
    return load("monitors:\n" + textwrap.indent(textwrap.dedent(body), "  "), env=env or {}).monitors


DOCS = """\
- name: Docs MCP
  type: mcp
  target: https://mcp.example.com/mcp
"""


def test_a_monitor_the_organization_lacks_is_created():
    plan = make_plan(monitors(DOCS), [])

    assert [c.monitor.name for c in plan.creates] == ["Docs MCP"]
    assert plan.has_changes


def test_a_monitor_that_matches_is_unchanged():
    plan = make_plan(monitors(DOCS), [current()])

    assert plan.unchanged == ["Docs MCP"]
    assert not plan.has_changes


@pytest.mark.parametrize(
    ("extra", "have", "expected"),
    [
        ("config: {minTools: 2}", {}, [Change("config.minTools", 0, 2)]),
        ("interval: 2m", {}, [Change("interval", 60, 120)]),
        ("regions: [us-east, eu-west]", {}, []),
        ("regions: [eu-west]", {}, [Change("regions", ["eu-west", "us-east"], ["eu-west"])]),
        ("tags: [docs]", {}, [Change("tags", [], ["docs"])]),
        ("paused: false", {"paused": True}, [Change("paused", True, False)]),
        ("quorum: null", {"quorum": 2}, [Change("quorum", 2, None)]),
        ("", {"interval": 300}, []),  # a field the file leaves out is left as it is
        ("", {"config": {"timeout": 20.0}}, [Change("config.timeout", 20.0, 10.0)]),  # config is whole
        (
            "config: {headers: {Authorization: '${K}'}}",
            {},
            [Change("config.headers.Authorization", None, MASK)],
        ),
        ("", {"config": {"headers": {"X-Key": MASK}}}, [Change("config.headers.X-Key", MASK, None)]),
        ("config: {headers: {Authorization: '${K}'}}", {"config": {"headers": {"Authorization": MASK}}}, []),
    ],
)
def test_an_update_lists_each_changed_field(extra, have, expected):
    plan = make_plan(monitors(DOCS + (f"  {extra}\n" if extra else ""), env={"K": "v"}), [current(**have)])

    changes = plan.updates[0].changes if plan.updates else []
    assert changes == expected


def test_an_update_sends_only_the_changed_fields_and_the_whole_config_with_header_values():
    [monitor] = monitors(
        DOCS + "  interval: 120\n  config: {minTools: 1, headers: {X-Key: '${K}'}}\n", env={"K": "v"}
    )
    plan = make_plan([monitor], [current(config={"headers": {"X-Key": MASK}})])

    update = plan.updates[0]
    assert update.send == ["interval", "config"]
    assert monitor.body(update.send)["config"]["headers"] == {"X-Key": "v"}


def test_header_values_are_sent_again_only_when_asked():
    [monitor] = monitors(DOCS + "  config: {headers: {X-Key: '${K}'}}\n", env={"K": "v"})
    have = [current(config={"headers": {"X-Key": MASK}})]

    assert make_plan([monitor], have).unchanged == ["Docs MCP"]
    resent = make_plan([monitor], have, send_headers=True).updates[0]
    assert resent.changes == [Change("config.headers.X-Key", MASK, f"{MASK} (sent again)")]


def test_a_key_matches_a_renamed_monitor():
    found = monitors(f"- name: Docs\n  key: {ID_A}\n  type: mcp\n  target: https://mcp.example.com/mcp\n")

    plan = make_plan(found, [current(name="Docs MCP")])

    assert plan.updates[0].changes == [Change("name", "Docs MCP", "Docs")]


def test_monitors_the_file_does_not_name_are_left_unless_pruned():
    have = [current(), current(name="Old", id_=ID_B)]

    kept = make_plan(monitors(DOCS), have)
    pruned = make_plan(monitors(DOCS), have, prune=True)

    assert (kept.unmanaged, kept.deletes) == (["Old"], [])
    assert [d.name for d in pruned.deletes] == ["Old"]


@pytest.mark.parametrize(
    ("body", "have", "message"),
    [
        (DOCS, [current(), current(id_=ID_B)], "2 monitors of the organization are named 'Docs MCP'"),
        (
            f"- name: X\n  key: {ID_B}\n  type: mcp\n  target: https://mcp.example.com/mcp\n",
            [current()],
            f"no monitor of the organization has the id '{ID_B}'",
        ),
    ],
)
def test_a_plan_that_cannot_be_made_is_refused_naming_the_entry(body, have, message):
    with pytest.raises(PlanRefused) as refused:
        make_plan(monitors(body), have)

    assert any(message in p.message for p in refused.value.problems)


@pytest.mark.parametrize(
    ("have", "missing"),
    [
        ([], True),  # a create has no stored value to keep
        ([current(config={"headers": {"X-Key": MASK}})], False),  # the stored value is kept
        ([current()], True),  # a header the monitor doesn't store yet
    ],
)
def test_an_unset_header_variable_is_missing_unless_a_stored_value_stands_in(have, missing):
    plan = make_plan(monitors(DOCS + "  config: {headers: {X-Key: '${UNSET_K}'}}\n"), have)

    assert bool(plan.missing_secrets) is missing
    assert all("UNSET_K is not set" in p.message for p in plan.missing_secrets)


def stored_listing(**changes):
    """Return a listing as the healthcheck's answer carries it: its five fields."""
    return {
        "namespace": "com.example/docs",
        "website_url": "https://example.com/",
        "repository_url": "",
        "pricing_url": "",
        "quote": "",
        **changes,
    }


LISTING = "  listing: {namespace: com.example/docs, website_url: 'https://example.com/'}\n"


@pytest.mark.parametrize(
    ("entry", "have", "expected", "action"),
    [
        pytest.param(LISTING, stored_listing(), [], None, id="unchanged"),
        pytest.param(
            LISTING.replace("com.example/docs", "com.example/docs-mcp"),
            stored_listing(),
            [Change("listing.namespace", "com.example/docs", "com.example/docs-mcp")],
            "put",
            id="changed",
        ),
        pytest.param(
            "  listing: {namespace: com.example/docs}\n",  # a key left out is empty: the listing is whole
            stored_listing(),
            [Change("listing.website_url", "https://example.com/", "")],
            "put",
            id="changed-by-a-key-left-out",
        ),
        pytest.param(
            LISTING,
            None,
            [
                Change(
                    "listing", None, {"namespace": "com.example/docs", "website_url": "https://example.com/"}
                )
            ],
            "put",
            id="added",
        ),
        pytest.param(
            "  listing: null\n",
            stored_listing(),
            [
                Change(
                    "listing", {"namespace": "com.example/docs", "website_url": "https://example.com/"}, None
                )
            ],
            "delete",
            id="removed",
        ),
        pytest.param("  listing: null\n", None, [], None, id="removed-and-none"),
        pytest.param("", stored_listing(), [], None, id="left-out-is-left-as-it-is"),
    ],
)
def test_a_listing_is_compared_whole_and_put_or_deleted(entry, have, expected, action):
    plan = make_plan(monitors(DOCS + entry), [current(listing=have)])

    update = plan.updates[0] if plan.updates else None
    assert (update.changes if update else []) == expected
    assert (update.listing if update else None) == action


def test_a_listing_alone_changes_sends_no_patch():
    plan = make_plan(monitors(DOCS + LISTING), [current()])

    assert plan.updates[0].send == []
    assert plan.updates[0].listing == "put"


def test_a_new_monitor_puts_its_listing_after_it_is_created():
    [create] = make_plan(monitors(DOCS + LISTING), []).creates

    assert create.listing == "put"
    assert make_plan(monitors(DOCS), []).creates[0].listing is None
