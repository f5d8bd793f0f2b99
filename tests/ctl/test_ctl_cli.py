"""The command line without a server: what is refused before any request, and the exit codes."""

from __future__ import annotations

import json

import pytest

from uptimy.ctl.cli import main


@pytest.fixture(autouse=True)
def _no_server(monkeypatch, tmp_path):
    """Point at a port nothing listens on, with no key and no login: a request would fail loudly."""
    monkeypatch.setenv("UPTIMY_API_URL", "http://127.0.0.1:9")
    monkeypatch.delenv("UPTIMY_API_KEY", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("CI", raising=False)


def test_version_is_1_11_0(capsys):
    assert main(["version"]) == 0
    assert capsys.readouterr().out.startswith("uptimyctl 1.11.0 (uptimy package ")


def test_a_bad_file_is_refused_as_json_for_scripts(tmp_path, capsys):
    (tmp_path / "m.yaml").write_text(
        "monitors:\n  - name: A\n    type: ftp\n    target: https://a.example/\n"
    )

    code = main(["apply", "-f", str(tmp_path / "m.yaml"), "--output", "json"])

    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert report["errors"] == [
        f'{tmp_path / "m.yaml"}:3:5: monitors[0].type: unknown type \'ftp\'; use 1 or "http", 7 or "heartbeat", 13 or "mcp"'
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["apply"], "the following arguments are required: -f/--file"),
        (["apply", "-f", "/nonexistent/monitors.yaml"], "/nonexistent/monitors.yaml: no such file"),
        (["get", "checks"], "invalid choice: 'checks'"),
        (["status"], "no API key: set UPTIMY_API_KEY, or run `uptimyctl login`"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_a_usage_error_exits_2_saying_what_is_wrong(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_an_unreachable_api_fails_naming_it(monkeypatch, capsys):
    monkeypatch.setenv("UPTIMY_API_KEY", "upt_whatever")

    assert main(["status"]) == 1
    assert "uptimyctl: http://127.0.0.1:9: ConnectError" in capsys.readouterr().err


def test_login_reads_the_key_from_standard_input_only(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", _EmptyPipe())

    assert main(["login"]) == 2
    assert "no API key given on standard input" in capsys.readouterr().err


class _EmptyPipe:
    def isatty(self) -> bool:
        return False

    def readline(self) -> str:
        return ""
