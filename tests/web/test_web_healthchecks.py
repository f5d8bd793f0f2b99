"""The dashboard, the healthcheck form (the API's messages, masked headers, Test now), its page and its actions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from monitors.models import (
    Healthcheck,
    Membership,
    ProbeResult,
    Region,
    RegionState,
    ToolList,
    ToolListVersion,
)
from monitors.secrets import MASK, decrypt_headers
from monitors.services import healthcheck_create
from probes.checks import check_kind

pytestmark = pytest.mark.django_db

MCP_FORM = {
    "type": "mcp",
    "name": "Docs MCP",
    "uri": "https://mcp.example.com/mcp",
    "header_name_0": "Authorization",
    "header_value_0": "Bearer s3cret-value",
    "required_tools": "search_docs\nget_status\n",
    "min_tools": "2",
    "timeout": "10",
    "interval": "300",
    "regions": ["eu-west"],
    "recheck_count": "2",
    "degraded_threshold_ms": "",
    "tags": "docs, production",
    "action": "save",
}


def test_creating_an_mcp_healthcheck_stores_what_the_form_says(owner, org):
    answer = owner.post("/app/healthchecks/new/", MCP_FORM)
    healthcheck = Healthcheck.objects.get(organization=org)
    assert answer.status_code == 302
    assert answer["Location"] == f"/app/healthchecks/{healthcheck.public_id}/"
    assert healthcheck.config == {
        "uri": "https://mcp.example.com/mcp",
        "headers": {"Authorization": MASK},
        "requiredTools": ["search_docs", "get_status"],
        "minTools": 2,
        "timeout": 10,
    }
    assert decrypt_headers(healthcheck.secret_headers) == {"Authorization": "Bearer s3cret-value"}
    assert healthcheck.interval_seconds == 300
    assert sorted(r.slug for r in healthcheck.regions.all()) == ["eu-west"]
    assert sorted(t.name for t in healthcheck.tag_rows.all()) == ["docs", "production"]


def test_an_http_healthcheck_is_created_from_its_tab(owner, org):
    form = {
        "type": "http",
        "name": "Site",
        "uri": "https://example.com/",
        "method": "HEAD",
        "expected_status": "2xx, 301",
        "keyword": "",
        "timeout": "5",
        "interval": "300",
        "regions": ["eu-west", "us-east"],
        "recheck_count": "1",
        "tags": "",
        "action": "save",
    }
    assert owner.post("/app/healthchecks/new/", form).status_code == 302
    config = Healthcheck.objects.get(organization=org).config
    assert config["method"] == "HEAD"
    assert config["expectedStatus"] == ["2xx", "301"]


def test_the_http_tab_sets_the_certificate_warning(owner, org):
    form = {
        "type": "http",
        "name": "Site",
        "uri": "https://example.com/",
        "certificate_warn_days": "30",
        "interval": "300",
        "regions": ["eu-west"],
        "recheck_count": "1",
        "tags": "",
        "action": "save",
    }
    assert (
        "Warn days before the certificate expires"
        in owner.get("/app/healthchecks/new/?type=http").content.decode()
    )

    assert owner.post("/app/healthchecks/new/", form).status_code == 302
    assert Healthcheck.objects.get(organization=org).config["certificateWarnDays"] == 30


# Each type's tab as a customer fills it in, and the config it must store.
EVERY_TAB = {
    "http": (
        {
            "uri": "https://example.com/health",
            "assertions": '[{"type": "json", "path": "$.status", "op": "equals", "value": "ok"}]',
        },
        {
            "uri": "https://example.com/health",
            "assertions": [{"type": "json", "path": "$.status", "op": "equals", "value": "ok"}],
        },
    ),
    "tls": (
        {"host": "example.com", "port": "443", "warn_days": "20"},
        {"host": "example.com", "warnDays": 20},
    ),
    "tcp": (
        {"host": "example.com", "port": "22", "expect": "^SSH-2"},
        {"host": "example.com", "port": 22, "expect": "^SSH-2"},
    ),
    "dns": ({"dns_name": "example.com", "record_type": "MX"}, {"name": "example.com", "recordType": "MX"}),
    "ping": ({"host": "example.com", "count": "3"}, {"host": "example.com", "count": 3}),
    "domain": ({"domain": "example.com"}, {"domain": "example.com"}),
    "heartbeat": (
        {"heartbeat_schedule": '{"cron": "0 3 * * *", "tz": "Europe/Paris"}', "heartbeat_grace": "300"},
        {"schedule": {"cron": "0 3 * * *", "tz": "Europe/Paris"}, "grace": 300},
    ),
    "mcp": ({"uri": "https://mcp.example.com/mcp"}, {"uri": "https://mcp.example.com/mcp"}),
}


@pytest.mark.parametrize("type_name", sorted(EVERY_TAB))
def test_every_type_is_created_from_its_own_tab(owner, org, type_name):
    fields, config = EVERY_TAB[type_name]
    tab = owner.get(f"/app/healthchecks/new/?type={type_name}").content.decode()
    form = {
        "type": type_name,
        "name": "Watched",
        "interval": "3600",
        "regions": ["eu-west", "us-east"],
        "recheck_count": "1",
        "tags": "",
        "action": "save",
        **fields,
    }

    answer = owner.post("/app/healthchecks/new/", form)

    assert f'<a href="?type={type_name}" aria-current="page">' in tab
    assert answer.status_code == 302, answer.context["form"].errors
    healthcheck = Healthcheck.objects.get(organization=org)
    assert healthcheck.check_type.name == type_name
    assert config.items() <= healthcheck.config.items()


def test_the_tabs_work_without_script(owner):
    assert "Required tools" in owner.get("/app/healthchecks/new/?type=mcp").content.decode()
    page = owner.get("/app/healthchecks/new/?type=http").content.decode()
    assert "Expected status" in page
    assert "Required tools" not in page


@pytest.mark.parametrize(
    ("changes", "api_changes", "field"),
    [
        ({"uri": "ftp://example.com"}, {"config": {"uri": "ftp://example.com"}}, "uri"),
        (
            {"uri": "https://mcp.example.com/mcp?clientSecret=sk-9"},
            {"config": {"uri": "https://mcp.example.com/mcp?clientSecret=sk-9"}},
            "uri",
        ),
        ({"min_tools": "many"}, {"config": {"minTools": "many"}}, "min_tools"),
        ({"timeout": "600"}, {"config": {"timeout": 600}}, "timeout"),
        (
            {"certificate_warn_days": "4000"},
            {"config": {"certificateWarnDays": 4000}},
            "certificate_warn_days",
        ),
        ({"interval": "10"}, {"interval": 10}, "interval"),
        ({"interval": "soon"}, {"interval": "soon"}, "interval"),
        ({"name": ""}, {"name": ""}, "name"),
        ({"regions": ["ap-southeast"]}, {"regions": ["ap-southeast"]}, "regions"),
        ({"recheck_count": "9"}, {"recheck_count": 9}, "recheck_count"),
        (
            {"header_name_0": "Bad Name"},
            {"config": {"headers": {"Bad Name": "Bearer s3cret-value"}}},
            "headers",
        ),
    ],
)
def test_a_refused_field_shows_the_api_s_own_message_next_to_it(
    owner, org, make_client, changes, api_changes, field
):
    org.plan = org.plan.__class__.objects.get(slug="free")
    org.save()
    answer = owner.post("/app/healthchecks/new/", {**MCP_FORM, **changes})
    assert answer.status_code == 400
    shown = answer.context["form"].errors[field]
    body = {
        "name": "Docs MCP",
        "type": "mcp",
        "interval": 300,
        "regions": ["eu-west"],
        "recheck_count": 2,
        **{key: value for key, value in api_changes.items() if key != "config"},
        "config": {
            "uri": "https://mcp.example.com/mcp",
            "headers": {"Authorization": "Bearer s3cret-value"},
            **api_changes.get("config", {}),
        },
    }
    api = make_client(org).post("/api/v1/healthchecks/", body, format="json")
    assert api.status_code == 400
    api_messages = [
        m
        for messages in api.json().values()
        for m in (messages if isinstance(messages, list) else [messages])
    ]
    assert any(message.endswith(str(api_message)) for message in shown for api_message in api_messages), (
        shown,
        api.json(),
    )
    assert not Healthcheck.objects.filter(organization=org).exists()


def test_a_form_with_errors_keeps_what_was_typed(owner):
    page = owner.post("/app/healthchecks/new/", {**MCP_FORM, "uri": "not a url"}).content.decode()
    assert 'value="not a url"' in page
    assert "search_docs\nget_status" in page


def test_editing_shows_stored_header_values_masked_and_keeps_them(owner, org, make_check):
    healthcheck = make_check(org, headers={"Authorization": "Bearer stored-secret"})
    page = owner.get(f"/app/healthchecks/{healthcheck.public_id}/edit/").content.decode()
    assert "stored-secret" not in page
    assert f'value="{MASK}"' in page
    form = {**MCP_FORM, "header_value_0": MASK, "name": "Renamed"}
    assert owner.post(f"/app/healthchecks/{healthcheck.public_id}/edit/", form).status_code == 302
    healthcheck.refresh_from_db()
    assert healthcheck.name == "Renamed"
    assert decrypt_headers(healthcheck.secret_headers) == {"Authorization": "Bearer stored-secret"}


def test_a_header_value_typed_over_the_mask_replaces_the_stored_one(owner, org, make_check):
    healthcheck = make_check(org, headers={"Authorization": "Bearer stored-secret"})
    form = {**MCP_FORM, "header_value_0": "Bearer new-secret"}
    owner.post(f"/app/healthchecks/{healthcheck.public_id}/edit/", form)
    healthcheck.refresh_from_db()
    assert decrypt_headers(healthcheck.secret_headers) == {"Authorization": "Bearer new-secret"}


def test_a_masked_value_for_a_header_never_stored_is_refused_with_the_api_s_message(owner, org, make_check):
    healthcheck = make_check(org)
    form = {**MCP_FORM, "header_value_0": MASK}
    answer = owner.post(f"/app/healthchecks/{healthcheck.public_id}/edit/", form)
    assert answer.status_code == 400
    assert answer.context["form"].errors["headers"] == [
        "Authorization: Send the value: this header has no stored value to keep."
    ]


def test_test_now_refuses_a_bad_config_next_to_its_field(owner):
    answer = owner.post("/app/healthchecks/new/", {**MCP_FORM, "uri": "", "action": "test"})
    assert answer.context["form"].errors["uri"] == ["Enter an absolute http:// or https:// URL."]
    assert answer.context["trial"] is None


@override_settings(UPTIMY_ALLOW_PRIVATE_TARGETS=True)
def test_test_now_on_a_url_without_mcp_says_so_and_saves_nothing(owner, org, no_mcp_url):
    answer = owner.post("/app/healthchecks/new/", {**MCP_FORM, "uri": no_mcp_url, "action": "test"})
    assert answer.status_code == 200
    assert answer.context["trial"].kind == "no_endpoint"
    assert "No MCP endpoint at this URL" in answer.content.decode()
    assert not Healthcheck.objects.exists()


def test_the_dashboard_lists_the_organization_s_checks_only(owner, org, other_org, make_check):
    make_check(org, name="Ours")
    make_check(other_org, name="Theirs")
    page = owner.get("/app/").content.decode()
    assert "Ours" in page
    assert "Theirs" not in page
    assert "Pending" in page  # the status as a word, not a colour alone


def test_the_dashboard_and_the_check_s_page_show_what_each_check_watches(owner, org, now):
    port = healthcheck_create(
        organization=org,
        name="Mail port",
        check_type=check_kind("tcp"),
        config={"host": "mail.example.com", "port": 25},
        now=now,
    )

    assert "mail.example.com:25" in owner.get("/app/").content.decode()
    assert "TCP · mail.example.com:25 ·" in owner.get(f"/app/healthchecks/{port.public_id}/").content.decode()


@pytest.mark.parametrize(
    ("query", "shown", "hidden"),
    [
        ("status=down", ["Broken"], ["Fine"]),
        ("type=http", ["Site"], ["Fine", "Broken"]),
        ("tag=docs", ["Fine"], ["Broken", "Site"]),
        ("search=broken", ["Broken"], ["Fine", "Site"]),
    ],
)
def test_the_dashboard_filters_by_status_type_tag_and_search(owner, org, make_check, query, shown, hidden):
    fine = make_check(org, name="Fine")
    fine.tag_rows.create(name="docs")
    broken = make_check(org, name="Broken")
    Healthcheck.objects.filter(pk=broken.pk).update(status="down")
    make_check(org, name="Site", type_name="http")
    page = owner.get(f"/app/?{query}").content.decode()
    for name in shown:
        assert f">{name}</a>" in page
    for name in hidden:
        assert f">{name}</a>" not in page


def test_an_unknown_filter_value_is_named_not_a_500(owner):
    answer = owner.get("/app/?type=gopher")
    assert answer.status_code == 200
    assert answer.context["board"].errors["type"]


def test_htmx_refreshes_the_rows_alone(owner, org, make_check):
    make_check(org, name="Ours")
    answer = owner.get("/app/?status=pending", HTTP_HX_REQUEST="true")
    body = answer.content.decode()
    assert body.lstrip().startswith("<tbody")
    assert 'hx-get="/app/?status=pending"' in body
    assert "<html" not in body


def test_the_dashboard_shows_the_last_response(owner, org, make_check):
    healthcheck = make_check(org)
    region = Region.objects.get(slug="eu-west")
    RegionState.objects.create(
        healthcheck=healthcheck, region=region, status="up", last_result_at=timezone.now(), response_ms=123.4
    )
    assert owner.get("/app/").context["board"].rows[0].last_ms == 123.4


def _up_for_two_days_with_an_hour_down(healthcheck) -> None:
    now = timezone.now()
    Healthcheck.objects.filter(pk=healthcheck.pk).update(created_at=now - timedelta(days=2), status="up")
    healthcheck.status_changes.create(at=now - timedelta(hours=2), from_status="up", to_status="down")
    healthcheck.status_changes.create(at=now - timedelta(hours=1), from_status="down", to_status="up")


def test_the_dashboard_s_uptime_is_the_status_pages_and_reports_definition(owner, org, make_check):
    """Duration-based on the status (monitors.uptime): 1 h down of 24 h, and of the 48 h since creation."""
    _up_for_two_days_with_an_hour_down(make_check(org))
    row = owner.get("/app/").context["board"].rows[0]
    assert (row.uptime_24h, row.uptime_30d) == ("95.83", "97.91")
    page = owner.get("/app/").content.decode()
    assert "95.83%" in page


def test_the_healthcheck_page_s_uptime_is_the_same_figure(owner, org, make_check):
    healthcheck = make_check(org)
    _up_for_two_days_with_an_hour_down(healthcheck)
    page = owner.get(f"/app/healthchecks/{healthcheck.public_id}/").context["page"]
    assert (page.percent_24h, page.percent_30d) == ("95.83", "97.91")


def test_a_check_without_measured_time_shows_a_dash_for_uptime(owner, org, make_check):
    make_check(org)  # pending: nothing measured yet
    row = owner.get("/app/").context["board"].rows[0]
    assert (row.uptime_24h, row.uptime_30d) == (None, None)


def test_the_dashboard_draws_each_check_s_last_24_hours_from_its_rollups(owner, org, make_check):
    healthcheck = make_check(org)
    eu, us = Region.objects.get(slug="eu-west"), Region.objects.get(slug="us-east")
    hour = timezone.now().replace(minute=0, second=0, microsecond=0)
    for region, median, failures in [(eu, 100, 0), (us, 300, 1)]:
        healthcheck.rollups.create(
            region=region, period="hour", start=hour, runs=4, failures=failures, p50_ms=median
        )
    healthcheck.rollups.create(region=eu, period="hour", start=hour - timedelta(hours=3), runs=4, p50_ms=50)
    healthcheck.rollups.create(region=eu, period="hour", start=hour - timedelta(hours=30), runs=4, p50_ms=9)
    spark = owner.get("/app/").context["board"].rows[0].spark
    assert sorted((h.index, h.median_ms, h.failures) for h in spark) == [(20, 50, 0), (23, 200, 1)]
    assert 'aria-label="Last 24 hours: median 200 ms, slowest hour 200 ms, 1 hour with failures"' in (
        owner.get("/app/").content.decode()
    )


def _result(healthcheck, **fields):
    region = Region.objects.get(slug="eu-west")
    now = timezone.now()
    defaults = {"slot": now, "checked_at": now, "recorded_at": now, "status": "up"}
    return ProbeResult.objects.create(healthcheck=healthcheck, region=region, **{**defaults, **fields})


def test_the_healthcheck_page_names_the_mcp_result_fields(owner, org, make_check):
    healthcheck = make_check(org)
    ToolList.objects.create(
        healthcheck=healthcheck,
        digest="d1",
        tools=[
            {"name": "search_docs", "required_inputs": ["q"]},
            {"name": "get_status", "required_inputs": []},
        ],
        first_seen_at=timezone.now(),
    )
    _result(
        healthcheck,
        server_name="docs-server",
        server_version="1.2.3",
        protocol="2025-06-18",
        access="oauth",
        signin_server="https://auth.example.com",
        tool_count=2,
        tool_digest="d1",
        missing_tools=["read_page"],
        dns_ms=5,
        tcp_ms=10,
        tls_ms=20,
        ttfb_ms=65,
        total_ms=140,
    )
    page = owner.get(f"/app/healthchecks/{healthcheck.public_id}/").content.decode()
    for label, value in [
        ("Server", "docs-server 1.2.3"),
        ("Protocol", "2025-06-18"),
        ("Access", "OAuth sign-in"),
        ("Sign-in server", "https://auth.example.com"),
        ("Tools", "search_docs"),
        ("Missing tools", "read_page"),
        ("Request breakdown", "Time to first byte 65.0 ms"),
    ]:
        assert f"<dt>{label}</dt>" in page
        assert value in page


def test_the_healthcheck_page_shows_a_result_s_details_as_labelled_rows(owner, org, make_check):
    healthcheck = make_check(org)
    details = {"certificate": {"days_left": 3, "sans": ["a.example", "<b>.example"]}, "chainValid": True}
    _result(healthcheck, status="degraded", kind="certificate_expiring", details=details)

    page = owner.get(f"/app/healthchecks/{healthcheck.public_id}/").content.decode()

    assert "<dt>Certificate: days left</dt><dd>3</dd>" in page
    assert "<dt>Certificate: sans</dt><dd>a.example, &lt;b&gt;.example</dd>" in page
    assert "<dt>Chain valid</dt><dd>yes</dd>" in page


def test_the_healthcheck_page_lists_each_tool_with_its_description(owner, org, make_check):
    healthcheck = make_check(org)
    tools = [{"name": "search_docs", "required_inputs": ["q"]}]
    ToolList.objects.create(healthcheck=healthcheck, digest="d1", tools=tools, first_seen_at=timezone.now())
    ToolListVersion.objects.create(
        healthcheck=healthcheck,
        digest="v1",
        tools=[{**tools[0], "description": "Search the <docs> by keyword"}],
        tool_count=1,
        first_seen_at=timezone.now(),
        current_since=timezone.now(),
    )
    _result(healthcheck, tool_count=1, tool_digest="d1")

    page = owner.get(f"/app/healthchecks/{healthcheck.public_id}/").content.decode()

    assert "<code>search_docs</code> Search the &lt;docs&gt; by keyword" in page


def test_the_request_breakdown_is_a_bar_in_proportion(owner, org, make_check):
    healthcheck = make_check(org)
    _result(healthcheck, dns_ms=30, tcp_ms=30, tls_ms=None, ttfb_ms=240)
    latest = owner.get(f"/app/healthchecks/{healthcheck.public_id}/").context["page"].latest
    assert [(s.label, s.x, s.width) for s in latest.breakdown] == [
        ("DNS", 0.0, 30.0),
        ("TCP", 30.0, 30.0),
        ("Time to first byte", 60.0, 240.0),
    ]


def test_pause_resume_and_delete(owner, org, make_check):
    healthcheck = make_check(org)
    base = f"/app/healthchecks/{healthcheck.public_id}/"
    owner.post(base + "pause/")
    healthcheck.refresh_from_db()
    assert healthcheck.paused
    owner.post(base + "resume/")
    healthcheck.refresh_from_db()
    assert not healthcheck.paused
    assert "It can't be undone" in owner.get(base + "delete/").content.decode()
    assert Healthcheck.objects.filter(pk=healthcheck.pk).exists()
    assert owner.post(base + "delete/")["Location"] == "/app/"
    assert not Healthcheck.objects.filter(pk=healthcheck.pk).exists()


def test_run_now_of_a_paused_check_says_why_it_did_not_run(owner, org, make_check):
    healthcheck = make_check(org)
    base = f"/app/healthchecks/{healthcheck.public_id}/"
    owner.post(base + "pause/")
    page = owner.post(base + "run/", follow=True).content.decode()
    assert "This healthcheck is paused, so it was not run; resume it first." in page


@pytest.mark.parametrize(
    ("method", "suffix"),
    [
        ("get", ""),
        ("get", "edit/"),
        ("get", "delete/"),
        ("post", "delete/"),
        ("post", "pause/"),
        ("post", "run/"),
        ("post", "edit/"),
    ],
)
def test_another_organization_s_healthcheck_is_404(owner, other_org, make_check, method, suffix):
    theirs = make_check(other_org)
    answer = getattr(owner, method)(
        f"/app/healthchecks/{theirs.public_id}/{suffix}", MCP_FORM if method == "post" else None
    )
    assert answer.status_code == 404
    assert Healthcheck.objects.get(pk=theirs.pk).paused is False


@pytest.mark.parametrize(
    "suffix",
    [
        "healthchecks/new/",
        "healthchecks/{id}/edit/",
        "healthchecks/{id}/pause/",
        "healthchecks/{id}/run/",
        "healthchecks/{id}/delete/",
        "settings/api-keys/",
        "healthchecks/{id}/resume/",
    ],
)
def test_a_viewer_sees_but_every_change_is_403(viewer, org, make_check, suffix):
    healthcheck = make_check(org)
    path = "/app/" + suffix.format(id=healthcheck.public_id)
    assert viewer.get(f"/app/healthchecks/{healthcheck.public_id}/").status_code == 200
    answer = viewer.post(path, {**MCP_FORM, "name": "changed"})
    assert answer.status_code == 403
    assert "Viewers can look but not change anything" in answer.content.decode()
    healthcheck.refresh_from_db()
    assert (healthcheck.name, healthcheck.paused) == ("Docs MCP", False)
    assert Healthcheck.objects.count() == 1


def test_a_viewer_is_offered_no_change(viewer, org, make_check):
    healthcheck = make_check(org)
    page = viewer.get(f"/app/healthchecks/{healthcheck.public_id}/").content.decode()
    for offer in ("Pause", "Run now", "Delete", "Edit"):
        assert f">{offer}" not in page
    assert "New healthcheck" not in viewer.get("/app/").content.decode()


def test_a_member_may_create_healthchecks(make_member, org):
    member = make_member(org, Membership.Role.MEMBER)
    assert member.post("/app/healthchecks/new/", MCP_FORM).status_code == 302


def test_the_chart_span_is_read_from_the_query(owner, org, make_check):
    healthcheck = make_check(org)
    region = Region.objects.get(slug="eu-west")
    healthcheck.rollups.create(
        region=region, period="hour", start=timezone.now() - timedelta(days=3), runs=1, failures=0, p50_ms=80
    )
    day = owner.get(f"/app/healthchecks/{healthcheck.public_id}/").context["page"]
    week = owner.get(f"/app/healthchecks/{healthcheck.public_id}/?span=7d").context["page"]
    assert day.chart_points == {}
    assert [ms for _, ms in week.chart_points["eu-west"]] == [80]


def test_each_region_gets_its_own_response_time_chart(owner, org, make_check):
    healthcheck = make_check(org)
    hour = timezone.now().replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    for slug, median in (("eu-west", 80), ("us-east", 240)):
        healthcheck.rollups.create(
            region=Region.objects.get(slug=slug), period="hour", start=hour, runs=1, failures=0, p50_ms=median
        )

    page = owner.get(f"/app/healthchecks/{healthcheck.public_id}/").content.decode()

    assert f"{healthcheck.name} from eu-west: response time" in page
    assert f"{healthcheck.name} from us-east: response time" in page
    assert "average 240 ms" in page


def _queries_for_dashboard(owner) -> int:
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    # The request clears the query log as it starts (request_started → reset_queries): start it empty.
    reset_queries()
    with CaptureQueriesContext(connection) as captured:
        assert owner.get("/app/").status_code == 200
    return len(captured)


def test_the_dashboard_s_queries_do_not_grow_with_its_rows(owner, org, make_check):
    region = Region.objects.get(slug="eu-west")
    first = make_check(org, name="One")
    first.tag_rows.create(name="docs")
    RegionState.objects.create(
        healthcheck=first, region=region, status="up", last_result_at=timezone.now(), response_ms=5
    )
    one = _queries_for_dashboard(owner)
    assert one > 5  # counted: the session, the membership, the healthchecks and what they show
    for index in range(6):
        check = make_check(org, name=f"More {index}")
        check.tag_rows.create(name=f"t{index}")
        RegionState.objects.create(
            healthcheck=check, region=region, status="up", last_result_at=timezone.now()
        )
    assert _queries_for_dashboard(owner) == one


def test_a_header_given_in_two_rows_is_named_not_silently_dropped(owner, org):
    form = {**MCP_FORM, "header_name_1": "Authorization", "header_value_1": "Bearer other", "name": ""}
    answer = owner.post("/app/healthchecks/new/", form)
    assert answer.status_code == 400
    errors = answer.context["form"].errors
    assert errors["headers"] == ["Authorization: This header is given twice."]
    assert errors["name"] == ["This field may not be blank."]
    assert not Healthcheck.objects.exists()


@override_settings(UPTIMY_ALLOW_PRIVATE_TARGETS=True)
def test_test_now_on_the_edit_form_sends_the_stored_header_value_behind_the_mask(
    owner, org, make_check, no_mcp_server
):
    healthcheck = make_check(org, uri=no_mcp_server.url, headers={"Authorization": "Bearer stored-secret"})
    form = {**MCP_FORM, "uri": no_mcp_server.url, "header_value_0": MASK, "action": "test"}
    answer = owner.post(f"/app/healthchecks/{healthcheck.public_id}/edit/", form)
    assert answer.context["trial"].kind == "no_endpoint"
    assert "Bearer stored-secret" in no_mcp_server.authorizations
    assert "stored-secret" not in answer.content.decode()


def test_the_dashboard_pages_through_many_healthchecks_keeping_the_filters(
    owner, org, make_check, monkeypatch
):
    monkeypatch.setattr("web.selectors.PAGE_SIZE", 2)
    for index in range(5):
        make_check(org, name=f"Check {index}")
    first = owner.get("/app/?search=check")
    assert len(first.context["board"].rows) == 2
    assert 'href="?search=check&amp;page=2">Next</a>' in first.content.decode()
    last = owner.get("/app/?search=check&page=3")
    assert [row.healthcheck.name for row in last.context["board"].rows] == ["Check 0"]


def _incident(healthcheck, **fields):
    from alerts.models import Incident

    defaults = {
        "organization": healthcheck.organization,
        "healthcheck": healthcheck,
        "healthcheck_public_id": healthcheck.public_id,
        "healthcheck_name": healthcheck.name,
        "severity": "critical",
        "opened_at": timezone.now(),
    }
    return Incident.objects.create(**{**defaults, **fields})


def test_the_healthcheck_page_lists_its_incidents_open_and_ended(owner, org, make_check):
    healthcheck, other = make_check(org), make_check(org, name="Other")
    earlier = timezone.now() - timedelta(days=1)
    _incident(
        healthcheck,
        opened_at=earlier,
        resolved_at=earlier + timedelta(minutes=5),
        resolution="recovered",
        cause_summary="Down in 2 of 3 regions",
    )
    _incident(healthcheck, cause_kind="missing_tools", cause_summary="Required tools missing: get_status")
    _incident(other, cause_summary="Not this one")
    page = owner.get(f"/app/healthchecks/{healthcheck.public_id}/").content.decode()
    section = page[page.index("<h2>Incidents</h2>") :]
    assert "Down in 2 of 3 regions" in section
    assert "(recovered)" in section
    assert "Required tools missing: get_status" in section
    assert "<strong>Open</strong>" in section
    assert "Not this one" not in page


def test_the_healthcheck_page_shows_the_tool_list_s_history(owner, org, make_check):
    from monitors.models import ToolChange

    healthcheck = make_check(org)
    ToolChange.objects.create(
        healthcheck=healthcheck,
        at=timezone.now(),
        region=Region.objects.get(slug="eu-west"),
        previous_digest="a",
        digest="b",
        removed=["search_docs"],
        removed_count=3,
        new_required_inputs={"get_status": ["service", "zone"]},
        new_required_inputs_count=1,
    )
    page = owner.get(f"/app/healthchecks/{healthcheck.public_id}/").content.decode()
    assert "Removed: <code>search_docs</code> and 2 more" in page
    assert "Gained required inputs: <code>get_status</code> (service, zone)" in page


def test_the_healthcheck_page_shows_its_certificate_changes(owner, org, make_check):
    from monitors.models import CertificateChange

    healthcheck = make_check(org)
    CertificateChange.objects.create(
        healthcheck=healthcheck,
        at=timezone.now(),
        region=Region.objects.get(slug="eu-west"),
        previous_serial="0a1b",
        serial="3c4d",
        previous_issuer="CN=Old CA",
        issuer="CN=New <CA>",
        not_after=datetime(2027, 3, 1, 12, 0, tzinfo=UTC),
    )
    page = owner.get(f"/app/healthchecks/{healthcheck.public_id}/").content.decode()
    section = page[page.index("<h2>Certificate changes</h2>") :]
    assert "serial <code>0a1b</code><br>CN=Old CA" in section
    assert "serial <code>3c4d</code><br>CN=New &lt;CA&gt;<br>until 2027-03-01 12:00" in section


def test_a_healthcheck_without_certificate_changes_shows_no_such_card(owner, org, make_check):
    page = owner.get(f"/app/healthchecks/{make_check(org).public_id}/").content.decode()
    assert "Certificate changes" not in page


def test_a_healthcheck_without_incidents_or_tool_changes_says_so(owner, org, make_check):
    page = owner.get(f"/app/healthchecks/{make_check(org).public_id}/").content.decode()
    assert "No incident yet." in page
    assert "No tool was removed or gained a required input." in page


@pytest.mark.parametrize(
    ("kind", "shown"),
    [
        ("blocked_address", "—"),
        ("dns", "—"),
        ("connect", "—"),
        ("config", "—"),
        ("timeout", "0 ms"),
        ("http_status", "0 ms"),
        ("", "0 ms"),
    ],
)
def test_a_run_that_never_connected_shows_no_response_time(owner, org, make_check, kind, shown):
    healthcheck = make_check(org)
    RegionState.objects.create(
        healthcheck=healthcheck,
        region=Region.objects.get(slug="eu-west"),
        status="down" if kind else "up",
        last_result_at=timezone.now(),
        response_ms=0.0,
        kind=kind,
    )
    _result(healthcheck, status="down" if kind else "up", kind=kind, dns_ms=0.0, total_ms=0.0)
    page = owner.get(f"/app/healthchecks/{healthcheck.public_id}/").content.decode()
    assert f"<td>{shown}</td>" in page
    assert ("Total 0.0 ms" in page) == (shown != "—")
    assert owner.get("/app/").context["board"].rows[0].last_ms == (None if shown == "—" else 0.0)


def _queries_for(owner, path: str) -> int:
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    reset_queries()
    with CaptureQueriesContext(connection) as captured:
        assert owner.get(path).status_code == 200
    return len(captured)


def test_the_healthcheck_page_s_queries_do_not_grow_with_its_history(owner, org, make_check):
    from monitors.models import ToolChange

    healthcheck = make_check(org)
    path = f"/app/healthchecks/{healthcheck.public_id}/"
    region = Region.objects.get(slug="eu-west")
    before = _queries_for(owner, path)
    for index in range(5):
        _incident(
            healthcheck, opened_at=timezone.now() - timedelta(hours=index + 1), resolved_at=timezone.now()
        )
        ToolChange.objects.create(
            healthcheck=healthcheck, at=timezone.now(), region=region, previous_digest="a", digest=f"b{index}"
        )
    assert _queries_for(owner, path) == before


def _channel(organization, name: str):
    from alerts.services import channel_add

    return channel_add(
        organization=organization, name=name, kind="email", config={"recipients": ["ops@example.com"]}
    ).channel


def _policy(healthcheck):
    from alerts.models import AlertPolicy

    return AlertPolicy.objects.filter(healthcheck=healthcheck).first()


def test_alert_channels_chosen_on_create_become_the_check_s_own_policy(owner, org):
    ops, oncall = _channel(org, "Ops"), _channel(org, "On-call")
    _channel(org, "Unused")
    answer = owner.post(
        "/app/healthchecks/new/", {**MCP_FORM, "channels": [str(ops.public_id), str(oncall.public_id)]}
    )
    assert answer.status_code == 302
    policy = _policy(Healthcheck.objects.get(organization=org))
    assert sorted(c.name for c in policy.channels.all()) == ["On-call", "Ops"]


def test_no_channel_chosen_follows_the_organization_s_default(owner, org, make_check):
    from alerts.services import alert_policy_set

    healthcheck = make_check(org)
    ops = _channel(org, "Ops")
    alert_policy_set(organization=org, healthcheck=healthcheck, channels=[ops])
    edit = f"/app/healthchecks/{healthcheck.public_id}/edit/"
    assert owner.get(edit).context["form"].channels == [str(ops.public_id)]
    form = dict(MCP_FORM)
    assert owner.post(edit, form).status_code == 302
    assert _policy(healthcheck) is None


def test_changing_channels_keeps_the_policy_s_other_settings(owner, org, make_check):
    from alerts.services import alert_policy_set

    healthcheck = make_check(org)
    ops, oncall = _channel(org, "Ops"), _channel(org, "On-call")
    alert_policy_set(
        organization=org,
        healthcheck=healthcheck,
        channels=[ops],
        reminder_minutes=30,
        notify_on_degraded=False,
    )
    form = {**MCP_FORM, "channels": [str(oncall.public_id)]}
    assert owner.post(f"/app/healthchecks/{healthcheck.public_id}/edit/", form).status_code == 302
    policy = _policy(healthcheck)
    assert [c.name for c in policy.channels.all()] == ["On-call"]
    assert (policy.reminder_minutes, policy.notify_on_degraded) == (30, False)


@pytest.mark.parametrize("chosen", ["other", "not-a-uuid"])
def test_a_channel_not_of_the_organization_is_named_and_nothing_is_saved(owner, org, other_org, chosen):
    value = str(_channel(other_org, "Theirs").public_id) if chosen == "other" else chosen
    answer = owner.post("/app/healthchecks/new/", {**MCP_FORM, "channels": [value]})
    assert answer.status_code == 400
    assert answer.context["form"].errors["channels"] == [f"Channel {value} not found."]
    assert not Healthcheck.objects.filter(organization=org).exists()
