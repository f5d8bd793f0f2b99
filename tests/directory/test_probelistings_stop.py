"""``manage.py probelistings`` as real processes: a SIGTERM mid-round releases the round, a SIGKILLed holder's lease expires.

Each process is started on a var dir of its own (its SQLite database and the file cache the
lease lives in, shared by every process started on it); the listings point at a loopback site
that holds every probe's POST at its gate, so a round is caught mid-probe.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.directory.probe_support import Site, serve
from tests.monitors.test_local_default import ROOT, bare_env, python

# The rounds' tick, which is also how long an unrenewed lease lives.
TICK_SECONDS = 2

SETUP = """
import sys
import django

django.setup()
from django.core.cache import cache
from django.utils import timezone
from directory.models import Listing, ListingRemote
from directory.sync import PROBE_ROUND_KEY

Listing.objects.all().delete()
cache.delete(PROBE_ROUND_KEY)
now = timezone.now()
for n, url in enumerate(sys.argv[1:]):
    listing = Listing.objects.create(name=f"com.example/s{n}", version="1", is_latest=True, updated_at=now, synced_at=now)
    ListingRemote.objects.create(listing=listing, position=0, transport="streamable-http", url=url)
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    """Return the environment of a migrated var dir whose rounds tick every TICK_SECONDS."""
    var = tmp_path_factory.mktemp("probelistings")
    environment = bare_env(
        var,
        UPTIMY_ALLOW_PRIVATE_TARGETS="on",
        UPTIMY_DIRECTORY_PROBE_TICK=str(TICK_SECONDS),
        UPTIMY_DIRECTORY_PROBE_TIMEOUT="20",
    )
    done = manage(environment, "migrate", "--no-input", timeout=300)
    assert done.returncode == 0, done.stderr
    return environment


def manage(env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(Path(ROOT) / "manage.py"), *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def start(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(Path(ROOT) / "manage.py"), "probelistings", *args],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def site(env) -> Iterator[tuple[Site, list[str]]]:
    """Serve a site that holds every POST; list three due listings on it."""
    held = Site()
    held.gate.closed = True
    with serve(held, "127.0.0.1") as (url,):
        urls = [f"{url}/mcp{n}" for n in range(3)]
        done = python(SETUP, env, *urls)
        assert done.returncode == 0, done.stderr
        yield held, urls


def mid_round(site: Site, probes: int) -> None:
    """Wait until ``probes`` probes of the round are held at the site's gate."""
    site.gate.wait_for(lambda gate: sum(gate.arrived.values()) >= probes)


def test_a_sigterm_mid_round_releases_the_round_and_gives_its_listings_back(env, site):
    held, _ = site
    holder = start(env, "--limit", "2")
    mid_round(held, 2)

    holder.send_signal(signal.SIGTERM)
    out, err = holder.communicate(timeout=30)
    held.gate.open()
    again = manage(env, "probelistings", "--once")

    assert holder.returncode == 0, err
    assert out.splitlines()[-1] == "Stopped: 2 claimed listings left unprobed are due again"
    assert again.returncode == 0, again.stderr
    # The two given back and the third, never claimed.
    assert again.stdout.startswith("3 listings probed"), again.stdout


def test_once_exits_non_zero_while_a_live_round_holds_the_probes(env, site):
    held, _ = site
    holder = start(env, "--limit", "2")
    try:
        mid_round(held, 2)

        refused = manage(env, "probelistings", "--once")
    finally:
        holder.kill()
        holder.communicate(timeout=30)

    assert refused.returncode == 1
    assert "Another probe round is still running; this one probed nothing" in refused.stderr
    assert "probed (" not in refused.stdout


def test_a_sigkilled_holders_lease_expires_within_a_tick(env, site):
    held, _ = site
    holder = start(env, "--limit", "2")
    mid_round(held, 2)
    # Held, and renewed, while its holder lives.
    assert manage(env, "probelistings", "--once").returncode == 1

    holder.kill()
    holder.communicate(timeout=30)
    killed = time.monotonic()
    held.gate.open()
    while (attempt := manage(env, "probelistings", "--once")).returncode == 1:
        assert time.monotonic() - killed < 10 * TICK_SECONDS, "the dead holder's lease never expired"

    assert attempt.returncode == 0, attempt.stderr
    # The listing the dead round never claimed; its two claims wait for their next slot.
    assert attempt.stdout.startswith("1 listing probed"), attempt.stdout
    assert time.monotonic() - killed < 10 * TICK_SECONDS
