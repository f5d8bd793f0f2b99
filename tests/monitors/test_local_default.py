"""The embedded default is safe to expose (issue 8, class 9).

Without any environment, settings run with DEBUG off and with secrets generated into the var
dir (mode 0600, kept across starts), never a key written in the source; the per-key rate limit
is counted in files under the var dir, so every gunicorn process shares one count.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from tests.clock import clock_environment
from uptimy import local_secrets

ROOT = Path(__file__).resolve().parents[2]

SETTINGS_PROBE = """
import json
import django
from django.conf import settings

django.setup()
print(json.dumps({
    "DEBUG": settings.DEBUG,
    "SECRET_KEY": settings.SECRET_KEY,
    "UPTIMY_SECRETS_KEY": settings.UPTIMY_SECRETS_KEY,
    "cache": settings.CACHES["default"],
    "finders": settings.WHITENOISE_USE_FINDERS,
    "secrets_file": str(settings.LOCAL_SECRETS_FILE),
}))
"""


def bare_env(var_dir: Path, **extra: str) -> dict[str, str]:
    """Return an environment with none of Uptimy's settings: what `make run` sees on a fresh machine."""
    keep = {name: os.environ[name] for name in ("PATH", "HOME", "LANG") if name in os.environ}
    return {
        **keep,
        **clock_environment(),
        "DJANGO_SETTINGS_MODULE": "uptimy.settings",
        "UPTIMY_VAR_DIR": str(var_dir),
        **extra,
    }


def python(code: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def settings_of(env: dict[str, str]) -> dict:
    done = python(SETTINGS_PROBE, env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_without_environment_debug_is_off_and_the_secrets_are_generated_into_the_var_dir(tmp_path):
    seen = settings_of(bare_env(tmp_path))

    assert seen["DEBUG"] is False
    stored = local_secrets.read_secrets(tmp_path / "secrets.env")
    assert seen["SECRET_KEY"] == stored["SECRET_KEY"]
    assert seen["UPTIMY_SECRETS_KEY"] == stored["UPTIMY_SECRETS_KEY"]
    assert len(seen["SECRET_KEY"]) >= 50
    assert seen["SECRET_KEY"] != seen["UPTIMY_SECRETS_KEY"]
    assert stat.S_IMODE((tmp_path / "secrets.env").stat().st_mode) == 0o600
    assert seen["secrets_file"] == str(tmp_path / "secrets.env")


def test_no_key_written_in_the_source_is_used(tmp_path):
    first = settings_of(bare_env(tmp_path / "one"))
    other = settings_of(bare_env(tmp_path / "two"))

    assert first["SECRET_KEY"] != other["SECRET_KEY"]
    assert first["UPTIMY_SECRETS_KEY"] != other["UPTIMY_SECRETS_KEY"]
    source = (ROOT / "uptimy" / "settings.py").read_text()
    assert "dev-only" not in source


def test_the_generated_secrets_are_reused_on_later_starts(tmp_path):
    first = settings_of(bare_env(tmp_path))
    again = settings_of(bare_env(tmp_path))

    assert (again["SECRET_KEY"], again["UPTIMY_SECRETS_KEY"]) == (
        first["SECRET_KEY"],
        first["UPTIMY_SECRETS_KEY"],
    )


def test_debug_on_asked_for_still_generates_no_key_in_the_source(tmp_path):
    seen = settings_of(bare_env(tmp_path, DEBUG="1"))

    assert seen["DEBUG"] is True
    assert seen["SECRET_KEY"] == local_secrets.read_secrets(tmp_path / "secrets.env")["SECRET_KEY"]


def test_keys_in_the_environment_win_and_nothing_is_written(tmp_path):
    seen = settings_of(bare_env(tmp_path, SECRET_KEY="from-env", UPTIMY_SECRETS_KEY="also-from-env"))

    assert (seen["SECRET_KEY"], seen["UPTIMY_SECRETS_KEY"]) == ("from-env", "also-from-env")
    assert not (tmp_path / "secrets.env").exists()


def test_with_a_database_url_the_keys_must_come_from_the_environment(tmp_path):
    env = bare_env(tmp_path, DATABASE_URL="postgres://nobody@127.0.0.1:1/none")

    done = python(SETTINGS_PROBE, env)

    assert done.returncode != 0
    assert "Set SECRET_KEY" in done.stderr
    assert not (tmp_path / "secrets.env").exists()


def test_an_incomplete_secrets_file_is_completed_keeping_its_key(tmp_path):
    (tmp_path / "secrets.env").write_text("UPTIMY_SECRETS_KEY=kept-from-before\n")

    seen = settings_of(bare_env(tmp_path))

    assert seen["UPTIMY_SECRETS_KEY"] == "kept-from-before"
    assert seen["SECRET_KEY"]


def test_processes_starting_at_once_agree_on_one_set_of_secrets(tmp_path):
    code = "from pathlib import Path; from uptimy.local_secrets import local_secrets; import json, sys; "
    code += "print(json.dumps(local_secrets(Path(sys.argv[1]))))"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE, text=True
        )
        for _ in range(6)
    ]
    answers = [json.loads(process.communicate(timeout=60)[0]) for process in processes]

    assert all(answer == answers[0] for answer in answers)
    assert [path.name for path in tmp_path.iterdir()] == ["secrets.env"]


def test_static_files_are_served_without_debug(tmp_path):
    seen = settings_of(bare_env(tmp_path))

    assert seen["finders"] is True


def test_without_redis_the_cache_is_files_in_the_var_dir(tmp_path):
    seen = settings_of(bare_env(tmp_path))

    assert seen["cache"]["BACKEND"] == "django.core.cache.backends.filebased.FileBasedCache"
    assert seen["cache"]["LOCATION"] == str(tmp_path / "cache")


