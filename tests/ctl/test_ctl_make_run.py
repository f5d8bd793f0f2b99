"""uptimyctl, the installed command, against a running `make run` (manage.py serve: ASGI, the embedded worker).

The in-process tests (test_ctl_live.py) pin every rule; this is the journey a user types: apply,
apply again (no changes), export and apply the export (no changes), prune. An organization of its
own keeps it apart from the other tests that share the running server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.clock import clock_environment
from tests.ctl.product_text import PRODUCT_TEXT_FILE

SECRET = "upt-make-run-secret-0815"
UPTIMYCTL = str(Path(sys.executable).with_name("uptimyctl"))


def test_apply_apply_again_export_and_prune_against_make_run(live_uptimy, tmp_path):
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        **clock_environment(),
        "UPTIMY_API_URL": live_uptimy.base,
        "UPTIMY_API_KEY": live_uptimy.create_key(read_only=False, organization="ctl-journey"),
        "DOCS_MCP_KEY": SECRET,
    }

    def uptimyctl(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [UPTIMYCTL, *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert SECRET not in done.stdout + done.stderr
        return done

    (tmp_path / "monitors.yaml").write_text(PRODUCT_TEXT_FILE)
    applied = uptimyctl("apply", "-f", "monitors.yaml")
    again = uptimyctl("apply", "-f", "monitors.yaml")
    exported = uptimyctl("export")
    (tmp_path / "exported.yaml").write_text(exported.stdout)
    export_applied = uptimyctl("apply", "-f", "exported.yaml", "--dry-run", "--detailed-exitcode")
    (tmp_path / "monitors.yaml").write_text(PRODUCT_TEXT_FILE.split("  - name: Docs MCP tools")[0])
    pruned = uptimyctl("apply", "-f", "monitors.yaml", "--prune")
    listed = uptimyctl("get", "monitors", "-o", "json")

    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "Applied: 2 created, 0 updated, 0 deleted." in applied.stdout
    assert (again.returncode, again.stdout.startswith("No changes: 2 monitors match")) == (0, True), (
        again.stdout
    )
    assert exported.returncode == 0
    assert "${" in exported.stdout
    assert export_applied.returncode == 0, export_applied.stdout + export_applied.stderr
    assert pruned.returncode == 0, pruned.stdout + pruned.stderr
    assert "deleted Docs MCP tools" in pruned.stdout
    assert [monitor["name"] for monitor in json.loads(listed.stdout)] == ["Docs MCP"]
