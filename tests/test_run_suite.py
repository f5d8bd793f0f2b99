"""How `make test` splits the suite across cores, and gives each worker a Redis database of its own."""

from __future__ import annotations

import pytest

from tests.run_suite import MAX_WORKERS, WorkerCountError, worker_options
from tests.xdist_services import WorkerDatabaseError, worker_redis_url

XDIST = ["-p", "tests.xdist_services", "-n"]


@pytest.mark.parametrize(
    ("cores", "asked", "options"),
    [
        (1, "", []),
        (2, "", [*XDIST, "2"]),
        (64, "", [*XDIST, str(MAX_WORKERS)]),
        (2, "1", []),
        (2, "3", [*XDIST, "3"]),
        (2, " 2 ", [*XDIST, "2"]),
    ],
)
def test_the_rest_of_the_suite_runs_on_as_many_workers_as_cores_up_to_the_cap(cores, asked, options):
    assert worker_options(cores, asked) == options


@pytest.mark.parametrize("asked", ["0", "-1", "two", "1.5"])
def test_a_worker_count_that_is_not_a_whole_number_of_at_least_one_is_refused(asked):
    with pytest.raises(WorkerCountError, match="UPTIMY_TEST_WORKERS"):
        worker_options(2, asked)


@pytest.mark.parametrize(
    ("url", "worker", "moved"),
    [
        ("redis://127.0.0.1:6379/5", "gw0", "redis://127.0.0.1:6379/6"),
        ("redis://127.0.0.1:6379/5", "gw3", "redis://127.0.0.1:6379/9"),
        ("redis://127.0.0.1:6379", "gw1", "redis://127.0.0.1:6379/2"),
        (
            "redis://:secret@127.0.0.1:6379/0?socket_timeout=5",
            "gw0",
            "redis://:secret@127.0.0.1:6379/1?socket_timeout=5",
        ),
        ("redis://127.0.0.1:6379/5", "", "redis://127.0.0.1:6379/5"),  # not under xdist
        ("", "gw0", ""),  # no Redis: the embedded default
    ],
)
def test_each_worker_moves_redis_up_to_a_database_of_its_own(url, worker, moved):
    assert worker_redis_url(url, worker) == moved


def test_a_worker_past_the_servers_last_database_is_an_error_naming_it():
    with pytest.raises(WorkerDatabaseError, match="database 16"):
        worker_redis_url("redis://127.0.0.1:6379/14", "gw1")