THROTTLE = textwrap.dedent(
    """
    import json, sys, uuid
    import django
    django.setup()
    from monitors.api.throttling import ApiKeyRateThrottle
    from monitors.models import ApiKey

    class Request:
        auth = ApiKey(public_id=uuid.UUID(sys.argv[1]))

    print(json.dumps([ApiKeyRateThrottle().allow_request(Request(), None) for _ in range(int(sys.argv[2]))]))
    """
)


def test_two_processes_share_one_rate_limit_count_without_redis(tmp_path):
    env = bare_env(tmp_path, UPTIMY_API_RATE="3/min")
    key = "6f2c1c8e-0b7f-4c55-9d38-2b9a4e8f6a01"

    def calls(count: int) -> list[bool]:
        done = python(THROTTLE, env, key, str(count))
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    assert calls(2) == [True, True]
    assert calls(2) == [True, False]  # another process: the third call passes, the fourth does not


CONCURRENT = textwrap.dedent(
    """
    import json, sys, time, uuid
    import django
    django.setup()
    from monitors.api.throttling import ApiKeyRateThrottle
    from monitors.models import ApiKey

    class Request:
        auth = ApiKey(public_id=uuid.UUID(sys.argv[1]))

    time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
    print(sum(ApiKeyRateThrottle().allow_request(Request(), None) for _ in range(100)))
    """
)


@pytest.mark.parametrize("backend", ["files", "redis"])
def test_calls_made_at_once_from_several_processes_never_pass_the_rate(tmp_path, request, backend):
    env = bare_env(tmp_path, UPTIMY_API_RATE="150/min")
    if backend == "redis":
        env["REDIS_URL"] = request.getfixturevalue("redis_url")
    settings_of(env)  # generate the secrets once, before the processes race
    # Keep clear of a minute's edge, where the count moves to the next window.
    while time.time() % 60 > 45:
        time.sleep(1)
    key, start_at = str(uuid.uuid4()), time.time() + 4
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT, key, str(start_at)],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    allowed = [int(process.communicate(timeout=60)[0]) for process in processes]

    assert sum(allowed) == 150, allowed


def test_make_run_does_not_turn_debug_on():
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0]

    assert "DEBUG" not in recipe


@pytest.mark.parametrize(("given", "expected"), [(None, "false"), ("true", "true")])
def test_serve_lets_cookies_come_back_over_its_plain_http_unless_told(monkeypatch, given, expected):
    from monitors.management.commands import serve

    if given is None:
        monkeypatch.delenv("SECURE_COOKIES", raising=False)
    else:
        monkeypatch.setenv("SECURE_COOKIES", given)
    added = {}

    class Manager:
        returncode = 0

        def add_process(self, name, command, env):
            added[name] = env

        def loop(self):
            pass

    monkeypatch.setattr(serve, "Manager", Manager)
    monkeypatch.setattr(serve, "call_command", lambda *args, **kwargs: None)
    monkeypatch.setattr(
        serve, "demo_bootstrap", lambda: {"organization": "demo", "password": None, "api_key": None}
    )
    monkeypatch.setattr(serve.Command, "_announce_demo_parts", lambda *args, **kwargs: None)
    monkeypatch.setattr(serve, "regions_enabled", lambda: [])

    with pytest.raises(SystemExit):
        serve.Command().handle(host="127.0.0.1", port=1)

    assert {env["SECURE_COOKIES"] for env in added.values()} == {expected}


@pytest.mark.parametrize(
    ("argv", "keyless"),
    [
        (["manage.py", "mcpcheck", "https://example.com/mcp"], True),
        (["/srv/uptimy/manage.py", "mcpcheck"], True),
        (["manage.py", "serve"], False),
        (["manage.py", "createapikey", "demo"], False),
        (["manage.py"], False),
        (["gunicorn", "mcpcheck"], False),
        (["-c", "mcpcheck"], False),
    ],
)
def test_only_manage_py_mcpcheck_runs_without_keys(argv, keyless):
    assert local_secrets.keyless_command(argv) is keyless


MCPCHECK = ["manage.py", "mcpcheck", "http://127.0.0.1:1/mcp", "--json"]


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize("database_url", ["", "postgres://nobody@127.0.0.1:1/none"])
def test_mcpcheck_needs_no_key_and_writes_none(tmp_path, database_url):
    env = bare_env(tmp_path, **({"DATABASE_URL": database_url} if database_url else {}))

    done = manage(env, *MCPCHECK)

    # Down (a loopback target is refused without UPTIMY_ALLOW_PRIVATE_TARGETS), not a crash.
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["kind"] == "blocked_address"
    assert not (tmp_path / "secrets.env").exists()


def test_beside_a_database_url_every_other_command_still_refuses_to_start_without_keys(tmp_path):
    env = bare_env(tmp_path, DATABASE_URL="postgres://nobody@127.0.0.1:1/none")

    done = manage(env, "manage.py", "createapikey", "demo")

    assert done.returncode != 0
    assert "Set SECRET_KEY" in done.stderr


KEYLESS_USE = """
import sys
sys.argv = ["manage.py", "mcpcheck"]
import django
django.setup()
from django.conf import settings
from monitors.secrets import encrypt_headers

failures = []
for use in (lambda: settings.SECRET_KEY, lambda: encrypt_headers({"X-Key": "value"})):
    try:
        use()
    except Exception as exc:
        failures.append(type(exc).__name__)
print(failures)
"""


def test_a_keyless_command_that_used_a_key_would_fail_not_use_an_empty_one(tmp_path):
    done = python(KEYLESS_USE, bare_env(tmp_path))

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['ImproperlyConfigured', 'ValueError']"
