"""Check the ping check (type 5): its config, its rules, and real echoes in a network namespace."""

from __future__ import annotations

import functools
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
# Inside the namespace the caller is root, group 0: the one group its map knows.
ALLOW_EVERY_GROUP = "0 0"
# A new network namespace forbids unprivileged ICMP ("1 0"); "-" keeps that default.
FORBID_EVERY_GROUP = "-"


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


# A user namespace mapping the caller to root, with a network namespace of its own: no root on the
# machine needed, where the kernel allows unprivileged user namespaces (most do; Debian since 11).
UNSHARE = ["unshare", "--user", "--map-root-user", "--net"]


@functools.cache
def namespace_refusal() -> str | None:
    """Return why this machine can't make the namespace the ping tests run in, or None when it can."""
    if shutil.which("unshare") is None:
        return "unshare(1) (util-linux) is not installed"
    tried = subprocess.run([*UNSHARE, "true"], capture_output=True, text=True, timeout=30, check=False)
    if tried.returncode != 0:
        return f"the kernel refused a user and network namespace ({tried.stderr.strip()})"
    return None


def in_namespace(group_range: str, config: dict[str, object]) -> dict[str, object]:
    """Return the outcome of a ping check run in a network namespace of its own.

    Real echoes need a kernel setting (``ping_group_range``) that only a namespace of the test's
    own can change without changing the machine; where no namespace can be made, the test
    skips saying why, and fails under UPTIMY_REQUIRE_SERVICES=1 (CI), where it must run.
    """
    refusal = namespace_refusal()
    if refusal is not None:
        if os.environ.get("UPTIMY_REQUIRE_SERVICES"):
            pytest.fail(f"the ping tests need a network namespace of their own: {refusal}")
        pytest.skip(f"the ping tests need a network namespace of their own: {refusal}")
    done = subprocess.run(
        [*UNSHARE, sys.executable, str(RUNNER), group_range, json.dumps(config)],
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
