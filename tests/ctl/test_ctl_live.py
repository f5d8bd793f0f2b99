"""uptimyctl end to end against a live Uptimy (pytest-django's live_server) with a real API key:
apply, apply again = no changes, export round-trip, prune, bad files, partial failures."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.utils import timezone

from monitors.models import Healthcheck, HealthcheckListing
from monitors.secrets import decrypt_headers
from monitors.services import api_key_create
from tests.ctl.product_text import PRODUCT_TEXT_FILE
from uptimy.ctl.cli import main
from uptimy.ctl.client import Api

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

SECRET = "upt-test-secret-value-4711"
MONITORS = (
    PRODUCT_TEXT_FILE
    + """\
  - name: Homepage
    type: http
    target: https://example.com/
    interval: 5m
    regions: [eu-west, us-east]
    tags: [web]
"""
)

# Docs MCP with its own listing (lines 5–9), the rest as MONITORS.
DOCS_MCP_ENTRY = "    target: https://mcp.example.com/mcp\n  - name: Docs MCP tools\n"
LISTING = """\
    listing:
      namespace: com.example/docs
      website_url: https://example.com/
      pricing_url: https://example.com/pricing
      quote: "Free tier: 1,000 calls a month"
"""
LISTED = MONITORS.replace(DOCS_MCP_ENTRY, DOCS_MCP_ENTRY.replace("  - name", LISTING + "  - name"), 1)


@pytest.fixture
def uptimy(live_server, org, monkeypatch, tmp_path):
    """Point uptimyctl at the live server with a read-write key of ``org``; no login file, not CI."""
    _, raw_key = api_key_create(organization=org)
    monkeypatch.setenv("UPTIMY_API_URL", live_server.url)
    monkeypatch.setenv("UPTIMY_API_KEY", raw_key)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("DOCS_MCP_KEY", SECRET)
    monkeypatch.delenv("CI", raising=False)
    return org


@pytest.fixture
def ctl(uptimy, capsys, tmp_path):
    """Run uptimyctl in process; return (exit code, stdout, stderr). ``file=`` text is written to monitors.yaml."""

    def run(*argv: str, file: str | None = None) -> tuple[int, str, str]:
        if file is not None:
            (tmp_path / "monitors.yaml").write_text(file)
        capsys.readouterr()
        code = main([arg.replace("FILE", str(tmp_path / "monitors.yaml")) for arg in argv])
        out, err = capsys.readouterr()
        assert SECRET not in out + err
        return code, out, err

    return run


def names(org) -> list[str]:
    return sorted(Healthcheck.objects.filter(organization=org).values_list("name", flat=True))


def test_apply_creates_the_monitors_of_the_file(ctl, uptimy):
    code, out, _ = ctl("apply", "-f", "FILE", file=MONITORS)

    assert code == 0
    assert "3 to create" in out
    assert "Applied: 3 created, 0 updated, 0 deleted." in out
    assert names(uptimy) == ["Docs MCP", "Docs MCP tools", "Homepage"]
    tools = Healthcheck.objects.get(name="Docs MCP tools")
    assert decrypt_headers(tools.secret_headers) == {"Authorization": f"Bearer {SECRET}"}
    assert tools.config["minTools"] == 2


def test_a_second_apply_changes_nothing_and_says_so(ctl):
    ctl("apply", "-f", "FILE", file=MONITORS)

    code, out, _ = ctl("apply", "-f", "FILE")

    assert code == 0
    assert out.startswith("No changes: 3 monitors match")


def test_a_dry_run_with_detailed_exitcode_exits_3_and_changes_nothing(ctl, uptimy):
    code, out, _ = ctl("apply", "-f", "FILE", "--dry-run", "--detailed-exitcode", file=MONITORS)

    assert code == 3
    assert "+ create Docs MCP tools (mcp https://mcp.example.com/mcp)" in out
    assert "headers: Authorization: ********" in out
    assert names(uptimy) == []


def test_a_dry_run_of_an_applied_file_exits_0(ctl):
    ctl("apply", "-f", "FILE", file=MONITORS)

    assert ctl("apply", "-f", "FILE", "--dry-run", "--detailed-exitcode")[0] == 0


def test_an_update_is_planned_field_by_field_with_header_values_masked(ctl):
    ctl("apply", "-f", "FILE", file=MONITORS)
    changed = MONITORS.replace("minTools: 2", "minTools: 1").replace("Authorization:", "X-Api-Key:")

    code, out, _ = ctl("diff", "-f", "FILE", "--detailed-exitcode", file=changed)

    assert code == 3
    assert "~ update Docs MCP tools" in out
    assert "config.minTools: 2 → 1" in out
    assert "config.headers.X-Api-Key: (none) → ********" in out
    assert "config.headers.Authorization: ******** → (none)" in out


def test_an_applied_update_sends_the_changed_fields(ctl):
    ctl("apply", "-f", "FILE", file=MONITORS)

    code, out, _ = ctl("apply", "-f", "FILE", file=MONITORS.replace("interval: 5m", "interval: 10m"))

    assert code == 0
    assert "interval: 300 → 600" in out
    assert Healthcheck.objects.get(name="Homepage").interval_seconds == 600
    # The header's stored value was not touched by an update that didn't send the config.
    tools = Healthcheck.objects.get(name="Docs MCP tools")
    assert decrypt_headers(tools.secret_headers) == {"Authorization": f"Bearer {SECRET}"}


def test_export_round_trips_through_apply_with_no_changes(ctl, monkeypatch, tmp_path):
    ctl("apply", "-f", "FILE", file=LISTED)

    code, exported, _ = ctl("export")
    monkeypatch.delenv("DOCS_MCP_KEY")
    again = ctl("apply", "-f", "FILE", file=exported)

    assert code == 0
    assert "Authorization: ${DOCS_MCP_TOOLS_AUTHORIZATION}" in exported
    assert "    listing:\n      namespace: com.example/docs\n" in exported
    assert exported.count("listing:") == 1  # the monitors without one have none written
    assert again[0] == 0
    assert again[1].startswith("No changes: 3 monitors match"), again


# One monitor of each type, as a customer writes it: `target` for the types with a URL, `config:` for the rest.
EVERY_TYPE = {
    "http": (
        "    target: https://example.com/health\n"
        "    config:\n"
        "      assertions:\n"
        "        - {type: json, path: $.status, op: equals, value: ok}\n",
        {"uri": "https://example.com/health"},
    ),
    "tls": ("    config: {host: example.com, warnDays: 20}\n", {"host": "example.com", "warnDays": 20}),
    "tcp": (
        "    config: {host: example.com, port: 22, expect: '^SSH-2'}\n",
        {"host": "example.com", "port": 22, "expect": "^SSH-2"},
    ),
    "dns": (
        "    config: {name: example.com, recordType: MX}\n",
        {"name": "example.com", "recordType": "MX"},
    ),
    "ping": ("    config: {host: example.com, count: 3}\n", {"host": "example.com", "count": 3}),
    "domain": ("    interval: 1h\n    config: {domain: example.com}\n", {"domain": "example.com"}),
    "heartbeat": (
        "    config:\n      schedule: {cron: '0 3 * * *', tz: Europe/Paris}\n      grace: 300\n",
        {"schedule": {"cron": "0 3 * * *", "tz": "Europe/Paris"}, "grace": 300},
    ),
    "mcp": ("    target: https://mcp.example.com/mcp\n", {"uri": "https://mcp.example.com/mcp"}),
}


@pytest.mark.parametrize("type_name", sorted(EVERY_TYPE))
def test_every_type_is_created_by_apply_and_round_trips_through_export(ctl, uptimy, type_name):
    lines, config = EVERY_TYPE[type_name]
    file = f"monitors:\n  - name: Watched\n    type: {type_name}\n{lines}"

    created = ctl("apply", "-f", "FILE", file=file)
    code, exported, _ = ctl("export")
    again = ctl("apply", "-f", "FILE", file=exported)

    assert created[0] == 0, created
    assert "Applied: 1 created, 0 updated, 0 deleted." in created[1]
    healthcheck = Healthcheck.objects.get(organization=uptimy)
    assert healthcheck.check_type.name == type_name
    assert config.items() <= healthcheck.config.items()
    assert code == 0
    assert f"type: {type_name}" in exported
    assert again[0] == 0
    assert again[1].startswith("No changes: 1 monitor"), again


@pytest.fixture
def requests_made(monkeypatch):
    """Record the (method, path) of every request uptimyctl makes; each is still made."""
    made: list[tuple[str, str]] = []
    real = Api.request

    def recorded(self, method, path, **kwargs):
        made.append((method, path.split("?")[0]))
        return real(self, method, path, **kwargs)

    monkeypatch.setattr(Api, "request", recorded)
    return made


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        (("export",), "      namespace: com.example/docs\n"),
        (("diff", "-f", "FILE"), "No changes: 3 monitors match"),
    ],
)
def test_listings_are_read_from_the_healthcheck_list_not_a_request_per_monitor(
    ctl, requests_made, command, shown
):
    ctl("apply", "-f", "FILE", file=LISTED)
    requests_made.clear()

    code, out, _ = ctl(*command)

    assert code == 0
    assert shown in out
    assert not [path for _, path in requests_made if path.endswith("/listing/")]
    assert requests_made.count(("GET", "/api/v1/healthchecks/")) == 1


def test_a_listing_is_set_after_its_monitor_is_created_and_changed_field_by_field(ctl):
    created = ctl("apply", "-f", "FILE", file=LISTED)
    planned = ctl("diff", "-f", "FILE", file=LISTED.replace("com.example/docs", "com.example/docs-mcp"))

    listing = HealthcheckListing.objects.get(healthcheck__name="Docs MCP")
    assert created[0] == 0
    assert (
        '      listing: {"namespace": "com.example/docs", "website_url": "https://example.com/"' in created[1]
    )
    assert "set the listing of Docs MCP (" in created[1]
    assert (listing.namespace, listing.quote) == ("com.example/docs", "Free tier: 1,000 calls a month")
    assert "~ update Docs MCP\n" in planned[1]
    assert 'listing.namespace: "com.example/docs" → "com.example/docs-mcp"' in planned[1]


def test_a_listing_the_file_leaves_out_is_left_as_it_is(ctl):
    ctl("apply", "-f", "FILE", file=LISTED)

    code, out, _ = ctl("apply", "-f", "FILE", file=LISTED.replace(LISTING, ""))

    assert code == 0
    assert out.startswith("No changes: 3 monitors match")
    assert HealthcheckListing.objects.filter(healthcheck__name="Docs MCP").exists()


def test_a_null_listing_is_removed(ctl):
    ctl("apply", "-f", "FILE", file=LISTED)

    code, out, _ = ctl("apply", "-f", "FILE", file=LISTED.replace(LISTING, "    listing: null\n"))

    assert code == 0
    assert '      listing: {"namespace": "com.example/docs", ' in out
    assert "} → null\n" in out
    assert "removed the listing of Docs MCP (" in out
    assert "Applied: 0 created, 1 updated, 0 deleted." in out
    assert not HealthcheckListing.objects.exists()


def test_a_refused_listing_names_the_monitor_and_the_field_at_its_line(ctl, uptimy, tmp_path):
    """The namespace's rule is the server's alone: its 400 is shown at the key's line; the monitor stays created."""
    refused = LISTED.replace("namespace: com.example/docs", "namespace: docs")

    code, out, err = ctl("apply", "-f", "FILE", file=refused)

    assert code == 1
    assert "failed to set the listing of Docs MCP:" in err
    assert (
        f"{tmp_path / 'monitors.yaml'}:6:7: monitors[0].listing.namespace: Must be a reverse-DNS namespace"
        in err
    )
    assert "Applied: 3 created, 0 updated, 0 deleted; failed: set the listing of Docs MCP." in out
    assert names(uptimy) == ["Docs MCP", "Docs MCP tools", "Homepage"]
    assert not HealthcheckListing.objects.exists()


