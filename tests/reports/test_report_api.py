"""GET /api/v1/reports/: the figures, their CSV, HTML and PDF, reproducible; bad input names its field."""

from __future__ import annotations

import csv
import io
import uuid
from datetime import UTC, datetime

import pytest
from pypdf import PdfReader

from monitors import latency
from monitors.models import Rollup
from reports.models import HealthcheckTarget, ReportSettings
from reports.selectors import _merged_here, _merged_in_postgresql

pytestmark = pytest.mark.django_db

URL = "/api/v1/reports/"
OCTOBER = {"month": "2026-10", "tz": "UTC"}


def report(client, **params):
    answer = client.get(URL, params)
    assert answer.status_code == 200, answer.content
    return answer


def checks_by_name(data):
    return {check["name"]: check for check in data["healthchecks"]}


def test_a_month_s_figures_count_downtime_from_the_results_and_leave_maintenance_out(client, history):
    api = checks_by_name(report(client, **OCTOBER).json())["API"]

    assert api["availability"] == {
        "percent": "99.93",  # 1,800 s down of 2,671,200 s counted: 99.9326 %, floored
        "counted_seconds": 31 * 86_400 - 7_200,  # the two hours of maintenance leave the denominator
        "downtime_seconds": 1_200 + 600,  # 20 min from the raw results, 10 min from the changes
        "downtime_minutes": 30,
        "maintenance_seconds": 7_200,
        "incidents": 2,
        "mttr_seconds": 900,
        "longest_incident_seconds": 1_200,
        "acknowledged_incidents": 0,  # no alert incident acknowledged (tests/reports/test_mtta.py)
        "mtta_seconds": None,
    }
    assert api["downtime_bounds_from_status_changes"] == 6


def test_the_previous_period_of_equal_length_is_compared(client, history):
    data = report(client, **OCTOBER).json()
    api = checks_by_name(data)["API"]

    assert data["previous_period"]["start"] == "2026-08-31T00:00:00+00:00"
    assert (api["previous"]["downtime_seconds"], api["previous"]["percent"]) == (300, "99.98")
    assert api["change"] == {
        "percent_points": "-0.05",
        "downtime_seconds": 1_500,
        "incidents": 1,
        "mtta_seconds": None,
    }


def test_unmonitored_time_before_creation_leaves_the_denominator(client, history):
    docs = checks_by_name(report(client, **OCTOBER).json())["Docs"]

    assert docs["availability"]["counted_seconds"] == 15 * 86_400 + 12 * 3600
    assert docs["availability"]["percent"] == "100.00"
    assert docs["previous"]["percent"] is None  # not created yet: no data, never 100 %


def test_the_sla_target_is_the_check_s_own_or_the_organization_s(client, org, history):
    ReportSettings.objects.create(organization=org, sla_target="99.990")
    HealthcheckTarget.objects.create(healthcheck=history.docs, sla_target="99.500")
    data = report(client, **OCTOBER).json()
    checks = checks_by_name(data)

    assert checks["API"]["sla"] == {
        "target": "99.990",
        "met": False,
        "error_budget_seconds": 267,  # 0.01 % of 2,671,200 s
        "error_budget_used_percent": "674.15",
    }
    assert (checks["Docs"]["sla"]["target"], checks["Docs"]["sla"]["met"]) == ("99.500", True)
    assert data["summary"]["sla"]["target"] == "99.990"


def test_response_times_come_from_the_rollups_histograms_per_region(client, history):
    times = checks_by_name(report(client, **OCTOBER).json())["API"]["response_times"]
    expected = latency.histogram_of([100.0] * 90 + [300.0] * 9 + [900.0])

    assert [region["region"] for region in times["regions"]] == ["eu-west", "us-east"]
    eu, us = times["regions"]
    assert (eu["runs"], eu["failures"], eu["run_success_percent"]) == (100, 1, "99.00")
    assert (eu["p50_ms"], eu["p95_ms"], eu["p99_ms"]) == tuple(
        latency.percentile(expected, q) for q in (0.5, 0.95, 0.99)
    )
    # The day's hourly rollup is inside its daily one: read once, from the day.
    assert us["runs"] == 100
    assert times["all_regions"]["runs"] == 200


def test_postgresql_sums_the_histograms_as_python_merges_them(postgres, history):
    rollups = Rollup.objects.filter(start__gte=datetime(2026, 10, 1, tzinfo=UTC))
    counts, merged = _merged_in_postgresql(rollups)

    assert (counts, dict(merged)) == _merged_here(rollups)
    assert merged  # the history has rollups with histograms to sum


def test_one_healthcheck_s_report(client, history):
    data = report(client, healthcheck=str(history.docs.public_id), **OCTOBER).json()

    assert data["scope"] == "healthcheck"
    assert [check["name"] for check in data["healthchecks"]] == ["Docs"]
    assert data["summary"]["availability"] == data["healthchecks"][0]["availability"]


