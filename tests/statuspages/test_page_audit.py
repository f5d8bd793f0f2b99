"""A status page's audit events: its password never logged (nor its hash), a visitor's subscription not an owner's change."""

from __future__ import annotations

from monitors.models import AuditEvent
from monitors.secrets import MASK
from statuspages import services

PASSWORD = "correct-horse-battery"


def _page(org, **changes):
    return services.status_page_create(organization=org, changes={"slug": "acme", "title": "Acme", **changes})


def _event(action):
    return AuditEvent.objects.get(action=action)


def test_a_password_page_is_logged_as_having_a_password_never_the_password_or_its_hash(org):
    page = _page(org, access="password", password=PASSWORD)

    after = _event("status_page.created").after
    assert after["password"] == MASK
    assert PASSWORD not in str(after)
    assert page.password_hash not in str(after)


def test_setting_a_password_is_logged_as_the_masked_value_appearing(org):
    page = _page(org)

    services.status_page_update(page=page, changes={"access": "password", "password": PASSWORD})

    event = _event("status_page.updated")
    assert (event.before, event.after) == (
        {"access": "public", "password": None},
        {"access": "password", "password": MASK},
    )


def test_replacing_a_password_says_it_was_replaced_without_either(org):
    page = _page(org, access="password", password=PASSWORD)
    old_hash = page.password_hash

    services.status_page_update(page=page, changes={"password": "another-long-password"})

    event = _event("status_page.updated")
    assert (event.before, event.after) == ({"replaced": None}, {"replaced": ["password"]})
    assert old_hash not in str(event.after)
    assert page.password_hash not in str(event.after)


def test_a_visitor_subscribing_on_the_public_page_records_nothing(org, now):
    page = _page(org)

    services.email_subscribe(page=page, email="reader@example.com", components=None, now=now)

    assert not AuditEvent.objects.filter(action__startswith="subscriber.").exists()


def test_a_webhook_subscribers_secret_is_never_logged(org, now, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True
    page = _page(org)

    _, secret = services.webhook_subscribe(page=page, url="http://127.0.0.1:9/hook", components=None, now=now)

    assert secret not in str(_event("subscriber.added").after)
