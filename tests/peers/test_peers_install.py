"""Check tests/peers/install: pinned versions, and nothing to do when the peers are in place."""

from __future__ import annotations

import json
import subprocess

import pytest
from peer_support import HERE, NODE22, PEERS_DIR

pytestmark = pytest.mark.peers


def test_package_json_pins_exact_versions_and_lock_agrees():
    package = json.loads((HERE / "package.json").read_text())
    lock = json.loads((HERE / "package-lock.json").read_text())

    assert set(package["dependencies"]) == {
        "@modelcontextprotocol/conformance",
        "@modelcontextprotocol/server-everything",
        "badge-maker",
        "node",
        "statuspage.io",
    }
    for name, version in package["dependencies"].items():
        assert version[0].isdigit(), f"{name} must be pinned exactly, not {version}"
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
    assert package["dependencies"]["node"].startswith("22.")


def test_install_is_a_no_op_when_installed(conformance_cli):
    result = subprocess.run(
        [str(HERE / "install")],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "UPTIMY_PEERS_DIR": str(PEERS_DIR)},
    )

    assert result.returncode == 0, result.stderr
    assert "already installed" in result.stdout
    assert NODE22.exists()
