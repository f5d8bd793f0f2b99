"""Pin the deployment files: Dockerfile, docker-compose.yml, .ci/run and the lock files.

No Docker engine runs on the development and CI machines, so the image and the stack are
never built here; these tests hold the parts of them that can be checked by reading, so that
a change to regions, queues, entry points or dependencies cannot quietly leave the deployment
behind.
"""

import os
import re
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
APP_IMAGE = "uptimy:local"
# The regions the data migration seeds (issue 2); the DB-backed test below checks the seed itself.
REGIONS = ("eu-west", "us-east", "ap-southeast")
REQUIRED_ENV = ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "UPTIMY_SECRETS_KEY", "ALLOWED_HOSTS")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


@pytest.fixture(scope="module")
def dockerfile() -> list[str]:
    """Return the Dockerfile's instructions, continuation lines joined and comments dropped."""
    instructions: list[str] = []
    pending = ""
    for raw in (ROOT / "Dockerfile").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        instructions.append(pending + line)
        pending = ""
    return instructions


def _command(service: dict) -> list[str]:
    command = service.get("command") or []
    return command.split() if isinstance(command, str) else [str(part) for part in command]


def _worker_queues(compose: dict) -> dict[str, str]:
    """Map each queue consumed by a celery worker service to that service's name."""
    queues: dict[str, str] = {}
    for name, service in compose["services"].items():
        command = _command(service)
        if "celery" not in command or "worker" not in command:
            continue
        for flag in ("-Q", "--queues"):
            if flag in command:
                for queue in command[command.index(flag) + 1].split(","):
                    queues[queue] = name
    return queues


def _app_services(compose: dict) -> dict[str, dict]:
    return {name: s for name, s in compose["services"].items() if s.get("image") == APP_IMAGE}


def test_compose_runs_a_worker_per_region_queue_and_one_for_default(compose):
    queues = _worker_queues(compose)

    for slug in REGIONS:
        assert f"probes.{slug}" in queues, f"no worker consumes probes.{slug}"
    assert "default" in queues


@pytest.mark.django_db
def test_compose_runs_a_worker_for_every_seeded_region(compose):
    from monitors.models import Region

    seeded = {region.queue for region in Region.objects.all()}

    assert seeded, "the data migration seeds no regions"
    assert seeded <= set(_worker_queues(compose)), "a seeded region's queue has no worker"


def test_compose_has_web_beat_and_a_migration_that_gates_them(compose):
    services = compose["services"]
    beats = [name for name, s in services.items() if "beat" in _command(s)]

    # The image's default command is gunicorn; web must not replace it with something else.
    assert _command(services["web"]) == [] or "gunicorn" in _command(services["web"])
    assert beats == ["beat"], "exactly one celery beat"
    assert "migrate" in _command(services["migrate"])
    for name, service in _app_services(compose).items():
        if name == "migrate":
            continue
        condition = service["depends_on"]["migrate"]["condition"]
        assert condition == "service_completed_successfully", name


def test_compose_gives_every_app_service_the_documented_env_without_default_secrets(compose):
    services = _app_services(compose)

    assert {"web", "beat", "migrate"} <= set(services)
    for name, service in services.items():
        env = service["environment"]
        assert set(REQUIRED_ENV) <= set(env), name
        # A production-like stack must refuse to start rather than run on a guessable key.
        for secret in ("SECRET_KEY", "UPTIMY_SECRETS_KEY"):
            assert re.fullmatch(rf"\$\{{{secret}:\?[^}}]*\}}", env[secret]), (name, secret)


def test_compose_backing_services_and_workers_have_healthchecks(compose):
    services = compose["services"]

    assert services["postgres"]["image"].startswith("postgres:16")
    assert services["redis"]["image"].startswith("redis:7")
    for name in ("postgres", "redis", *_worker_queues(compose).values()):
        assert services[name]["healthcheck"]["test"], name


def test_dockerfile_is_multi_stage_and_builds_no_tools_into_the_runtime(dockerfile):
    froms = [i for i in dockerfile if i.upper().startswith("FROM ")]
    runtime_start = dockerfile.index(froms[-1])
    runtime = dockerfile[runtime_start:]

    assert len(froms) >= 2
    assert any(i.startswith("COPY --from=") for i in runtime)
    assert not any(re.search(r"\b(build-essential|gcc|apt-get install)\b", i) for i in runtime)
    assert any("python:3.11-slim" in i for i in dockerfile if i.startswith(("ARG", "FROM")))


def test_dockerfile_runs_as_a_non_root_user(dockerfile):
    users = [i.split(None, 1)[1] for i in dockerfile if i.upper().startswith("USER ")]

    assert users, "no USER instruction: the image would run as root"
    assert users[-1].split(":")[0] not in {"root", "0"}


