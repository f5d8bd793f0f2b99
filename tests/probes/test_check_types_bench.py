"""Prove the pure parts of ``python tests/bench/check_types.py``: reading /proc, the table, blackbox's config.

No figure is asserted: docs/benchmarks.md quotes what a full run printed on a named machine.
The run itself (two probers, the targets, a namespace) is the command's, tried with tiny N last.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import PEERS_SWITCH, unavailable

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "bench" / "check_types.py"
TINY = ("--types", "tcp", "--probes", "5", "--rounds", "1", "--warmup", "1", "--no-namespace", "--no-floor")


def _load():
    spec = importlib.util.spec_from_file_location("check_types_bench", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


bench = _load()

# Fields 3-13 of /proc/<pid>/stat, then utime (14) and stime (15), then the rest.
REST = "S 1 2 3 4 5 6 7 8 9 10 {utime} {stime} 0 0 20 0 9 0 100 2000 300"


@pytest.mark.parametrize(
    ("comm", "utime", "stime", "seconds"),
    [
        ("python", 250, 50, 3.0),
        ("prometheus-blac", 1, 0, 0.01),
        # The command name is the process's to choose: spaces and parentheses are counted past.
        ("a b) (c", 7, 3, 0.1),
    ],
)
def test_proc_stat_is_read_past_the_command_name(comm, utime, stime, seconds):
    stat = f"4242 ({comm}) " + REST.format(utime=utime, stime=stime) + "\n"

    assert bench.proc_cpu_seconds(stat, 100) == pytest.approx(seconds)


def test_the_table_gives_each_type_its_ratio_and_the_ratio_less_the_floor():
    rows = [
        bench.Row("http", 290.0, 400.0, {"up": 3}, {"up": 3}, floor_us=40.0),
        bench.Row("icmp", 150.0, 30.0, {"up": 3}, {"up": 3}, floor_us=40.0),
    ]

    assert bench.table(rows).splitlines() == [
        "| type | Uptimy µs CPU/probe | blackbox µs CPU/probe | ratio | ratio to blackbox less floor |",
        "|---|---|---|---|---|",
        "| http | 290 | 400 | 0.72× | 0.81× |",
        "| icmp | 150 | 30 | 5.00× | – |",
    ]


def test_the_table_has_no_floor_column_without_a_floor():
    rows = [bench.Row("tcp", 150.0, 250.0, {"up": 1}, {"up": 1})]

    assert (
        bench.table(rows).splitlines()[0] == "| type | Uptimy µs CPU/probe | blackbox µs CPU/probe | ratio |"
    )


def test_blackbox_has_a_module_of_its_prober_for_every_compared_type():
    config = yaml.safe_load(bench.blackbox_config(ca_file="/tmp/ca.pem"))

    probers = {kind: config["modules"][module]["prober"] for kind, module in bench.MODULES.items()}
    assert probers == {"http": "http", "tcp": "tcp", "tls": "tcp", "dns": "dns", "icmp": "icmp"}
    assert config["modules"]["tcp_tls"]["tcp"]["tls_config"]["ca_file"] == "/tmp/ca.pem"


@pytest.mark.parametrize(
    ("status", "body", "result"),
    [
        (200, b"# HELP probe_success ...\nprobe_success 1\n", "up"),
        (200, b"probe_success 0\n", "down"),
        (400, b"Unknown module", "http 400"),
        (200, b"Healthy", "ok"),
    ],
)
def test_a_probe_answer_is_read_by_its_probe_success(status, body, result):
    assert bench.probe_result(status, body) == result


def test_the_command_runs_both_probers_with_tiny_n():
    if not Path(bench.BLACKBOX).exists():
        # The peer the benchmark compares with; CI installs it, and fails here without it.
        unavailable(
            f"blackbox_exporter is not installed at {bench.BLACKBOX}: apt-get install prometheus-blackbox-exporter",
            switch=PEERS_SWITCH,
        )
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *TINY, "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)["types"]["tcp"]
    assert (figures["uptimy_results"], figures["blackbox_results"]) == ({"up": 5}, {"up": 5})
