"""Check the ping check (type 5): its config, its rules, and real echoes in a network namespace."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from probes.checks.ping import Echoes, PingConfig, judge, parse_ping_config
from probes.config import ConfigError
from probes.runner import ProbeEnv, run_check_sync
from probes.types import FailureKind, Status

RUNNER = Path(__file__).with_name("ping_in_namespace.py")
ALLOW_EVERY_GROUP = "0 2147483647"
FORBID_EVERY_GROUP = "1 0"


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({}, "host"),
        ({"host": ""}, "host"),
        ({"host": "bad host"}, "host"),
        ({"host": "0177.0.0.1"}, "host"),
        ({"host": "fe80::1%eth0"}, "host"),
        ({"host": "example.com", "count": 0}, "count"),
        ({"host": "example.com", "count": 11}, "count"),
        ({"host": "example.com", "count": True}, "count"),
        ({"host": "example.com", "count": 10, "timeout": 2}, "count"),
        ({"host": "example.com", "maxLossPercent": 100}, "maxLossPercent"),
        ({"host": "example.com", "degradedRttMs": 0}, "degradedRttMs"),
        ({"host": "example.com", "timeout": 120}, "timeout"),
        ({"host": "example.com", "port": 7}, "port"),
    ],
)
def test_a_bad_config_names_its_field(raw, field):
    with pytest.raises(ConfigError) as error:
        parse_ping_config(raw)

    assert field in error.value.errors


def test_a_config_keeps_its_defaults():
    assert parse_ping_config({"host": "example.com"}) == PingConfig(host="example.com")


@pytest.mark.parametrize(
    ("echoes", "max_loss", "rtt", "status", "kind"),
    [
        (Echoes(3, 3, 1.0, 2.0, 3.0), 50, None, Status.UP, None),
        (Echoes(3, 2, 1.0, 2.0, 3.0), 50, None, Status.UP, None),
        (Echoes(4, 2, 1.0, 2.0, 3.0), 50, None, Status.UP, None),
        (Echoes(3, 1, 1.0, 2.0, 3.0), 50, None, Status.DOWN, FailureKind.PACKET_LOSS),
        (Echoes(3, 2, 1.0, 2.0, 3.0), 0, None, Status.DOWN, FailureKind.PACKET_LOSS),
        (Echoes(3, 0, 0.0, 0.0, 0.0), 99, None, Status.DOWN, FailureKind.PACKET_LOSS),
        (Echoes(3, 3, 1.0, 80.0, 90.0), 50, 50, Status.DEGRADED, FailureKind.SLOW_ROUND_TRIP),
        (Echoes(3, 3, 1.0, 50.0, 90.0), 50, 50, Status.UP, None),
        # Loss outranks slowness.
        (Echoes(3, 0, 0.0, 0.0, 0.0), 50, 1, Status.DOWN, FailureKind.PACKET_LOSS),
    ],
)
def test_the_rules(echoes, max_loss, rtt, status, kind):
    config = PingConfig(host="example.com", max_loss_percent=max_loss, degraded_rtt_ms=rtt)

    assert judge(config, echoes)[:2] == (status, kind)


def test_a_private_address_is_refused_before_any_echo():
    outcome = run_check_sync(parse_ping_config({"host": "127.0.0.1"}), ProbeEnv(allow_private=False))

    assert (outcome.status, outcome.kind) == (Status.DOWN, FailureKind.BLOCKED_ADDRESS)


def in_namespace(group_range: str, config: dict[str, object]) -> dict[str, object]:
    """Return the outcome of a ping check run in a network namespace of its own (root only)."""
    if shutil.which("unshare") is None or os.geteuid() != 0:
        if os.environ.get("UPTIMY_REQUIRE_SERVICES"):
            pytest.fail("the ping tests need root and unshare(1) for a network namespace")
        pytest.skip("the ping tests need root and unshare(1) for a network namespace")
    done = subprocess.run(
        ["unshare", "-n", sys.executable, str(RUNNER), group_range, json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PYTHONPATH": str(RUNNER.parents[2])},
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_a_host_that_answers_is_up_with_its_round_trips():
    outcome = in_namespace(ALLOW_EVERY_GROUP, {"host": "127.0.0.1", "count": 3})

    details = outcome["details"]
    assert outcome["status"] == "up"
    assert (details["sent"], details["received"], details["loss_percent"]) == (3, 3, 0.0)
    assert 0 < details["rtt_min_ms"] <= details["rtt_avg_ms"] <= details["rtt_max_ms"]
    assert outcome["timings"]["total_ms"] == details["rtt_avg_ms"]


def test_a_host_that_never_answers_is_down_with_its_losses():
    outcome = in_namespace(ALLOW_EVERY_GROUP, {"host": "10.9.0.2", "count": 2, "timeout": 3})

    assert (outcome["status"], outcome["kind"]) == ("down", "packet_loss")
    assert outcome["reason"] == "No echo reply from 10.9.0.2 (2 sent)"


def test_a_kernel_that_forbids_unprivileged_icmp_is_a_config_error_naming_the_setting():
    outcome = in_namespace(FORBID_EVERY_GROUP, {"host": "127.0.0.1", "count": 1})

    assert (outcome["status"], outcome["kind"]) == ("down", "config")
    assert "net.ipv4.ping_group_range" in str(outcome["reason"])
