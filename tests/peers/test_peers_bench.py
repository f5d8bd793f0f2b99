"""Prove ``python tests/bench/engine.py`` works, with tiny N; no timing is asserted here.

The figures on docs/benchmarks.md come from a full run (see tests/bench/engine.py's docstring).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from peer_support import ROOT

pytestmark = pytest.mark.peers


def bench(*args: str) -> tuple[int, str, str]:
    result = subprocess.run(
        [sys.executable, "tests/bench/engine.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return result.returncode, result.stdout, result.stderr


def test_bench_against_the_fast_server_with_sdk_comparison(peers):
    code, out, err = bench(
        peers.fast(),
        "--probes",
        "12",
        "--concurrency",
        "4",
        "--warmup",
        "2",
        "--json",
        "--compare-sdk",
        "--sdk-probes",
        "4",
    )

    assert code == 0, err
    report = json.loads(out)
    for key in ("uptimy", "sdk_defaults", "sdk_shared_client"):
        figures = report[key]
        assert figures["results"] == {"up": figures["probes"]}, figures
        assert figures["cpu_ms_per_check"] > 0
        assert figures["probes_per_second"] > 0
        assert figures["peak_in_flight"] <= 4
    assert report["uptimy"]["probes"] == 12
    assert report["sdk_defaults"]["probes"] == 4
    assert report["uptimy"]["peak_rss_mb"] > 0
    assert set(report["cpu_ratio"]) == {"sdk_defaults_vs_uptimy", "sdk_shared_client_vs_uptimy"}


def test_bench_against_the_sdk_server_in_json_mode(peers):
    code, out, err = bench(peers.sdk("json") + "/mcp", "--probes", "6", "--concurrency", "3", "--warmup", "1")

    assert code == 0, err
    assert "checks/s" in out
    assert "ms CPU per check" in out


def test_bench_exits_1_when_checks_fail(peers):
    code, out, _ = bench(
        peers.sdk("json") + "/nothing", "--probes", "2", "--concurrency", "2", "--warmup", "0", "--json"
    )

    assert code == 1
    assert json.loads(out)["uptimy"]["results"] == {"down: no_endpoint": 2}


def test_bench_refuses_bad_arguments():
    code, _, err = bench("http://127.0.0.1:9/mcp", "--probes", "0")

    assert code == 2
    assert "--probes" in err
