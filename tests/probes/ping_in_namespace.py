"""Run one ping check inside a network namespace of its own and print its outcome as JSON.

``tests/probes/test_ping_check.py`` starts this under ``unshare -n`` (a namespace with only a
loopback interface), because unprivileged ICMP sockets are allowed per namespace
(``net.ipv4.ping_group_range``) and the machine's own setting must not decide the test.

Usage: ``python ping_in_namespace.py GROUP_RANGE CONFIG_JSON``: GROUP_RANGE is written to the
namespace's ``ping_group_range`` ("0 0" allows the caller, root inside its user namespace);
"-" leaves the new namespace's default, "1 0", which forbids every group. 10.9.0.0/24 is routed
into the loopback interface, where nothing answers it.
"""

from __future__ import annotations

import json
import subprocess
import sys

from probes.checks import check_kind
from probes.runner import ProbeEnv, outcome_to_json, run_check_sync


def main() -> None:
    group_range, raw = sys.argv[1], json.loads(sys.argv[2])
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["ip", "route", "add", "10.9.0.0/24", "dev", "lo"], check=True)
    if group_range != "-":
        with open("/proc/sys/net/ipv4/ping_group_range", "w") as setting:
            setting.write(group_range)
    config = check_kind("ping").parse(raw)
    outcome = run_check_sync(config, ProbeEnv(allow_private=True))
    print(json.dumps(outcome_to_json(outcome)))


if __name__ == "__main__":
    main()
