"""Certificate changes: the recorder compares each result's certificate with its region's last one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from monitors.models import CertificateChange, Healthcheck, RegionState
from monitors.services import RunResult, healthcheck_create, outcomes_record
from probes.checks.http import HTTP
from probes.types import FailureKind, ProbeOutcome, Status, Timings

SLOT = datetime(2026, 11, 29, 12, 0, 7, tzinfo=UTC)
REGIONS = ("eu-west", "us-east")


def certificate(serial: str) -> dict[str, object]:
    return {
        "subject": "CN=site.example",
        "issuer": f"CN=Issuer {serial}",
        "not_after": f"2027-0{len(serial)}-01T00:00:00+00:00",
        "days_left": 90,
        "serial": serial,
        "sha256": f"SHA-{serial}",
    }


def run(serial: str | None) -> ProbeOutcome:
    """Return an up run that saw certificate ``serial``; None: a refused connection, no certificate."""
    if serial is None:
        return ProbeOutcome(
            status=Status.DOWN, kind=FailureKind.CONNECT, reason="Refused", timings=Timings(total_ms=1.0)
        )
    return ProbeOutcome(
        status=Status.UP,
        http_status=200,
        timings=Timings(total_ms=50.0),
        details={"certificate": certificate(serial)},
    )


@pytest.fixture
def make(org, now):
    def make() -> Healthcheck:
        return healthcheck_create(
            organization=org,
            name="site",
            check_type=HTTP,
            config={"uri": "https://site.example/"},
            now=now,
            region_slugs=REGIONS,
            rules={"recheck_count": 0},
        )

    return make


def record(checks: list[Healthcheck], region: str, serial: str | None, minute: int) -> None:
    slot = SLOT + timedelta(minutes=minute)
    outcomes_record(
        region_slug=region,
        results=[RunResult(check.id, slot, 0, run(serial), slot + timedelta(seconds=1)) for check in checks],
        now=slot + timedelta(seconds=2),
    )


@pytest.mark.parametrize(
    ("serials", "changes"),
    [
        (["a"], []),  # the first certificate a region sees is no change
        (["a", "a", "a"], []),
        (["a", "b"], [("a", "b")]),
        (["a", None, "a"], []),  # a run without a certificate forgets nothing
        (["a", None, "b"], [("a", "b")]),
        (["a", "b", "a"], [("a", "b"), ("b", "a")]),
    ],
)
def test_a_region_records_each_replacement_of_its_certificate(make, serials, changes):
    healthcheck = make()

    for minute, serial in enumerate(serials):
        record([healthcheck], "eu-west", serial, minute)

    rows = list(CertificateChange.objects.order_by("at").values_list("previous_serial", "serial"))
    assert rows == changes


def test_a_change_keeps_the_old_and_new_serial_issuer_and_end(make):
    healthcheck = make()
    record([healthcheck], "eu-west", "a", 0)

    record([healthcheck], "eu-west", "bb", 1)

    change = CertificateChange.objects.get()
    assert (change.healthcheck_id, change.region.slug, change.at) == (
        healthcheck.id,
        "eu-west",
        SLOT + timedelta(minutes=1, seconds=2),
    )
    assert (change.previous_serial, change.previous_issuer, change.previous_sha256) == (
        "a",
        "CN=Issuer a",
        "SHA-a",
    )
    assert (change.serial, change.issuer, change.sha256) == ("bb", "CN=Issuer bb", "SHA-bb")
    assert (change.previous_not_after, change.not_after) == (
        datetime(2027, 1, 1, tzinfo=UTC),
        datetime(2027, 2, 1, tzinfo=UTC),
    )


def test_regions_are_compared_each_with_its_own_last_certificate(make):
    healthcheck = make()
    record([healthcheck], "eu-west", "a", 0)

    record([healthcheck], "us-east", "b", 0)  # another edge, another certificate: no change

    assert not CertificateChange.objects.exists()
    assert RegionState.objects.get(region__slug="us-east").certificate["serial"] == "b"


def test_a_batch_reads_the_last_certificates_without_a_query_per_result(make):
    few, many = [make() for _ in range(2)], [make() for _ in range(40)]
    record(few + many, "eu-west", "a", 0)

    with CaptureQueriesContext(connection) as small:
        record(few, "eu-west", "b", 1)
    with CaptureQueriesContext(connection) as large:
        record(many, "eu-west", "b", 1)

    assert CertificateChange.objects.count() == len(few) + len(many)
    # The region states (the last certificates) are read once and written once, and the changes
    # inserted once, whatever the batch's size (SQLite may split the results' insert: not counted).
    assert (
        _touching(large)
        == _touching(small)
        == [
            ("SELECT", "monitors_regionstate"),
            ("INSERT", "monitors_regionstate"),
            ("INSERT", "monitors_certificatechange"),
        ]
    )


def _touching(queries: CaptureQueriesContext) -> list[tuple[str, str]]:
    tables = ("monitors_regionstate", "monitors_certificatechange")
    return [
        (query["sql"].split()[0], table)
        for query in queries.captured_queries
        for table in tables
        if f'"{table}"' in query["sql"][:60]  # the table a SELECT reads or an INSERT writes
    ]
