"""Every report parameter at its edges, over the live server with a real HTTP client: a 400 naming the parameter, never a 5xx."""

from __future__ import annotations

import httpx
import pytest

from monitors.services import api_key_create

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

# (query, the parameter a 400 must name; None: any answer below 500 will do)
EDGES = [
    ({"month": "0001-01"}, "month"),
    ({"month": "0001-12"}, "month"),
    ({"month": "1969-12"}, "month"),
    ({"month": "9999-01"}, "month"),
    ({"month": "9999-11"}, "month"),
    ({"month": "9999-12"}, "month"),
    ({"month": "10000-01"}, "month"),
    ({"month": "2026-00"}, "month"),
    ({"month": "2026-13"}, "month"),
    ({"month": "0000-00"}, "month"),
    ({"month": "٢٠٢٦-١١"}, "month"),  # Arabic-Indic digits are no YYYY-MM
    ({"month": "9999-12", "tz": "Etc/GMT+12"}, "month"),
    ({"month": "9999-12", "tz": "Pacific/Kiritimati"}, "month"),
    ({"month": "1970-01", "tz": "Pacific/Kiritimati"}, None),
    ({"month": "1970-01", "tz": "Etc/GMT+12"}, None),
    ({"from": "0001-01-01", "to": "0001-12-31"}, "from"),
    ({"from": "0001-01-01", "to": "9999-12-31"}, "from"),
    ({"from": "1969-12-31", "to": "1970-01-01"}, "from"),
    ({"from": "9998-12-31", "to": "9999-01-01"}, "to"),
    ({"from": "9999-12-31", "to": "9999-12-31"}, "to"),
    ({"from": "9999-12-01", "to": "10000-01-01"}, "to"),
    ({"from": "10000-01-01", "to": "10000-01-02"}, "from"),
    ({"from": "2026-02-30", "to": "2026-03-01"}, "from"),
    ({"from": "2026-01-00", "to": "2026-01-01"}, "from"),
    ({"from": "2026-01-01", "to": "2026-13-01"}, "to"),
    ({"from": "1970-01-01", "to": "1970-01-01", "tz": "Pacific/Kiritimati"}, None),
    ({"month": "2026-10", "from": "2026-10-01"}, "month"),
    ({"month": "2026-10", "tz": ""}, None),
    ({"month": "2026-10", "tz": "Not/AZone"}, "tz"),
]


@pytest.fixture
def api(live_server, org):
    _, key = api_key_create(organization=org)
    with httpx.Client(
        base_url=f"{live_server.url}/api/v1/reports/", headers={"Authorization": f"Bearer {key}"}, timeout=60
    ) as client:
        yield client


@pytest.mark.parametrize("fmt", ["json", "csv"])
@pytest.mark.parametrize(("params", "field"), EDGES)
def test_a_report_parameter_at_its_edge_is_never_a_server_error(api, params, field, fmt):
    answer = api.get("", params={**params, "format": fmt})

    assert answer.status_code < 500, answer.text
    if field is not None:
        assert answer.status_code == 400
        assert answer.headers["Content-Type"] == "application/json"
        assert field in answer.json()


@pytest.mark.parametrize("fmt", ["xml", "PDF", "yaml", "api", "json ", "../csv"])
def test_an_unknown_format_is_a_400_that_names_it(api, fmt):
    answer = api.get("", params={"month": "2026-10", "format": fmt})

    assert answer.status_code == 400
    assert answer.headers["Content-Type"] == "application/json"
    assert repr(fmt) in answer.json()["format"][0]
