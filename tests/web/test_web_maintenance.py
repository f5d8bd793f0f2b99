"""Maintenance windows in the web app: the API's serializer and services, times read in the window's zone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from monitors.models import MaintenanceWindow
from monitors.services import maintenance_window_create

pytestmark = pytest.mark.django_db

PAGE = "/app/settings/maintenance/"


def local(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M")


def test_a_one_off_window_is_added_for_chosen_healthchecks_and_tags(owner, org, make_check):
    check = make_check(org, name="Docs MCP")
    starts = timezone.now().astimezone(UTC) + timedelta(days=1)
    form = {
        "name": "Database upgrade",
        "starts_at": local(starts),
        "ends_at": local(starts + timedelta(hours=2)),
        "timezone": "UTC",
        "healthchecks": [str(check.public_id)],
        "tags": "db, eu",
    }
    assert owner.post(PAGE, form).status_code == 302
    window = MaintenanceWindow.objects.get(organization=org)
    assert window.duration == timedelta(hours=2)
    assert [hc.pk for hc in window.healthchecks.all()] == [check.pk]
    assert sorted(t.name for t in window.tag_rows.all()) == ["db", "eu"]
    page = owner.get(PAGE).content.decode()
    assert "Database upgrade" in page
    assert "Docs MCP" in page
    assert "tag: db" in page


def test_the_times_typed_are_read_in_the_window_s_time_zone(owner, org):
    form = {
        "name": "Sunday nights",
        "starts_at": "2030-01-06T02:00",
        "duration": "3600",
        "rrule": "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2",
        "timezone": "Europe/Paris",
        "tags": "db",
    }
    assert owner.post(PAGE, form).status_code == 302
    window = MaintenanceWindow.objects.get(organization=org)
    assert window.starts_at == datetime(2030, 1, 6, 1, 0, tzinfo=UTC)  # 02:00 in Paris in winter
    assert window.timezone == "Europe/Paris"


@pytest.mark.parametrize(
    ("form", "field"),
    [
        ({"name": "", "starts_at": "2030-01-06T02:00", "duration": "60"}, "name"),
        ({"name": "W", "starts_at": "", "duration": "60"}, "starts_at"),
        ({"name": "W", "starts_at": "not a time", "duration": "60"}, "starts_at"),
        ({"name": "W", "starts_at": "2030-01-06T02:00", "rrule": "FREQ=DAILY"}, "duration"),
        ({"name": "W", "starts_at": "2030-01-06T02:00", "duration": "60", "rrule": "FREQ=SECONDLY"}, "rrule"),
        (
            {"name": "W", "starts_at": "2030-01-06T02:00", "duration": "60", "timezone": "Mars/Olympus"},
            "timezone",
        ),
        (
            {"name": "W", "starts_at": "2030-01-06T02:00", "duration": "60", "healthchecks": ["not-a-uuid"]},
            "healthchecks",
        ),
    ],
)
def test_a_refused_field_shows_the_api_s_own_message_next_to_it(owner, client, form, field):
    answer = owner.post(PAGE, {**form, "tags": "db"})
    assert answer.status_code == 400
    errors = answer.context["errors"]
    assert field in errors, errors
    assert not MaintenanceWindow.objects.exists()
    if form.get("starts_at") not in {
        "",
        "not a time",
    }:  # the API takes an ISO time, not the browser's local one
        body = {key: value for key, value in form.items() if value or key == "name"}
        body["tags"] = ["db"]
        body["starts_at"] = form["starts_at"] + ":00+00:00"
        api = client.post("/api/v1/maintenance-windows/", body, format="json")
        assert api.status_code == 400
        assert errors[field][0] in api.content.decode()


def test_delete_asks_then_deletes(owner, org):
    window = maintenance_window_create(
        organization=org, name="Upgrade", starts_at=timezone.now(), duration=timedelta(hours=1), tags=["db"]
    )
    url = f"{PAGE}{window.public_id}/delete/"
    assert "Delete Upgrade?" in owner.get(url).content.decode()
    assert owner.post(url).status_code == 302
    assert not MaintenanceWindow.objects.exists()


def test_another_organization_s_window_is_404(owner, other_org):
    window = maintenance_window_create(
        organization=other_org,
        name="Theirs",
        starts_at=timezone.now(),
        duration=timedelta(hours=1),
        tags=["db"],
    )
    assert owner.post(f"{PAGE}{window.public_id}/delete/").status_code == 404
    assert "Theirs" not in owner.get(PAGE).content.decode()


def test_a_window_in_progress_says_so(owner, org):
    maintenance_window_create(
        organization=org,
        name="Now",
        starts_at=timezone.now() - timedelta(minutes=5),
        duration=timedelta(hours=1),
        tags=["db"],
    )
    assert "In maintenance" in owner.get(PAGE).content.decode()


@pytest.mark.parametrize("action", ["", "{id}/delete/"])
def test_a_viewer_s_post_is_403(viewer, org, action):
    window = maintenance_window_create(
        organization=org, name="Upgrade", starts_at=timezone.now(), duration=timedelta(hours=1), tags=["db"]
    )
    form = {"name": "Sneaky", "starts_at": "2030-01-06T02:00", "duration": "60"}
    assert viewer.post(PAGE + action.format(id=window.public_id), form).status_code == 403
    assert list(MaintenanceWindow.objects.values_list("name", flat=True)) == ["Upgrade"]


# --- editing a window ---------------------------------------------------------------------------------


def paris_window(org, **fields) -> MaintenanceWindow:
    return maintenance_window_create(
        organization=org,
        **{
            "name": "Sunday nights",
            "starts_at": datetime(2030, 1, 6, 1, 0, tzinfo=UTC),
            "duration": timedelta(hours=1),
            "rrule": "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2",
            "timezone": "Europe/Paris",
            "tags": ["db"],
            **fields,
        },
    )


def edit_values(owner, window: MaintenanceWindow) -> dict:
    """Return the edit page's form as a browser posts it back unchanged."""
    return dict(owner.get(f"{PAGE}{window.public_id}/").context["values"])


