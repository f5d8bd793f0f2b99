"""Pin the README's promise: short, and one click from every page of the documentation site.

`make lint` builds the site with `mkdocs build --strict` (broken links and anchors fail there);
these tests hold what a build can't see: that the README stays short, links every page of the
site's navigation, and that each check type, alert channel, setting and benchmark has its page.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from alerts.models import Channel
from probes.checks import check_kinds

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_LINES = 200


def nav_pages() -> list[str]:
    """Return every page of mkdocs.yml's navigation, as paths under docs/."""
    # mkdocs.yml holds no custom tags, so the plain safe loader reads it.
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages: list[str] = []

    def walk(entries: list[object]) -> None:
        for entry in entries:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            if isinstance(value, list):
                walk(value)
            else:
                pages.append(str(value))

    walk(config["nav"])
    return pages


def readme_links() -> set[str]:
    return set(re.findall(r"\]\(docs/([^)#]+)", README.read_text(encoding="utf-8")))


def test_the_readme_is_at_most_200_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= README_MAX_LINES


def test_the_readme_links_every_page_of_the_documentation_site():
    missing = sorted(set(nav_pages()) - readme_links())

    assert not missing, f"README.md links no docs page for {missing}"


def test_every_link_from_the_readme_into_the_docs_names_a_page_that_exists():
    assert sorted(link for link in readme_links() if not (DOCS / link).is_file()) == []


@pytest.mark.parametrize("kind", [kind.name for kind in check_kinds()])
def test_every_check_type_has_a_page_of_its_own(kind):
    assert f"checks/{kind}.md" in nav_pages()


@pytest.mark.parametrize("kind", list(Channel.Kind.values))
def test_every_alert_channel_kind_is_described_on_the_alerts_page(kind):
    assert f"`{kind}`" in (DOCS / "alerts.md").read_text(encoding="utf-8")


def test_every_environment_variable_the_settings_read_has_a_row_in_the_settings_table():
    read = set(
        re.findall(
            r'"((?:UPTIMY|EMAIL|DATABASE|REDIS|SECRET|ALLOWED|SECURE|DEBUG|PROMETHEUS)[A-Z0-9_]*)"',
            (ROOT / "uptimy" / "settings.py").read_text(encoding="utf-8"),
        )
    )
    rows = set(re.findall(r"^\| `([A-Z0-9_]+)` \|", (DOCS / "operating" / "settings.md").read_text(), re.M))

    assert read, "no environment variable found in uptimy/settings.py"
    assert sorted(read - rows) == []


@pytest.mark.parametrize("bench", sorted(path.name for path in (ROOT / "tests" / "bench").glob("*.py")))
def test_every_benchmark_is_on_the_benchmarks_page(bench):
    assert f"tests/bench/{bench}" in (DOCS / "benchmarks.md").read_text(encoding="utf-8")


def test_the_committed_openapi_schema_is_what_manage_py_spectacular_makes(tmp_path):
    made = tmp_path / "openapi.yaml"

    # Made as `make schema` makes it, on the embedded default: field bounds follow the database
    # (a small integer's maximum is 32767 on SQLite, 2**63-1 as PostgreSQL's column type reports).
    # Its warnings (enum names, the directory's operation ids) are not this test's business.
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    env.update(SECRET_KEY="schema-only", UPTIMY_SECRETS_KEY="schema-only")
    subprocess.run(
        [sys.executable, "manage.py", "spectacular", "--file", str(made)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )

    committed = (DOCS / "openapi.yaml").read_text(encoding="utf-8")
    assert made.read_text(encoding="utf-8") == committed, "docs/openapi.yaml is stale: run `make schema`"


def test_the_rest_api_page_renders_the_committed_schema():
    plugins = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["plugins"]

    assert any(isinstance(plugin, dict) and "swagger-ui-tag" in plugin for plugin in plugins)
    assert '<swagger-ui src="openapi.yaml"/>' in (DOCS / "rest-api.md").read_text(encoding="utf-8")
