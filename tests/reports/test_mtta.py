"""MTTA: the mean wait from an alert incident's opening to its acknowledgement, read from alerts through monitors."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest

from alerts.models import Incident
from monitors.signals import acknowledgements_asked
from monitors.uptime import Acknowledged, acknowledgements
from tests.reports.conftest import OCTOBER

URL = "/api/v1/reports/"
MONTH = {"month": "2026-10", "tz": "UTC"}
NOVEMBER = datetime(2026, 11, 1, tzinfo=UTC)


def at(day: int, minute: int = 0, second: int = 0, *, month: int = 10) -> datetime:
    return datetime(2026, month, day, 8, minute, second, tzinfo=UTC)


@pytest.mark.parametrize(
    ("incidents", "count", "mtta"),
    [
        ([], 0, None),  # none acknowledged: no MTTA, never 0
        ([(at(3), at(3, 4))], 1, 240),
        ([(at(3), at(3, 4)), (at(9), at(9, 1, 1))], 2, 150),  # (240 + 61) / 2 = 150.5, floored
        ([(at(3), at(3, 0, 7)), (at(3, 30), at(3, 30, 8))], 2, 7),  # 7.5 floored
        ([(at(28, month=9), at(3))], 0, None),  # opened in September: September's, wherever acknowledged
        ([(at(31, 59), at(1, month=11))], 1, 86_400 - 59 * 60),  # opened in October, acknowledged in November
        ([(at(2, month=11), at(2, 1, month=11))], 0, None),  # opened after the period
        ([(at(3, 5), at(3, 4))], 1, 0),  # acknowledged "before" it opened (clock skew): no negative wait
    ],
)
def test_mtta_is_the_floored_mean_wait_of_the_incidents_opened_in_the_period(incidents, count, mtta):
    found = acknowledgements(
        start=OCTOBER, end=NOVEMBER, incidents=[Acknowledged(1, opened, acked) for opened, acked in incidents]
    )

    assert (found.count, found.mtta_seconds) == (count, mtta)


def incident(check, opened: datetime, acknowledged: datetime | None) -> Incident:
    return Incident.objects.create(
        organization=check.organization,
        healthcheck=check,
        healthcheck_public_id=check.public_id,
        healthcheck_name=check.name,
        severity="critical",
        opened_at=opened,
        acknowledged_at=acknowledged,
        acknowledged_by="ops@acme.test" if acknowledged else "",
        resolved_at=opened + timedelta(hours=1),
        resolution="recovered",
    )


@pytest.fixture
def acknowledged(history):
    """Two acknowledged incidents of API in October, one of Docs, one unacknowledged; one of API in September."""
    incident(history.api, at(10), at(10, 2))  # 120 s
    incident(history.api, at(20), at(20, 10))  # 600 s
    incident(history.api, at(21), None)  # never acknowledged: not in MTTA
    incident(history.docs, at(22), at(22, 1))  # 60 s
    incident(history.api, at(15, month=9), at(15, 5, month=9))  # September: 300 s
    return history


def report(client, **params):
    answer = client.get(URL, {**MONTH, **params})
    assert answer.status_code == 200, answer.content
    return answer


def checks_by_name(data):
    return {check["name"]: check for check in data["healthchecks"]}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("scope", "count", "mtta", "previous_mtta", "change"),
    [
        ("API", 2, 360, 300, 60),
        ("Docs", 1, 60, None, None),  # nothing acknowledged in September: no change to state
        ("summary", 3, 260, 300, -40),  # the mean over all three waits, not the mean of the checks' means
    ],
)
def test_the_report_s_mtta_and_its_change_since_the_previous_period(
    client, acknowledged, scope, count, mtta, previous_mtta, change
):
    data = report(client).json()
    figures = data["summary"] if scope == "summary" else checks_by_name(data)[scope]

    assert (figures["availability"]["acknowledged_incidents"], figures["availability"]["mtta_seconds"]) == (
        count,
        mtta,
    )
    assert figures["previous"]["mtta_seconds"] == previous_mtta
    assert figures["change"]["mtta_seconds"] == change


@pytest.mark.django_db
def test_without_acknowledged_incidents_mtta_is_absent_not_zero(client, history):
    data = report(client).json()

    assert data["summary"]["availability"]["acknowledged_incidents"] == 0
    assert data["summary"]["availability"]["mtta_seconds"] is None
    assert "no acknowledged incidents" in report(client, format="html").content.decode()


@pytest.mark.django_db
def test_another_organization_s_incidents_are_not_in_its_report(other_client, acknowledged):
    assert report(other_client).json()["summary"]["availability"]["mtta_seconds"] is None


@pytest.mark.django_db
def test_the_csv_carries_mtta_and_leaves_it_empty_when_nothing_was_acknowledged(client, acknowledged):
    rows = list(csv.DictReader(io.StringIO(report(client, format="csv").content.decode())))
    by_check = {row["healthcheck"]: row for row in rows if row["scope"] != "region"}

    assert (by_check["API"]["acknowledged_incidents"], by_check["API"]["mtta_seconds"]) == ("2", "360")
    assert by_check["API"]["previous_mtta_seconds"] == "300"
    assert (by_check["Docs"]["mtta_seconds"], by_check["Docs"]["previous_mtta_seconds"]) == ("60", "")
    assert by_check["acme"]["mtta_seconds"] == "260"


@pytest.mark.django_db
def test_the_html_and_pdf_show_mtta_as_a_duration(client, acknowledged):
    html = report(client, format="html").content.decode()

    assert "MTTA" in html
    assert "4 min 20 s (5 min 00 s)" in html  # this period's, then the previous one's
    assert "6 min 00 s" in html  # API's own


@pytest.mark.django_db
def test_mtta_is_unknown_when_no_app_keeps_acknowledgements(client, acknowledged):
    acknowledgements_asked.disconnect(dispatch_uid="alerts.answer_acknowledgements")
    try:
        data = report(client).json()
    finally:
        from alerts.receivers import answer_acknowledgements

        acknowledgements_asked.connect(answer_acknowledgements, dispatch_uid="alerts.answer_acknowledgements")

    assert data["summary"]["availability"]["mtta_seconds"] is None
    assert any("MTTA is not reported" in note for note in data["notes"])
