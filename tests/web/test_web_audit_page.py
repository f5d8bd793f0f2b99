"""The audit log's page: owners and admins read it, newest first, filtered and paged, secrets never shown."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import transaction

from alerts.services import channel_add
from monitors.audit import Actor, acting_as
from monitors.models import Membership
from monitors.services import api_key_create, audit_record, healthcheck_create
from probes.checks import check_kind
from web.selectors import AUDIT_EVENTS_SHOWN

PAGE = "/app/settings/audit/"
HEADER_SECRET = "hdr-value-that-must-never-show-9f2c"
WEBHOOK_SECRET = "whsec_" + "Q" * 32


def _healthcheck(org, now, name="Shop"):
    return healthcheck_create(
        organization=org,
        name=name,
        check_type=check_kind("http"),
        config={"uri": "https://example.com/", "headers": {"X-Token": HEADER_SECRET}},
        now=now,
    )


def _events(org, count, now, action="healthcheck.updated"):
    with transaction.atomic():
        for n in range(count):
            audit_record(
                organization=org,
                action=action,
                target_type="healthcheck",
                target_id=f"id-{n}",
                target_name=f"check-{n:03d}",
                now=now + timedelta(seconds=n),
            )


def _names(page: str) -> list[str]:
    return re.findall(r"healthcheck: (check-\d{3})", page)


def test_the_page_is_in_the_settings_navigation_of_an_owner(owner):
    assert f'href="{PAGE}"' in owner.get("/app/").content.decode()


def test_the_page_is_not_in_the_navigation_of_a_member(make_member, org):
    member = make_member(org, Membership.Role.MEMBER)

    assert f'href="{PAGE}"' not in member.get("/app/").content.decode()


@pytest.mark.parametrize(
    ("role", "status"),
    [
        (Membership.Role.OWNER, 200),
        (Membership.Role.ADMIN, 200),
        (Membership.Role.MEMBER, 403),
        (Membership.Role.VIEWER, 403),
    ],
)
def test_only_owners_and_admins_open_the_page(make_member, org, role, status):
    assert make_member(org, role).get(PAGE).status_code == status


def test_an_owner_sees_a_change_with_who_how_and_from_where(owner, org, now):
    with acting_as(Actor(kind="person", via="web", user_id=owner.user.pk, address="192.0.2.7")):
        _healthcheck(org, now)

    page = owner.get(PAGE).content.decode()

    assert "healthcheck.created" in page
    assert "healthcheck: Shop" in page
    assert owner.user.email in page
    assert "via web from 192.0.2.7" in page


def test_an_update_shows_its_before_and_after(owner, org):
    with transaction.atomic():
        audit_record(
            organization=org,
            action="healthcheck.updated",
            target_type="healthcheck",
            target_name="Shop",
            before={"interval_seconds": 60},
            after={"interval_seconds": 300},
        )

    page = owner.get(PAGE).content.decode()

    assert "<del>60</del>" in page
    assert "<ins>300</ins>" in page


def test_events_are_listed_newest_first(owner, org, now):
    _events(org, 3, now)

    assert _names(owner.get(PAGE).content.decode()) == ["check-002", "check-001", "check-000"]


def test_another_organization_s_events_are_not_shown(owner, org, other_org, now):
    _events(other_org, 1, now)

    assert "check-000" not in owner.get(PAGE).content.decode()


@pytest.mark.parametrize(
    ("query", "shown"),
    [
        ("action=member.removed", ["check-900"]),
        ("action=member", ["check-900"]),
        ("action=healthcheck.updated", ["check-000"]),
        ("target_type=member", ["check-900"]),
        ("target_type=healthcheck", ["check-000"]),
        ("person=ops%40example.com", ["check-900"]),
        ("", ["check-900", "check-000"]),
    ],
)
def test_the_filters_narrow_the_list(owner, make_member, org, now, query, shown):
    ops = make_member(org, Membership.Role.ADMIN, username="ops@example.com")
    _events(org, 1, now)
    with transaction.atomic():
        audit_record(
            organization=org,
            action="member.removed",
            target_type="member",
            target_name="check-900",
            actor=Actor(kind="person", via="web", user_id=ops.user.pk),
            now=now + timedelta(minutes=1),
        )

    page = owner.get(f"{PAGE}?{query}").content.decode()

    assert re.findall(r"(?:healthcheck|member): (check-\d{3})", page) == shown


def test_a_filter_by_api_key_lists_that_key_s_changes(owner, org, now):
    key, _ = api_key_create(organization=org, name="deploy")
    with acting_as(Actor(kind="api_key", via="api", api_key_id=key.pk)):
        _healthcheck(org, now, name="By key")
    _healthcheck(org, now, name="By nobody")

    page = owner.get(f"{PAGE}?api_key={key.public_id}").content.decode()

    assert "healthcheck: By key" in page
    assert "healthcheck: By nobody" not in page


def test_a_malformed_filter_is_a_400_naming_it(owner):
    answer = owner.get(f"{PAGE}?api_key=not-a-uuid")

    assert answer.status_code == 400
    assert "Not an API key id" in answer.content.decode()


def test_the_log_is_paged_with_the_filters_kept(owner, org, now):
    _events(org, AUDIT_EVENTS_SHOWN + 1, now)

    first = owner.get(f"{PAGE}?action=healthcheck").content.decode()
    second = owner.get(f"{PAGE}?action=healthcheck&page=2").content.decode()

    assert len(_names(first)) == AUDIT_EVENTS_SHOWN
    assert "?action=healthcheck&amp;page=2" in first
    assert _names(second) == ["check-000"]


def test_the_page_reads_a_fixed_number_of_queries(owner, org, now, django_assert_max_num_queries):
    _events(org, AUDIT_EVENTS_SHOWN, now)
    owner.get(PAGE)

    with django_assert_max_num_queries(20):
        owner.get(PAGE)


def test_no_secret_of_a_healthcheck_or_a_channel_is_ever_on_the_page(owner, org, now, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    with acting_as(Actor(kind="person", via="web", user_id=owner.user.pk)):
        _healthcheck(org, now)
        channel_add(
            organization=org,
            name="Hook",
            kind="webhook",
            config={"url": "http://127.0.0.1:9/hook", "secret": WEBHOOK_SECRET},
        )

    page = owner.get(PAGE).content.decode()

    assert "channel.created" in page
    assert HEADER_SECRET not in page
    assert WEBHOOK_SECRET not in page
