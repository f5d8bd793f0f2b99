"""The uptimyctl command: parse the command line, call the API, say what happened.

Exit codes: 0 done (or nothing to do), 1 failed (a bad file, a refusal, a partial apply),
2 usage (a bad command line, no API key), 3 the plan has changes (``--dry-run`` or ``diff``
with ``--detailed-exitcode``, for CI).
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

from probes.checks import check_kind
from probes.config import ConfigError
from uptimy.ctl import CTL_VERSION, credentials, export
from uptimy.ctl import fields as F
from uptimy.ctl.client import Api, ApiError, Unreachable
from uptimy.ctl.limits import Limits
from uptimy.ctl.plan import (
    Change,
    Create,
    Delete,
    ListingAction,
    Plan,
    PlanRefused,
    Update,
    make_plan,
)
from uptimy.ctl.spec import MASK, Monitor, Problem, Spec, SpecInvalid, load

OK, FAILED, USAGE, CHANGES = 0, 1, 2, 3
CI_VARIABLES = ("CI",)  # set by GitHub Actions, GitLab CI, CircleCI, Buildkite, …
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


class Usage(Exception):
    """A command line or setup the command can't run with (exit 2)."""


class Failed(Exception):
    """A failure already worth one line (exit 1)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run uptimyctl with ``argv`` (default the process's); return the exit code."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help exits 0, a usage error 2
        return int(exc.code or 0)
    env = os.environ
    try:
        return int(args.run(args, env))
    except Usage as exc:
        print(f"uptimyctl: {exc}", file=sys.stderr)
        return USAGE
    except (Failed, Unreachable) as exc:
        print(f"uptimyctl: {exc}", file=sys.stderr)
        return FAILED
    except ApiError as exc:
        print(f"uptimyctl: {exc}", file=sys.stderr)
        return FAILED


def run() -> None:
    """Run the installed console script."""
    sys.exit(main())


# --- commands -----------------------------------------------------------------------------------


def cmd_version(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    try:
        package = metadata.version("uptimy")
    except metadata.PackageNotFoundError:
        package = "not installed"
    print(f"uptimyctl {CTL_VERSION} (uptimy package {package}, API v1)")
    return OK


def cmd_login(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    api_url = args.api_url or env.get(credentials.URL_VARIABLE) or credentials.DEFAULT_API_URL
    # Never from the command line: it would stay in the shell's history and show in `ps`.
    key = getpass.getpass("API key (upt_…): ") if sys.stdin.isatty() else sys.stdin.readline()
    key = key.strip()
    if not key:
        raise Usage("no API key given on standard input")
    with Api(api_url, key) as api:
        organization = api.organization()
    path = credentials.write(env, api_url=api_url, key=key)
    print(f"Logged in to {api_url} as organization {organization['slug']}; saved to {path} (mode 0600).")
    return OK


def cmd_apply(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    return _plan_and_apply(args, env, apply=not args.dry_run)


def cmd_diff(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    return _plan_and_apply(args, env, apply=False)


def cmd_get(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    api, _ = _api(env)
    with api:
        healthchecks = sorted(api.healthchecks(), key=lambda hc: hc["name"])
    if args.output == "json":
        print(json.dumps(healthchecks, indent=2, ensure_ascii=False))
    elif args.output == "yaml":
        print(export.to_yaml({"monitors": export.entries(healthchecks)}), end="")
    else:
        rows = [
            (
                hc["name"],
                hc["type_name"],
                hc["status"],
                f"{hc['interval']}s",
                ",".join(hc["regions"]),
                _target(hc),
            )
            for hc in healthchecks
        ]
        _table(("NAME", "TYPE", "STATUS", "INTERVAL", "REGIONS", "TARGET"), rows)
    return OK


def _target(healthcheck: Mapping[str, Any]) -> str:
    """Return what a healthcheck watches as the API answers it (a server before `target`: its config's uri)."""
    target = healthcheck.get("target")
    return str(target) if target is not None else str(healthcheck["config"].get("uri", ""))


def cmd_export(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    api, _ = _api(env)
    with api:
        healthchecks = api.healthchecks()
    print(export.dump(healthchecks, source=api.base_url), end="")
    return OK


def cmd_status(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    api, _ = _api(env)
    with api:
        healthchecks = sorted(api.healthchecks(), key=lambda hc: hc["name"])
    for hc in healthchecks:
        cause = hc.get("cause") or {}
        target = _target(hc)
        line = f"{hc['status']:<11} {hc['name']}  ({hc['type_name']}{' ' * bool(target)}{target})"
        if cause.get("reason"):
            line += f"  {cause['reason']}"
        if hc.get("in_maintenance"):
            line += "  [in maintenance]"
        print(line)
    if not healthchecks:
        print("No monitors.")
    return OK


def cmd_delete(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    api, _ = _api(env)
    with api:
        same = [hc for hc in api.healthchecks() if hc["name"] == args.name]
        if not same:
            raise Failed(f"no monitor is named {args.name!r}")
        if len(same) > 1:
            ids = ", ".join(str(hc["id"]) for hc in same)
            raise Failed(f"{len(same)} monitors are named {args.name!r} ({ids}); delete by id with the API")
        api.delete(str(same[0]["id"]))
    print(f"Deleted {args.name} ({same[0]['id']}).")
    return OK


def cmd_check(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """Check an MCP URL once through the API's one-off check (POST /api/v1/checks/run/): nothing is stored."""
    config: dict[str, Any] = {"uri": args.url, "timeout": args.timeout}
    if args.required_tools:
        config["requiredTools"] = [t for t in args.required_tools.split(",") if t]
    if args.min_tools is not None:
        config["minTools"] = args.min_tools
    try:
        check_kind("mcp").parse(config)
    except ConfigError as exc:
        raise Usage("; ".join(f"{key}: {message}" for key, message in exc.errors.items())) from None
    api, _ = _api(env)
    with api:
        result = api.check_once({"type": "mcp", "config": config})
    if args.output == "json":
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print(_result_line(result))
        if result.get("missing_tools"):
            print(f"missing tools: {', '.join(result['missing_tools'])}")
    return OK if result.get("status") in ("up", "degraded") else FAILED


def _result_line(result: dict[str, Any]) -> str:
    """Return a check's result in a line: status, time, server, tools, access, reason."""
    total = (result.get("timings") or {}).get("total_ms")
    parts = [f"{result['status']:<9}", f"{total:.0f} ms" if total is not None else "-"]
    server = result.get("server") or {}
    if server:
        parts.append(f"server {server.get('name')} {server.get('version')}".rstrip())
    if result.get("tool_count") is not None:
        parts.append(f"{result['tool_count']} tools")
    if result.get("access"):
        parts.append(f"access {result['access']}")
    if result.get("reason"):
        parts.append(str(result["reason"]))
    return "  ".join(parts)


# --- apply and diff -----------------------------------------------------------------------------


def _plan_and_apply(args: argparse.Namespace, env: Mapping[str, str], *, apply: bool) -> int:
    as_json = args.output == "json"
    ci = bool(args.ci or any(env.get(name, "").lower() not in ("", "0", "false") for name in CI_VARIABLES))
    filename, text = _read_file(args.file)
    report: dict[str, Any] = {"file": filename, "warnings": [], "errors": []}
    try:
        spec = load(text, env=env, ci=ci)
    except SpecInvalid as exc:
        return _refused(report, exc.problems, filename, as_json)
    report["warnings"] = [p.render(filename) for p in spec.warnings]
    if not as_json:
        for warning in spec.warnings:
            print(f"warning: {warning.render(filename)}", file=sys.stderr)
    api, _ = _api(env)
    with api:
        limits = Limits.fetch(api)
        current = api.healthchecks()
        problems = limits.problems(spec.monitors)
        try:
            plan = make_plan(spec.monitors, current, prune=args.prune, send_headers=args.send_headers)
        except PlanRefused as exc:
            return _refused(report, problems + exc.problems, filename, as_json)
        too_many = limits.count_problem(after=len(current) + len(plan.creates) - len(plan.deletes))
        if too_many:
            problems.append(too_many)
        if apply:
            problems += plan.missing_secrets
        if problems:
            return _refused(report, problems, filename, as_json)
        report["warnings"] += [p.render(filename) for p in plan.missing_secrets]
        if not as_json:
            for missing in plan.missing_secrets:
                print(f"warning: {missing.render(filename)} (apply needs it)", file=sys.stderr)
        report["plan"] = _plan_json(plan)
        report["changes"] = plan.has_changes
        if not as_json:
            _print_plan(plan, filename, api.base_url)
        if not plan.has_changes or not apply:
            if as_json:
                print(json.dumps(report, indent=2, ensure_ascii=False))
            return CHANGES if plan.has_changes and args.detailed_exitcode else OK
        outcome = _apply(api, plan, spec, filename, quiet=as_json)
    report.update(outcome)
    if as_json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        _print_summary(outcome)
    return FAILED if outcome["failed"] else OK


def _apply(api: Api, plan: Plan, spec: Spec, filename: str, *, quiet: bool) -> dict[str, Any]:
    """Carry the plan out one monitor at a time: creates, updates, then deletes.

    A monitor's listing is its own request, after the monitor's (a new monitor's needs its id): it
    is reported on its own, so a refused listing doesn't hide that the monitor was written. A
    monitor the API refuses is reported at its line and the rest goes on; an API that can't be
    reached, fails or refuses the key stops the run, and what was not tried is listed as such.
    """
    applied: dict[str, list[str]] = {"created": [], "updated": [], "deleted": []}
    failed: list[dict[str, Any]] = []

    def say(line: str) -> None:
        if not quiet:
            print(line)

    def refused(action: str, name: str, monitor: Monitor | None, exc: ApiError | Unreachable) -> bool:
        """Report a refused request; return whether the run must stop."""
        errors = _api_problems(exc, monitor, filename, listing=action in LISTING_ACTIONS.values())
        failed.append({"action": action, "name": name, "errors": errors})
        if not quiet:
            print(f"failed to {action} {name}:", file=sys.stderr)
            for error in errors:
                print(f"  {error}", file=sys.stderr)
        # A refusal of this monitor (400, 404, 409) leaves the others to try; an API that is
        # gone, failing or refusing the key would refuse them all: stop.
        return not isinstance(exc, ApiError) or exc.status >= 500 or exc.status in (401, 403)

    steps: list[tuple[str, str, Monitor | None, Any]] = [
        *(("create", c.monitor.name, c.monitor, c) for c in plan.creates),
        *(("update", u.monitor.name, u.monitor, u) for u in plan.updates),
        *(("delete", d.name, None, d) for d in plan.deletes),
    ]
    for action, name, monitor, step in steps:
        try:
            healthcheck_id = _write_monitor(api, action, step, say)
        except (ApiError, Unreachable) as exc:
            if refused(action, name, monitor, exc):
                break
            continue
        # A listing-only update sends no PATCH: it is updated once its listing is written.
        wrote = action != "update" or bool(step.send)
        if wrote:
            applied[f"{action}d"].append(name)
        listing: ListingAction | None = None if action == "delete" else step.listing
        if listing is None:
            continue
        assert monitor is not None
        try:
            _apply_listing(api, healthcheck_id, monitor, listing)
        except (ApiError, Unreachable) as exc:
            if refused(LISTING_ACTIONS[listing], name, monitor, exc):
                break
            continue
        say(f"{LISTING_DONE[listing]} of {name} ({healthcheck_id})")
        if not wrote:
            applied["updated"].append(name)
    done_names = {n for names in applied.values() for n in names}
    failed_names = {f["name"] for f in failed}
    not_applied = [name for _, name, _, _ in steps if name not in done_names and name not in failed_names]
    return {"applied": applied, "failed": failed, "not_applied": not_applied}


def _write_monitor(api: Api, action: str, step: Any, say: Callable[[str], None]) -> str:
    """Make a step's own request (POST, PATCH when it sends fields, DELETE); return the healthcheck's id."""
    if action == "create":
        assert isinstance(step, Create)
        done = api.create(step.monitor.body())
        say(f"created {step.monitor.name} ({done['id']})")
        return str(done["id"])
    if action == "update":
        assert isinstance(step, Update)
        if step.send:
            done = api.update(step.id, step.monitor.body(step.send))
            say(f"updated {step.monitor.name} ({step.id})")
            for notice in done.get("notices", []):
                say(f"  notice: {notice['field']}: {notice['message']}")
        return step.id
    assert isinstance(step, Delete)
    api.delete(step.id)
    say(f"deleted {step.name} ({step.id})")
    return step.id


# What a listing step is called when it fails ("failed to set the listing of Docs MCP") and done.
LISTING_ACTIONS: dict[ListingAction, str] = {"put": "set the listing of", "delete": "remove the listing of"}
LISTING_DONE: dict[ListingAction, str] = {"put": "set the listing", "delete": "removed the listing"}


def _apply_listing(api: Api, healthcheck_id: str, monitor: Monitor, action: ListingAction) -> None:
    if action == "delete":
        api.delete_listing(healthcheck_id)
    else:
        assert monitor.listing is not None
        api.set_listing(healthcheck_id, monitor.listing)


def _api_problems(
    exc: Exception, monitor: Monitor | None, filename: str, *, listing: bool = False
) -> list[str]:
    """Return the API's refusal as lines, each at the file's line and column of the field it names.

    A refused listing's fields are the listing's (``quote`` is ``listing.quote``); an error of no
    listing field (the healthcheck is not an MCP check) is the listing's own.
    """
    if isinstance(exc, ApiError) and monitor is not None and (errors := exc.field_errors()):
        if listing:
            errors = {_listing_path(path): message for path, message in errors.items()}
        return [monitor.problem(api_path, message).render(filename) for api_path, message in errors.items()]
    return [str(exc)]


def _listing_path(api_path: str) -> str:
    """Return a listing request's error field as the monitor's field path: ``listing.quote``, else ``listing``."""
    name = api_path.partition(".")[0]
    return f"{F.LISTING}.{api_path}" if name in F.LISTING_FIELDS else F.LISTING


def _refused(report: dict[str, Any], problems: list[Problem], filename: str, as_json: bool) -> int:
    lines = [p.render(filename) for p in problems]
    if as_json:
        report["errors"] = lines
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        for line in lines:
            print(line, file=sys.stderr)
        print(
            f"{len(lines)} problem{'s' * (len(lines) != 1)} in {filename}; nothing was sent.", file=sys.stderr
        )
    return FAILED


def _shown(change: Change, value: Any) -> str:
    if change.field.startswith("config.headers."):
        return "(none)" if value is None else str(value)
    return json.dumps(value, ensure_ascii=False)


def _print_plan(plan: Plan, filename: str, api_url: str) -> None:
    if not plan.has_changes:
        print(
            f"No changes: {len(plan.unchanged)} monitor{'s' * (len(plan.unchanged) != 1)} match {filename}."
        )
    else:
        print(
            f"Plan for {filename} on {api_url}: {len(plan.creates)} to create, {len(plan.updates)} to update, "
            f"{len(plan.deletes)} to delete, {len(plan.unchanged)} unchanged."
        )
        for create in plan.creates:
            m = create.monitor
            print(f"  + create {m.name} ({m.type_name}{' ' * bool(m.target)}{m.target})")
            if m.fields["config"].get("headers"):
                print(f"      headers: {', '.join(f'{n}: {MASK}' for n in m.fields['config']['headers'])}")
            if m.listing is not None:
                print(f"      listing: {json.dumps(F.listing_entry(m.listing), ensure_ascii=False)}")
        for update in plan.updates:
            print(f"  ~ update {update.monitor.name}")
            for change in update.changes:
                print(
                    f"      {change.field}: {_shown(change, change.before)} → {_shown(change, change.after)}"
                )
        for delete in plan.deletes:
            print(f"  - delete {delete.name} ({delete.id})")
    if plan.unmanaged:
        print(
            f"Not in {filename}, left as they are (--prune deletes them): {', '.join(sorted(plan.unmanaged))}"
        )


def _print_summary(outcome: dict[str, Any]) -> None:
    applied = outcome["applied"]
    line = (
        f"Applied: {len(applied['created'])} created, {len(applied['updated'])} updated, "
        f"{len(applied['deleted'])} deleted"
    )
    if outcome["failed"]:
        line += f"; failed: {', '.join(f['action'] + ' ' + f['name'] for f in outcome['failed'])}"
    if outcome["not_applied"]:
        line += f"; not applied: {', '.join(outcome['not_applied'])}"
    print(line + ".")


def _plan_json(plan: Plan) -> dict[str, Any]:
    def change(c: Change) -> dict[str, Any]:
        return {"field": c.field, "before": c.before, "after": c.after}

    return {
        "create": [
            {
                "name": c.monitor.name,
                "fields": c.monitor.fields,
                **({F.LISTING: F.listing_entry(c.monitor.listing)} if c.monitor.listing is not None else {}),
            }
            for c in plan.creates
        ],
        "update": [
            {"name": u.monitor.name, "id": u.id, "changes": [change(c) for c in u.changes]}
            for u in plan.updates
        ],
        "delete": [{"name": d.name, "id": d.id} for d in plan.deletes],
        "unchanged": plan.unchanged,
        "unmanaged": sorted(plan.unmanaged),
    }


# --- plumbing -----------------------------------------------------------------------------------


def _read_file(path: str) -> tuple[str, str]:
    if path == "-":
        return "<stdin>", sys.stdin.read()
    try:
        return path, Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise Usage(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise Usage(f"{path}: can't be read ({exc})") from None


def _api(env: Mapping[str, str]) -> tuple[Api, credentials.Credentials]:
    found = credentials.read(env)
    if not found.key:
        raise Usage(
            f"no API key: set {credentials.KEY_VARIABLE}, or run `uptimyctl login` "
            f"(it saves one to {credentials.config_path(env)})"
        )
    if urlsplit(found.api_url).scheme == "http" and urlsplit(found.api_url).hostname not in LOOPBACK:
        print(
            f"warning: {found.api_url} is plain HTTP: the API key and header values cross the network "
            "unencrypted; use https://",
            file=sys.stderr,
        )
    return Api(found.api_url, found.key), found


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], out: TextIO | None = None) -> None:
    out = out or sys.stdout
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=False)]
    for row in (header, *rows):
        print(
            "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip(),
            file=out,
        )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="uptimyctl",
        description="Monitors as code for Uptimy: apply a monitors file through the REST API.",
        epilog=f"API key: ${credentials.KEY_VARIABLE} or `uptimyctl login`; API URL: ${credentials.URL_VARIABLE} "
        f"(default {credentials.DEFAULT_API_URL}).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, run: Any, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(run=run)
        return sub

    for name, run, help_text in (
        ("apply", cmd_apply, "Create, update (and with --prune delete) monitors so they match a file."),
        ("diff", cmd_diff, "Show what `apply` would change, changing nothing."),
    ):
        sub = command(name, run, help_text)
        sub.add_argument("-f", "--file", required=True, help="the monitors file (- for standard input)")
        if name == "apply":
            sub.add_argument("--dry-run", action="store_true", help="show the plan, change nothing")
        sub.add_argument("--prune", action="store_true", help="delete monitors the file doesn't name")
        sub.add_argument(
            "--detailed-exitcode",
            action="store_true",
            help="exit 3 when the plan has changes (with --dry-run)",
        )
        sub.add_argument("--output", "-o", choices=("text", "json"), default="text")
        sub.add_argument(
            "--ci",
            action="store_true",
            help="CI mode (also when $CI is set): literal header values are errors",
        )
        sub.add_argument(
            "--send-headers",
            action="store_true",
            help="send header values again (the API never shows them, so a changed secret can't be seen)",
        )
    get = command("get", cmd_get, "List the organization's monitors.")
    get.add_argument("resource", choices=("monitors",))
    get.add_argument("-o", "--output", choices=("table", "yaml", "json"), default="table")
    command("export", cmd_export, "Write the organization's monitors as a monitors file, to standard output.")
    delete = command("delete", cmd_delete, "Delete the monitor of this name.")
    delete.add_argument("name")
    check = command(
        "check",
        cmd_check,
        "Check an MCP URL once from the Uptimy server, through the API; nothing is stored.",
    )
    check.add_argument("url")
    check.add_argument("--required-tools", help="comma-separated tool names that must be listed")
    check.add_argument("--min-tools", type=int)
    check.add_argument("--timeout", type=float, default=10)
    check.add_argument("-o", "--output", choices=("text", "json"), default="text")
    command("status", cmd_status, "One line per monitor: its status, name, target and cause.")
    login = command("login", cmd_login, "Save an API key (read from standard input) for later commands.")
    login.add_argument(
        "--api-url", help=f"default ${credentials.URL_VARIABLE} or {credentials.DEFAULT_API_URL}"
    )
    command("version", cmd_version, "Print uptimyctl's version.")
    return parser
