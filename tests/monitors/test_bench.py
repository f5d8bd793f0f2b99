"""Smoke-test `python tests/bench/pipeline.py`: each subcommand runs with tiny N and prints its report.

The figures themselves are never asserted: they depend on the machine, and docs/benchmarks.md quotes
them with the command that produced them.

Migrating a fresh SQLite file is most of a tiny bench run's time (~8 s of CPU each), and it is
the same work every time: so the module migrates one file once and the runs that are about the
bench's own work each get a copy of it (DATABASE_URL, an empty database the bench migrates
again, a no-op). The bench's own path, a temporary file it creates, migrates and deletes, is
still run as a user runs it (test_claim_prints_a_human_report_by_default), as is the
PostgreSQL one (test_pg_creates_migrates_and_drops_its_own_database).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from tests.conftest import service_missing

ROOT = Path(__file__).resolve().parents[2]
NOT_PASSED = ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "UPTIMY_VAR_DIR")


def _clean_env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key not in NOT_PASSED}


@pytest.fixture(scope="module")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a SQLite file migrated once for the module (``manage.py migrate``, as the bench does)."""
    var = tmp_path_factory.mktemp("bench-template")
    path = var / "template.sqlite3"
    env = {
        **_clean_env(),
        "DATABASE_URL": f"sqlite:///{path}",
        "UPTIMY_VAR_DIR": str(var),
        "SECRET_KEY": "bench-only-not-secret",
        "UPTIMY_SECRETS_KEY": "bench-only-secrets-key",
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return path


@pytest.fixture
def migrated_copy(migrated_sqlite: Path, tmp_path: Path) -> Callable[[], dict[str, str]]:
    """Return a function giving a bench run the environment of a fresh copy of the migrated file."""
    copies = iter(range(1, 100))

    def copy() -> dict[str, str]:
        var = tmp_path / f"run-{next(copies)}"
        var.mkdir()
        target = var / "bench.sqlite3"
        # The backup API: a consistent copy, whatever the WAL still held.
        with closing(sqlite3.connect(migrated_sqlite)) as source, closing(sqlite3.connect(target)) as dest:
            source.backup(dest)
        return {"DATABASE_URL": f"sqlite:///{target}", "UPTIMY_VAR_DIR": str(var)}

    return copy


def bench(
    *args: str, env: dict[str, str] | None = None, script: str = "pipeline.py"
) -> subprocess.CompletedProcess[str]:
    """Run a bench script in a fresh interpreter, away from the suite's database and broker."""
    return subprocess.run(
        [sys.executable, f"tests/bench/{script}", *args],
        cwd=ROOT,
        env={**_clean_env(), **(env or {})},
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def report_of(run: subprocess.CompletedProcess[str]) -> dict:
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_claim_and_record_refuse_sqlite_without_allow_sqlite():
    for command in ("claim", "record"):
        run = bench(command, "--checks", "2")

        assert run.returncode == 2
        assert "--allow-sqlite" in run.stderr
        assert "--pg" in run.stderr


def test_claim_reports_each_tick_without_redis(migrated_copy):
    report = report_of(
        bench(
            "claim",
            *("--checks", "20", "--regions", "2", "--rounds", "2", "--allow-sqlite", "--json"),
            env=migrated_copy(),
        )
    )

    assert report["command"] == "claim"
    assert report["enqueue"] is None  # no broker given: enqueue not measured, and said so
    assert [entry["claimed"] for entry in report["rounds"]] == [20, 20]
    assert {entry["runs"] for entry in report["rounds"]} == {40}
    assert {"leftovers_ms", "claim_ms", "publish_ms", "total_ms"} <= set(report["rounds"][0])


def test_claim_prints_a_human_report_by_default():
    run = bench("claim", "--checks", "5", "--rounds", "1", "--allow-sqlite")

    assert run.returncode == 0, run.stderr
    assert "outbox delete only" in run.stdout
    assert "claim + group + outbox" in run.stdout


def test_record_reports_each_round(migrated_copy):
    report = report_of(
        bench(
            "record",
            "--checks",
            "10",
            "--regions",
            "3",
            "--batch",
            "4",
            "--rounds",
            "2",
            "--allow-sqlite",
            "--json",
            env=migrated_copy(),
        )
    )

    assert report["command"] == "record"
    assert [entry["results"] for entry in report["rounds"]] == [30, 30]
    assert [entry["batches"] for entry in report["rounds"]] == [9, 9]  # ceil(10/4) chunks × 3 regions
    assert report["steady_results_per_second"] > 0
    assert report["results_in_maintenance"] == 0


def test_record_with_windows_records_every_result_in_maintenance(migrated_copy):
    report = report_of(
        bench(
            "record",
            "--checks",
            "5",
            "--regions",
            "2",
            "--rounds",
            "2",
            "--windows",
            "2",
            "--allow-sqlite",
            "--json",
            env=migrated_copy(),
        )
    )

    assert report["maintenance_windows"] == 2
    assert report["results_in_maintenance"] == 20


def test_e2e_runs_checks_against_the_fast_server_and_reports_the_lag(migrated_copy):
    report = report_of(
        bench(
            "e2e",
            "--checks",
            "3",
            "--interval",
            "2",
            "--tick",
            "0.5",
            "--threads",
            "2",
            "--seconds",
            "8",
            "--json",
            env=migrated_copy(),
        )
    )

    assert report["command"] == "e2e"
    assert report["url"].startswith("http://127.0.0.1:")
    assert report["recorded_runs"] <= report["expected_runs"]
    assert set(report["outcomes"]) <= {"up"}
    assert {"lag_s_p50", "lag_s_p95", "lag_s_p99", "checks_per_second"} <= set(report)


def test_hang_reports_the_healthy_and_the_hanging_checks_apart(migrated_copy):
    report = report_of(
        bench(
            "hang",
            "--checks",
            "4",
            "--hang-percent",
            "25",
            "--timeout",
            "1",
            "--interval",
            "2",
            "--tick",
            "0.5",
            "--threads",
            "4",
            "--seconds",
            "8",
            "--json",
            env=migrated_copy(),
        )
    )

    assert report["command"] == "hang"
    assert (report["healthy"]["healthchecks"], report["hanging"]["healthchecks"]) == (3, 1)
    assert set(report["healthy"]["outcomes"]) <= {"up"}
    assert set(report["hanging"]["outcomes"]) <= {"down (timeout)"}
    assert {"lag_s_p99", "ended_to_recorded_s_p99"} <= set(report["hanging"])


@pytest.mark.services
def test_pg_creates_migrates_and_drops_its_own_database():
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        service_missing("PostgreSQL (DATABASE_URL)")
    parts = urlsplit(url)
    server = urlunsplit((parts.scheme, parts.netloc, "/postgres", parts.query, ""))

    report = report_of(bench("claim", "--checks", "5", "--rounds", "1", "--pg", server, "--json"))

    assert report["database"].startswith("postgresql (uptimy_bench_")
    name = report["database"].split("(")[1].split(",")[0]
    with psycopg.connect(server, autocommit=True) as conn:
        assert conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None


@pytest.mark.parametrize("args", [["claim", "--checks", "0"], ["e2e", "--regions", "0"]])
def test_nonsense_sizes_are_refused(args):
    run = bench(*args)

    assert run.returncode == 2
    assert "at least 1" in run.stderr


def test_the_alerts_bench_delivers_every_incident_and_reports_the_lag(migrated_copy):
    report = report_of(bench("--checks", "12", "--json", script="alerts.py", env=migrated_copy()))

    assert (report["messages_received"], report["incidents_covered"], report["deliveries_delivered"]) == (
        12,
        12,
        12,
    )
    assert report["storm_guard"] == "off"
    assert 0 <= report["lag_s_p50"] <= report["lag_s_p99"] <= report["lag_s_max"]


def test_the_alerts_bench_with_the_storm_guard_sends_a_digest(migrated_copy):
    report = report_of(
        bench(
            "--checks",
            "25",
            "--storm",
            "--json",
            script="alerts.py",
            env={**migrated_copy(), "UPTIMY_ALERT_STORM_THRESHOLD": "5"},
        )
    )

    assert report["messages_received"] == 6  # five incidents one by one, then one digest of the rest
    assert report["digest_incidents"] == 20
    assert report["incidents_covered"] == 25


def test_the_directory_bench_recomputes_every_scorecard_and_reports_the_pages(migrated_copy):
    report = report_of(
        bench(
            "--listings",
            "40",
            "--repeat",
            "2",
            "--recomputes",
            "1",
            "--json",
            script="directory_scorecards.py",
            env=migrated_copy(),
        )
    )

    assert report["scorecards"] == 40
    assert {name: report[name]["queries"] for name in ("server_page", "directory_page", "badge")} == {
        "server_page": 2,
        "directory_page": 2,
        "badge": 1,
    }