def test_the_edit_page_shows_the_start_in_the_window_s_own_zone(owner, org):
    window = paris_window(org)
    answer = owner.get(f"{PAGE}{window.public_id}/")
    assert answer.status_code == 200
    page = answer.content.decode()
    assert 'value="2030-01-06T02:00"' in page  # 01:00 UTC is 02:00 in Paris in winter
    assert 'value="3600"' in page
    assert 'value="FREQ=WEEKLY;BYDAY=SU;BYHOUR=2"' in page


def test_saving_the_form_unchanged_changes_nothing(owner, org, make_check):
    check = make_check(org)
    window = paris_window(org, healthchecks=[check.public_id])
    before = MaintenanceWindow.objects.values().get(pk=window.pk)
    assert owner.post(f"{PAGE}{window.public_id}/", edit_values(owner, window)).status_code == 302
    after = MaintenanceWindow.objects.values().get(pk=window.pk)
    assert {k: v for k, v in after.items() if k != "updated_at"} == {
        k: v for k, v in before.items() if k != "updated_at"
    }
    assert [hc.pk for hc in window.healthchecks.all()] == [check.pk]


def test_a_start_in_the_hour_the_clocks_pass_twice_is_kept_when_saved_unchanged(owner, org):
    # 02:30 in Paris on 27 October 2030 happens twice; this is the second one (CET, 01:30 UTC).
    second = datetime(2030, 10, 27, 1, 30, tzinfo=UTC)
    window = paris_window(org, starts_at=second, rrule="")
    values = edit_values(owner, window)
    assert values["starts_at"] == "2030-10-27T02:30"
    assert owner.post(f"{PAGE}{window.public_id}/", values | {"name": "Renamed"}).status_code == 302
    window.refresh_from_db()
    assert (window.name, window.starts_at) == ("Renamed", second)