def test_a_month_in_another_zone_is_cut_at_its_midnights(client, history):
    data = report(client, month="2026-10", tz="Europe/Paris").json()

    assert (data["period"]["start"], data["period"]["end"]) == (
        "2026-10-01T00:00:00+02:00",
        "2026-11-01T00:00:00+01:00",  # summer time ended on 25 October
    )
    assert data["period"]["seconds"] == 31 * 86_400 + 3600


def test_the_same_request_gives_the_same_bytes(client, history):
    for kind in ("json", "csv", "pdf", "html"):
        first = report(client, format=kind, **OCTOBER).content
        assert report(client, format=kind, **OCTOBER).content == first, kind


def test_the_csv_parses_with_a_row_per_scope_check_and_region(client, history):
    answer = report(client, format="csv", **OCTOBER)
    rows = list(csv.DictReader(io.StringIO(answer.content.decode())))

    assert answer["Content-Type"].startswith("text/csv")
    assert 'filename="uptimy-acme-2026-10.csv"' in answer["Content-Disposition"]
    assert [(row["scope"], row["healthcheck"], row["region"]) for row in rows] == [
        ("organization", "acme", ""),
        ("healthcheck", "API", ""),
        ("region", "API", "eu-west"),
        ("region", "API", "us-east"),
        ("healthcheck", "Docs", ""),
    ]
    api = rows[1]
    assert (api["availability_percent"], api["downtime_seconds"], api["incidents"], api["sla_met"]) == (
        "99.93",
        "1800",
        "2",
        "yes",
    )


def test_csv_is_chosen_by_the_accept_header_too(client, history):
    answer = client.get(URL, OCTOBER, HTTP_ACCEPT="text/csv")
    assert answer["Content-Type"].startswith("text/csv")
    assert answer.content.startswith(b"scope,healthcheck_id,")


def test_a_name_a_spreadsheet_would_run_stays_text(client, org, history):
    history.docs.name = "=HYPERLINK(1)"
    history.docs.save(update_fields=["name"])
    rows = list(csv.reader(io.StringIO(report(client, format="csv", **OCTOBER).content.decode())))
    assert "'=HYPERLINK(1)" in [row[2] for row in rows]


def test_the_pdf_carries_the_figures_of_the_html(client, history):
    answer = report(client, format="pdf", **OCTOBER)
    html = report(client, format="html", **OCTOBER).content.decode()

    assert answer["Content-Type"] == "application/pdf"
    assert answer.content.startswith(b"%PDF-")
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(answer.content)).pages)
    for shown in ("acme", "availability report", "API", "Docs", "99.93 %", "How availability is computed"):
        assert shown in text, shown
        assert shown in html, shown


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"from": "2016-01-01", "to": "2025-12-31"}, "to"),
        ({"from": "2026-10-10", "to": "2026-10-01"}, "to"),
        ({"month": "2026-10", "tz": "Mars/Olympus"}, "tz"),
        ({"month": "October"}, "month"),
        ({}, "month"),
        ({"month": "2026-10", "healthcheck": "not-a-uuid"}, "healthcheck"),
    ],
)
@pytest.mark.parametrize("kind", ["json", "pdf", "csv"])
def test_bad_input_is_a_400_naming_the_field_whatever_the_format(client, params, field, kind):
    answer = client.get(URL, {**params, "format": kind})

    assert answer.status_code == 400
    assert answer["Content-Type"] == "application/json"
    assert field in answer.json()


def test_another_organization_s_healthcheck_is_not_found(other_client, history):
    answer = other_client.get(URL, {"healthcheck": str(history.api.public_id), **OCTOBER})
    assert answer.status_code == 404
    assert "healthcheck" in answer.json()
    assert other_client.get(URL, {"healthcheck": str(uuid.uuid4()), **OCTOBER}).status_code == 404


def test_another_organization_s_report_holds_only_its_own_checks(other_client, history):
    assert report(other_client, **OCTOBER).json()["healthchecks"] == []


def test_a_report_needs_a_key(history):
    from rest_framework.test import APIClient

    assert APIClient().get(URL, OCTOBER).status_code in (401, 403)


def test_the_settings_and_a_check_s_target_are_set_through_the_api(client, other_client, history):
    changed = client.patch(
        f"{URL}settings/", {"sla_target": "99.95", "time_zone": "Europe/Paris"}, format="json"
    )
    assert changed.json() == {"sla_target": "99.950", "time_zone": "Europe/Paris"}
    assert client.patch(f"{URL}settings/", {"time_zone": "Nowhere/City"}, format="json").json().keys() == {
        "time_zone"
    }
    assert client.patch(f"{URL}settings/", {"sla_target": "101"}, format="json").status_code == 400

    target_url = f"{URL}targets/{history.api.public_id}/"
    assert client.put(target_url, {"sla_target": "99.5"}, format="json").json() == {"sla_target": "99.500"}
    assert other_client.put(target_url, {"sla_target": "99.5"}, format="json").status_code == 404
    api = checks_by_name(report(client, **OCTOBER).json())["API"]
    assert api["sla"]["target"] == "99.500"
    # Without tz, the organization's zone.
    assert report(client, month="2026-10").json()["period"]["time_zone"] == "Europe/Paris"