def test_an_exported_header_reference_set_in_the_environment_sends_the_new_value(ctl, monkeypatch):
    ctl("apply", "-f", "FILE", file=MONITORS)
    _, exported, _ = ctl("export")
    monkeypatch.setenv("DOCS_MCP_TOOLS_AUTHORIZATION", "Bearer rotated")

    code, out, _ = ctl("apply", "-f", "FILE", "--send-headers", file=exported)

    assert code == 0
    assert "config.headers.Authorization: ******** → ******** (sent again)" in out
    tools = Healthcheck.objects.get(name="Docs MCP tools")
    assert decrypt_headers(tools.secret_headers) == {"Authorization": "Bearer rotated"}


def test_prune_lists_what_it_deletes_before_deleting_it(ctl, uptimy):
    ctl("apply", "-f", "FILE", file=MONITORS)
    shorter = MONITORS.split("  - name: Homepage")[0]

    kept = ctl("apply", "-f", "FILE", file=shorter)
    code, out, _ = ctl("apply", "-f", "FILE", "--prune")

    assert "Not in" in kept[1]
    assert "Homepage" in kept[1]
    assert names(uptimy) == ["Docs MCP", "Docs MCP tools"]
    assert code == 0
    plan_line, deleted_line = out.index("- delete Homepage"), out.index("deleted Homepage")
    assert plan_line < deleted_line
    assert "Applied: 0 created, 0 updated, 1 deleted." in out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("monitors:\n  - name: A\n\ttype: mcp\n", "FILE:3:1: a tab character"),
        (
            "monitors:\n  - name: A\n    type: mcp\n    target: https://a.example/\n"
            "  - name: A\n    type: mcp\n    target: https://b.example/\n",
            "FILE:5:5: monitors[1].name: duplicated name 'A'",
        ),
        (
            "monitors:\n  - name: A\n    type: ftp\n    target: https://a.example/\n",
            "FILE:3:5: monitors[0].type",
        ),
        (
            MONITORS.replace("minTools: 2", "minTools: -1"),
            "FILE:10:7: monitors[1].config.minTools: must be a whole number of at least 0",
        ),
    ],
)
def test_a_bad_file_is_refused_and_nothing_is_sent(ctl, uptimy, tmp_path, text, expected):
    code, _, err = ctl("apply", "-f", "FILE", file=text)

    assert code == 1
    assert expected.replace("FILE", str(tmp_path / "monitors.yaml")) in err
    assert "nothing was sent" in err
    assert names(uptimy) == []


