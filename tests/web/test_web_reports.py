"""Report settings in the web app: the default SLA target and zone (the API's checks), the monthly email opt-in."""

from __future__ import annotations

from decimal import Decimal

import pytest

from reports.models import MonthlyReportOptIn, ReportSettings

pytestmark = pytest.mark.django_db

PAGE = "/app/settings/reports/"


def test_the_page_shows_the_defaults_before_anything_is_saved(owner):
    page = owner.get(PAGE).content.decode()
    assert 'value="UTC"' in page
    assert "SLA target" in page


def test_saving_sets_the_target_and_zone(owner, org):
    assert owner.post(PAGE, {"sla_target": "99.95", "time_zone": "Europe/Paris"}).status_code == 302
    saved = ReportSettings.objects.get(organization=org)
    assert (saved.sla_target, saved.time_zone) == (Decimal("99.950"), "Europe/Paris")


@pytest.mark.parametrize(
    ("form", "field"),
    [
        ({"sla_target": "lots", "time_zone": "UTC"}, "sla_target"),
        ({"sla_target": "101", "time_zone": "UTC"}, "sla_target"),
        ({"sla_target": "99.9999", "time_zone": "UTC"}, "sla_target"),
        ({"sla_target": "99.9", "time_zone": "Mars/Olympus"}, "time_zone"),
    ],
)
def test_a_refused_field_shows_the_api_s_own_message_next_to_it(owner, client, form, field):
    answer = owner.post(PAGE, form)
    assert answer.status_code == 400
    errors = answer.context["errors"]
    assert list(errors) == [field]
    api = client.patch("/api/v1/reports/settings/", form, format="json")
    assert api.status_code == 400
    assert errors[field][0] in api.content.decode()
    assert form[field] in answer.content.decode()  # what was typed stays in the field
    assert not ReportSettings.objects.exists()


def test_an_owner_opts_in_and_out_of_the_monthly_email(owner, org):
    assert owner.post(f"{PAGE}monthly/", {"monthly": "on"}).status_code == 302
    assert MonthlyReportOptIn.objects.filter(membership__user=owner.user).exists()
    assert "checked" in owner.get(PAGE).content.decode()
    owner.post(f"{PAGE}monthly/", {})
    assert not MonthlyReportOptIn.objects.exists()


def test_only_owners_are_offered_the_monthly_email(make_member, org):
    from monitors.models import Membership

    page = make_member(org, Membership.Role.ADMIN).get(PAGE).content.decode()
    assert "Only the organization's owners receive the monthly report." in page
    assert "Email me last month" not in page


@pytest.mark.parametrize(("path", "form"), [("", {"sla_target": "90"}), ("monthly/", {"monthly": "on"})])
def test_a_viewer_s_post_is_403(viewer, path, form):
    assert viewer.post(PAGE + path, form).status_code == 403
    assert not ReportSettings.objects.exists()
    assert not MonthlyReportOptIn.objects.exists()