def test_dockerfile_serves_gunicorn_and_checks_healthz(dockerfile):
    cmd = next(i for i in reversed(dockerfile) if i.upper().startswith("CMD "))
    healthcheck = next(i for i in dockerfile if i.upper().startswith("HEALTHCHECK "))

    assert "gunicorn" in cmd
    assert "uptimy.asgi:application" in cmd
    assert "uvicorn_worker.UvicornWorker" in cmd
    assert "0.0.0.0:8000" in cmd
    assert "/healthz" in healthcheck
    assert any("collectstatic" in i for i in dockerfile if i.startswith("RUN "))


def test_ci_run_is_executable_and_starts_postgres_and_redis():
    script = ROOT / ".ci" / "run"
    text = script.read_text()

    assert os.access(script, os.X_OK)
    assert text.startswith("#!/usr/bin/env bash")
    assert "set -euo pipefail" in text
    assert "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start" in text
    assert (
        'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no '
        "--dir /var/lib/redis --logfile /var/log/redis/ci.log"
    ) in text
    assert "make test" in text
    assert "make run" in text


def _ci_stage(text: str, name: str) -> str:
    """Return the body of one .ci/run stage, from its stage_begin to its stage_end."""
    start = text.index(f'stage_begin "{name}"')
    return text[start : text.index("\nstage_end", start)]


def test_ci_run_runs_the_whole_suite_on_postgresql_shifted_beside_the_readme_commands():
    text = (ROOT / ".ci" / "run").read_text()
    stages = ("make test + README commands", "make run + /healthz + a check")
    starts = [text.index(f'stage_begin "{name}"') for name in stages]
    both = _ci_stage(text, "make test + README commands")

    assert starts == sorted(starts), "the two suites come before make run"
    # The README's commands start first, in the background, in an environment the harness
    # builds from nothing (tests/readme/run_readme.py): the suite's run on the embedded default.
    readme_start = both.index("python3 tests/readme/run_readme.py")
    assert readme_start < both.index("export DATABASE_URL=")
    assert re.search(r"^setsid bash -c 'exec timeout .* python3 tests/readme/run_readme.py' ", both, re.M)
    # `make test` runs against PostgreSQL and Redis with both REQUIRE switches.
    assert "export REDIS_URL=" in both
    assert "export UPTIMY_REQUIRE_SERVICES=1" in both
    assert re.search(r"^timeout .* make test CLOCK_OFFSET=\S+ </dev/null ", both, re.M)
    # That run is on a clock ahead (tests/clock.py); the README's, a new user's, on today's.
    assert re.search(r'^CLOCK_OFFSET_AHEAD="\$\{CI_CLOCK_OFFSET:-\d+d\}"$', text, re.M)
    # Both must pass: each failure fails the stage, and a failing make test stops the harness.
    assert "test_rc != 0" in both
    assert "readme_rc != 0" in both
    assert 'wait "$README_PID"' in both
    assert "stop_readme" in text[text.index("cleanup() {") :]


def _lock_pins(name: str) -> dict[str, str]:
    """Map each package pinned in requirements/<name> to its version, asserting it has hashes."""
    text = (ROOT / "requirements" / name).read_text()
    pins = dict(re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+) \\$", text, re.M))
    hashed = re.findall(r"^[A-Za-z0-9][A-Za-z0-9._-]*==\S+ \\\n    --hash=sha256:[0-9a-f]{64}", text, re.M)
    assert pins, f"requirements/{name} pins nothing"
    assert len(hashed) == len(pins), f"requirements/{name} has a pin without hashes: run make lock"
    return {canonicalize_name(package): version for package, version in pins.items()}


@pytest.mark.parametrize(("lock", "extras"), [("run.txt", ()), ("dev.txt", ("dev",))])
def test_lock_files_pin_what_pyproject_asks_for(lock, extras):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [Requirement(spec) for spec in project["dependencies"]]
    for extra in extras:
        wanted += [Requirement(spec) for spec in project["optional-dependencies"][extra]]
    pins = _lock_pins(lock)

    stale = [
        str(req)
        for req in wanted
        if canonicalize_name(req.name) not in pins
        or not req.specifier.contains(pins[canonicalize_name(req.name)], prereleases=True)
    ]
    assert not stale, f"requirements/{lock} is behind pyproject.toml for {stale}: run make lock"


def test_run_lock_is_the_dev_lock_minus_the_dev_tools():
    run, dev = _lock_pins("run.txt"), _lock_pins("dev.txt")

    # `make test` installs the dev lock and counts as having installed the run lock too.
    assert {package: dev.get(package) for package in run} == run
    assert not {"pytest", "mypy", "ruff"} & set(run)
    # The MCP SDK runs Uptimy's own MCP server (/mcp): a runtime dependency, with uvicorn's worker.
    assert {"mcp", "uvicorn-worker"} <= set(run)


def test_the_image_installs_the_run_lock_with_hashes(dockerfile):
    installs = [line for line in dockerfile if "pip install" in line]

    assert any("requirements/run.txt" in line for line in dockerfile if line.startswith("COPY"))
    assert installs
    assert all("--require-hashes" in line for line in installs)