@pytest.mark.parametrize("name", ["accessToken", "sessionToken", "api_key"])
def test_a_key_pasted_in_a_target_is_refused_at_its_line_by_the_uptimyctl_command(uptimy, tmp_path, name):
    spec = tmp_path / "monitors.yaml"
    spec.write_text(f"monitors:\n  - name: A\n    type: mcp\n    target: https://a.example/mcp?{name}=sk-9\n")

    done = subprocess.run(
        [str(Path(sys.executable).with_name("uptimyctl")), "apply", "-f", str(spec)],
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{spec}:4:5: monitors[0].target: it carries a key (the query parameter {name})" in done.stderr
    assert "nothing was sent" in done.stderr
    assert names(uptimy) == []


def test_a_plan_without_a_secret_warns_and_apply_refuses_sending_nothing(ctl, uptimy, monkeypatch, tmp_path):
    monkeypatch.delenv("DOCS_MCP_KEY")

    planned = ctl("diff", "-f", "FILE", "--detailed-exitcode", file=MONITORS)
    applied = ctl("apply", "-f", "FILE")

    where = f"{tmp_path / 'monitors.yaml'}:12:9: monitors[1].config.headers.Authorization"
    assert planned[0] == 3
    assert f"warning: {where}: the environment variable DOCS_MCP_KEY is not set" in planned[2]
    assert applied[0] == 1
    assert f"{where}: the environment variable DOCS_MCP_KEY is not set" in applied[2]
    assert names(uptimy) == []


def test_a_literal_header_is_a_warning_and_in_ci_mode_an_error(ctl, uptimy, monkeypatch):
    literal = MONITORS.replace("Bearer ${DOCS_MCP_KEY}", "Bearer pasted-key")

    refused = ctl("apply", "-f", "FILE", "--ci", file=literal)
    monkeypatch.setenv("CI", "true")
    refused_by_env = ctl("apply", "-f", "FILE")
    monkeypatch.delenv("CI")
    warned = ctl("apply", "-f", "FILE")

    assert refused[0] == refused_by_env[0] == 1
    assert "refused in CI mode" in refused[2]
    assert warned[0] == 0
    assert "warning:" in warned[2]
    assert "a literal header value" in warned[2]
    assert "pasted-key" not in refused[2] + warned[1] + warned[2]


def test_the_apis_limits_and_the_plans_are_checked_before_anything_is_sent(ctl, uptimy, tmp_path):
    over = MONITORS.replace("interval: 5m", "interval: 10s\n    recheck_count: 9").replace(
        "regions: [eu-west, us-east]", "regions: [eu-west, atlantis]"
    )

    code, _, err = ctl("apply", "-f", "FILE", file=over)

    path = tmp_path / "monitors.yaml"
    assert code == 1
    assert f"{path}:16:5: monitors[2].interval: must be ≥ 30 seconds on the Paid plan" in err
    assert f"{path}:17:5: monitors[2].recheck_count: must be ≤ 5" in err
    assert f"{path}:18:5: monitors[2].regions: the Paid plan doesn't allow atlantis" in err
    assert names(uptimy) == []


def test_a_partial_failure_reports_what_was_and_was_not_applied(ctl, uptimy, tmp_path):
    """Repeated tags pass every published limit; the API's 400 is shown at the field's line."""
    failing = MONITORS.replace("tags: [web]", "tags: [web, web]")

    code, out, err = ctl("apply", "-f", "FILE", file=failing)

    assert code == 1
    assert "created Docs MCP (" in out
    assert "Applied: 2 created, 0 updated, 0 deleted; failed: create Homepage." in out
    assert f"{tmp_path / 'monitors.yaml'}:18:5: monitors[2].tags: Tags must be unique." in err
    assert names(uptimy) == ["Docs MCP", "Docs MCP tools"]


def test_an_api_gone_midway_stops_the_apply_and_lists_what_was_not_applied(ctl, uptimy, monkeypatch):
    """The key is revoked after the plan is made: the first write is refused, and nothing more is tried."""
    from uptimy.ctl import client

    create = client.Api.create

    def revoke_then_create(self, body):
        uptimy.api_keys.update(revoked_at=timezone.now())
        return create(self, body)

    monkeypatch.setattr(client.Api, "create", revoke_then_create)

    code, out, err = ctl("apply", "-f", "FILE", file=MONITORS)

    assert code == 1
    assert "failed to create Docs MCP:" in err
    assert "401" in err
    assert "failed: create Docs MCP; not applied: Docs MCP tools, Homepage." in out
    assert names(uptimy) == []


def test_apply_output_json_is_for_scripts(ctl):
    code, out, _ = ctl("apply", "-f", "FILE", "--output", "json", file=MONITORS)

    report = json.loads(out)
    assert code == 0
    assert report["changes"] is True
    assert [c["name"] for c in report["plan"]["create"]] == ["Docs MCP", "Docs MCP tools", "Homepage"]
    assert report["plan"]["create"][1]["fields"]["config"]["headers"] == {"Authorization": "********"}
    assert report["applied"]["created"] == ["Docs MCP", "Docs MCP tools", "Homepage"]
    assert report["failed"] == []


def test_get_monitors_in_each_format(ctl):
    ctl("apply", "-f", "FILE", file=MONITORS)

    table = ctl("get", "monitors")[1]
    as_json = json.loads(ctl("get", "monitors", "-o", "json")[1])
    as_yaml = ctl("get", "monitors", "-o", "yaml")[1]

    assert table.splitlines()[0].split() == ["NAME", "TYPE", "STATUS", "INTERVAL", "REGIONS", "TARGET"]
    assert "Homepage" in table
    assert "eu-west,us-east" in table
    assert [hc["name"] for hc in as_json] == ["Docs MCP", "Docs MCP tools", "Homepage"]
    assert "- name: Homepage" in as_yaml


def test_status_is_one_line_per_monitor(ctl):
    ctl("apply", "-f", "FILE", file=MONITORS)

    lines = ctl("status")[1].splitlines()

    assert len(lines) == 3
    assert lines[0].split()[1:3] == ["Docs", "MCP"]


def test_delete_by_name(ctl, uptimy):
    ctl("apply", "-f", "FILE", file=MONITORS)

    code, out, _ = ctl("delete", "Homepage")
    missing = ctl("delete", "Homepage")

    assert code == 0
    assert out.startswith("Deleted Homepage (")
    assert names(uptimy) == ["Docs MCP", "Docs MCP tools"]
    assert missing[0] == 1
    assert "no monitor is named 'Homepage'" in missing[2]


def test_login_saves_the_key_for_later_commands_readable_by_its_owner_alone(
    ctl, uptimy, monkeypatch, tmp_path
):
    key = os.environ["UPTIMY_API_KEY"]
    monkeypatch.delenv("UPTIMY_API_KEY")
    monkeypatch.setattr(sys, "stdin", _Stdin(key + "\n"))

    code, out, _ = ctl("login")
    saved = tmp_path / "config" / "uptimy" / "ctl.json"
    later = ctl("apply", "-f", "FILE", file=MONITORS)

    assert code == 0
    assert "as organization acme" in out
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert json.loads(saved.read_text())["api_key"] == key
    assert later[0] == 0


def test_no_key_is_a_usage_error(ctl, monkeypatch):
    monkeypatch.delenv("UPTIMY_API_KEY")

    code, _, err = ctl("status")

    assert code == 2
    assert "no API key: set UPTIMY_API_KEY, or run `uptimyctl login`" in err


def test_a_bad_command_line_exits_2(ctl):
    assert ctl("apply")[0] == 2


def test_a_revoked_key_fails_with_the_apis_sentence(ctl, monkeypatch):
    monkeypatch.setenv("UPTIMY_API_KEY", "upt_not-a-key")

    code, _, err = ctl("status")

    assert code == 1
    assert "401 Unknown or revoked API key." in err


def test_the_installed_entry_point_runs(uptimy, tmp_path):
    """The console script pip installs (pyproject's [project.scripts]) runs a diff against the live server."""
    script = Path(sys.executable).parent / "uptimyctl"
    (tmp_path / "monitors.yaml").write_text(MONITORS)

    version = subprocess.run([script, "version"], capture_output=True, text=True, timeout=60, check=False)
    diff = subprocess.run(
        [script, "diff", "-f", tmp_path / "monitors.yaml", "--detailed-exitcode"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=dict(os.environ),
    )

    assert version.returncode == 0
    assert version.stdout.startswith("uptimyctl 1.11.0 ")
    assert diff.returncode == 3, diff.stderr
    assert "3 to create" in diff.stdout


class _Stdin:
    """Stand in for a pipe on standard input: one line, not a terminal."""

    def __init__(self, text: str) -> None:
        self._text = text

    def isatty(self) -> bool:
        return False

    def readline(self) -> str:
        text, self._text = self._text, ""
        return text


FAST_MCP = Path(__file__).resolve().parents[1] / "peers" / "servers" / "fast_mcp.py"


@pytest.fixture
def mcp_url(settings):
    """Serve a small MCP server (8 tools, tool_0…tool_7) on loopback; the one-off check reaches it."""
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    process = subprocess.Popen([sys.executable, str(FAST_MCP)], stdout=subprocess.PIPE)
    assert process.stdout is not None
    url = process.stdout.readline().decode().strip()
    yield url
    process.kill()
    process.wait(timeout=30)


def test_check_runs_a_one_off_mcp_check_and_leaves_nothing(ctl, uptimy, mcp_url):
    code, out, _ = ctl("check", mcp_url, "--required-tools", "tool_0,tool_7")

    assert code == 0
    assert out.split()[0] == "up"
    assert "8 tools" in out
    assert names(uptimy) == []


def test_check_answers_json_with_the_result_fields(ctl, mcp_url):
    code, out, _ = ctl("check", mcp_url, "-o", "json")

    result = json.loads(out)
    assert code == 0
    assert (result["status"], result["access"], result["tool_count"]) == ("up", "open", 8)
    assert [tool["name"] for tool in result["tools"]] == [f"tool_{n}" for n in range(8)]


def test_check_of_a_missing_tool_exits_1_naming_it(ctl, mcp_url):
    code, out, _ = ctl("check", mcp_url, "--required-tools", "search_docs")

    assert code == 1
    assert "search_docs" in out


OTHER_TYPES = """\
monitors:
  - name: Mail port
    type: tcp
    config: {host: mail.example.com, port: 25}
  - name: Mail records
    type: dns
    config: {name: example.com, recordType: MX}
  - name: Nightly
    type: heartbeat
    config: {schedule: {period: 3600}}
"""


def test_plan_get_and_status_show_each_types_target(ctl):
    plan = ctl("apply", "-f", "FILE", file=OTHER_TYPES)[1]

    table = ctl("get", "monitors")[1].splitlines()
    status = ctl("status")[1].splitlines()

    assert "  + create Mail port (tcp mail.example.com:25)" in plan.splitlines()
    assert "  + create Nightly (heartbeat)" in plan.splitlines()
    assert table[1].rstrip().endswith("mail.example.com:25")
    assert table[2].rstrip().endswith("example.com MX")
    assert status == [
        "pending     Mail port  (tcp mail.example.com:25)",
        "pending     Mail records  (dns example.com MX)",
        "pending     Nightly  (heartbeat)",
    ]