def test_a_window_is_moved_renamed_and_retargeted(owner, org, make_check):
    check = make_check(org)
    window = paris_window(org)
    values = edit_values(owner, window) | {
        "name": "Monday nights",
        "starts_at": "2030-01-07T03:00",
        "rrule": "FREQ=WEEKLY;BYDAY=MO;BYHOUR=3",
        "duration": "1800",
        "tags": "",
        "healthchecks": [str(check.public_id)],
    }
    assert owner.post(f"{PAGE}{window.public_id}/", values).status_code == 302
    window.refresh_from_db()
    assert (window.name, window.starts_at, window.duration) == (
        "Monday nights",
        datetime(2030, 1, 7, 2, 0, tzinfo=UTC),
        timedelta(minutes=30),
    )
    assert [hc.pk for hc in window.healthchecks.all()] == [check.pk]
    assert not window.tag_rows.exists()  # an emptied field clears, as a PUT does


def test_a_one_off_window_s_end_is_typed_in_place_of_its_duration(owner, org):
    window = paris_window(org, rrule="")
    values = edit_values(owner, window) | {"rrule": "", "duration": "", "ends_at": "2030-01-06T05:30"}
    assert owner.post(f"{PAGE}{window.public_id}/", values).status_code == 302
    window.refresh_from_db()
    assert window.ends_at == datetime(2030, 1, 6, 4, 30, tzinfo=UTC)  # 05:30 in Paris
    assert window.duration == timedelta(hours=3, minutes=30)


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"name": ""}, "name", "This field may not be blank."),
        ({"ends_at": "2030-01-06T05:30"}, "ends_at", "A recurring window takes a duration per occurrence"),
        ({"starts_at": "not a time"}, "starts_at", "Datetime has wrong format."),
        ({"duration": "0"}, "duration", "greater than or equal to 1"),
        ({"rrule": "FREQ=SECONDLY"}, "rrule", ""),
        ({"timezone": "Mars/Olympus"}, "timezone", ""),
        ({"tags": "", "healthchecks": []}, "healthchecks", "Choose at least one healthcheck or tag"),
    ],
)
def test_a_refused_change_shows_the_api_s_message_next_to_the_field(owner, org, change, field, message):
    window = paris_window(org)
    answer = owner.post(f"{PAGE}{window.public_id}/", edit_values(owner, window) | change)
    assert answer.status_code == 400
    errors = answer.context["errors"]
    assert list(errors) == [field]
    assert message in errors[field][0]
    window.refresh_from_db()
    assert (window.name, window.rrule) == ("Sunday nights", "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2")


@pytest.mark.parametrize("method", ["get", "post"])
def test_another_organization_s_window_can_t_be_edited(owner, other_org, method):
    window = paris_window(other_org)
    answer = getattr(owner, method)(
        f"{PAGE}{window.public_id}/", {"name": "Mine"} if method == "post" else {}
    )
    assert answer.status_code == 404
    assert MaintenanceWindow.objects.get(pk=window.pk).name == "Sunday nights"


def test_a_viewer_sees_a_window_s_form_but_can_t_save_it(viewer, org):
    window = paris_window(org)
    assert "Save window" not in viewer.get(f"{PAGE}{window.public_id}/").content.decode()
    answer = viewer.post(f"{PAGE}{window.public_id}/", {"name": "Mine"})
    assert answer.status_code == 403
    assert MaintenanceWindow.objects.get(pk=window.pk).name == "Sunday nights"


@pytest.mark.parametrize("field", ["name", "description", "rrule", "timezone", "tags"])
def test_a_nul_in_an_edited_window_is_a_field_error(owner, org, field):
    window = paris_window(org)
    answer = owner.post(f"{PAGE}{window.public_id}/", edit_values(owner, window) | {field: "x\x00y"})
    assert answer.status_code == 400
    assert field in answer.context["errors"]
