"""The floors hold: `make lint`'s import contracts pass on the tree and fail on an upward import.

Each case copies the product packages into a temporary tree, adds one forbidden import to one
module, and runs lint-imports with the project's own contracts against the copy.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    "probes",
    "monitors",
    "alerts",
    "statuspages",
    "reports",
    "signin",
    "directory",
    "web",
    "mcpserver",
    "uptimy",
)
FLOORS = "Floors"
PURE = "The check engine (probes) is pure"
PURE_MAINTENANCE = "The maintenance-window rules are pure"
NO_TESTS = "Product code never imports the tests"
CHANNELS = "Channel senders (alerts.channels) are pure"
PAGES = "Status page rules and renderers (statuspages.render) are pure"
WEBHOOKS = "The status page webhook sender (statuspages.webhooks) is pure"
UPTIME = "The uptime maths (monitors.uptime) is pure"
SCORECARD = "The scorecard rules (monitors.scorecard) are pure"
QUOTES = "The quote rules (monitors.quotes, .pagefetch) are pure"
BADGES = "Badge drawing (monitors.badges, .badge_widths, .svg) is pure"
REPORTS = "Report figures and their CSV (reports.render) are pure"
SIGNIN_METADATA = "Sign-in's client metadata rules and fetch are pure"
CTL = "uptimyctl (uptimy.ctl) is an API client"
REGISTRY = "The directory's clients (directory.registry, .github) are pure"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    # The copy comes first on the path, so the contracts see its modules, not the installed ones.
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def broken_contracts(report: str) -> list[str]:
    """Return the name of each contract lint-imports reports as broken, as the constants above spell it."""
    # A contract with ignored imports reports "BROKEN (1 ignored import)".
    lines = [line for line in report.splitlines() if re.search(r" BROKEN( \(\d+ ignored imports?\))?$", line)]
    return [
        name
        for name in (
            FLOORS,
            PURE,
            PURE_MAINTENANCE,
            CHANNELS,
            PAGES,
            WEBHOOKS,
            UPTIME,
            SCORECARD,
            QUOTES,
            BADGES,
            REPORTS,
            SIGNIN_METADATA,
            NO_TESTS,
            CTL,
            REGISTRY,
        )
        if any(line.startswith(name) for line in lines)
    ]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    (tmp_path / "tests" / "helpers.py").write_text("")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_tree_keeps_every_contract(tree):
    result = lint_imports(tree)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "statement", "contracts"),
    [
        # The channel senders, the page renderers, the webhook sender, the uptime maths, the quote
        # fetcher, the directory's clients (read_json), the client metadata fetch and uptimyctl
        # stand on the engine: an impure engine makes them impure too.
        (
            "probes/types.py",
            "import django.conf",
            [
                PURE,
                CHANNELS,
                PAGES,
                WEBHOOKS,
                UPTIME,
                SCORECARD,
                QUOTES,
                REPORTS,
                SIGNIN_METADATA,
                CTL,
                REGISTRY,
            ],
        ),
        # monitors brings Django with it: the engine breaks its contracts, the alert channels', the
        # quote fetcher's and the client metadata fetch's (all run their fetch with probes.runner.run_sync).
        ("probes/runner.py", "import monitors.models", [FLOORS, PURE, CHANNELS, QUOTES, SIGNIN_METADATA]),
        # The uptime maths reads the rules' default quorum: an impure rule makes it impure too.
        ("monitors/rules.py", "import uptimy.celery", [FLOORS, UPTIME, REPORTS]),
        ("monitors/selectors.py", "import alerts", [FLOORS]),
        ("alerts/__init__.py", "import statuspages", [FLOORS]),
        ("statuspages/__init__.py", "import uptimy", [FLOORS]),
        # The web app stands on the apps and under uptimy: nothing below imports it, it imports nothing above.
        ("alerts/__init__.py", "import web", [FLOORS]),
        ("web/views.py", "import uptimy.home", [FLOORS]),
        # The MCP server stands beside the web app: neither imports the other, nothing below imports it.
        ("mcpserver/tools.py", "import web.results", [FLOORS]),
        ("web/views.py", "import mcpserver.tools", [FLOORS]),
        ("alerts/selectors.py", "import mcpserver", [FLOORS]),
        ("mcpserver/auth.py", "import uptimy.home", [FLOORS]),
        ("monitors/slots.py", "import tests.helpers", [NO_TESTS]),
        ("alerts/channels/webhook.py", "import django.db.models", [CHANNELS]),
        # The email kind may use Django's mail backend, not the ORM: its exception is for django.core.
        ("alerts/channels/pagerduty.py", "import monitors.models", [CHANNELS]),
        ("alerts/channels/render.py", "import celery", [CHANNELS]),
        # The page renderers take plain values: reading a model, a setting or a task breaks them.
        ("statuspages/render/vocabulary.py", "import monitors.models", [PAGES]),
        ("statuspages/render/badges.py", "import django.utils.html", [PAGES]),
        # The badge drawing is shared by status pages and the directory: a setting or a model breaks it.
        ("monitors/badges.py", "import django.conf", [BADGES]),
        ("monitors/svg.py", "import monitors.models", [BADGES]),
        ("statuspages/render/etag.py", "import uptimy.settings", [FLOORS, PAGES]),
        ("statuspages/render/strip.py", "import celery", [PAGES]),
        ("monitors/maintenance.py", "import django.db", [PURE_MAINTENANCE]),
        # The webhook sender signs and posts plain values: a setting or a model breaks it.
        ("statuspages/webhooks.py", "import django.conf", [WEBHOOKS]),
        ("statuspages/webhooks.py", "import monitors.models", [WEBHOOKS]),
        # The uptime maths is pure; the page renderers may import it and nothing else of monitors.
        ("monitors/uptime.py", "import django.db", [UPTIME, REPORTS]),
        # The scorecard's rules take plain evidence values: a model or a setting breaks them.
        ("monitors/scorecard.py", "import django.db", [SCORECARD]),
        ("monitors/scorecard.py", "import monitors.models", [SCORECARD]),
        # The quote rules and the fetcher take and return plain values: the ORM or a setting breaks them.
        ("monitors/quotes.py", "import monitors.models", [QUOTES]),
        ("monitors/pagefetch.py", "import django.conf", [QUOTES]),
        ("statuspages/render/bars.py", "import monitors.models", [PAGES]),
        ("reports/render/report.py", "import django.template", [REPORTS]),
        ("reports/__init__.py", "import alerts", [FLOORS]),
        # Sign-in stands beside alerts, status pages and reports: it reads monitors, nothing above or beside.
        ("signin/tokens.py", "import alerts", [FLOORS]),
        ("signin/views.py", "import web.access", [FLOORS]),
        ("monitors/selectors.py", "import signin.tokens", [FLOORS]),
        ("statuspages/selectors.py", "import reports.models", [FLOORS]),
        # A client's metadata document is read and fetched as plain values: a setting or the toolkit breaks it.
        ("signin/client_metadata.py", "import django.conf", [SIGNIN_METADATA]),
        ("signin/client_fetch.py", "import oauth2_provider.models", [SIGNIN_METADATA]),
        # uptimyctl is a client of the API: Django, the ORM or the server's settings break it.
        ("uptimy/ctl/plan.py", "import monitors.models", [CTL]),
        ("uptimy/ctl/client.py", "import django.conf", [CTL]),
        ("uptimy/ctl/spec.py", "import uptimy.settings", [CTL]),
        ("uptimy/ctl/cli.py", "import statuspages", [CTL]),
        # The directory stands beside alerts, status pages, reports and sign-in: it reads monitors only.
        ("directory/selectors.py", "import alerts", [FLOORS]),
        ("directory/services.py", "import web.views", [FLOORS]),
        ("statuspages/selectors.py", "import directory.models", [FLOORS]),
        ("monitors/selectors.py", "import directory", [FLOORS]),
        # The registry client fetches and validates plain values: the ORM or a setting breaks it.
        ("directory/registry.py", "import django.conf", [REGISTRY]),
        ("directory/registry.py", "import directory.models", [REGISTRY]),
        ("directory/github.py", "import monitors.scorecard", [REGISTRY]),
    ],
)
def test_an_upward_import_breaks_the_build(tree, module, statement, contracts):
    path = tree / module
    path.write_text(path.read_text() + f"\n{statement}  # noqa\n")

    result = lint_imports(tree)

    assert result.returncode != 0
    assert broken_contracts(result.stdout) == contracts
