"""Status page subscribers: email with double opt-in through a real SMTP server, signed webhooks to a loopback
receiver, who hears what, and the ledger's crash safety."""

from __future__ import annotations

import email
import json
import re
from datetime import timedelta
from email.message import EmailMessage
from email.policy import default
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import pytest
from django.test import Client
from django.utils import timezone
from standardwebhooks import Webhook

from statuspages import services
from statuspages.models import Notice, NoticeDelivery, PublishedIncident, Subscriber
from statuspages.services import notices, sending
from tests.alerts.channel_support import Reply

API = "/api/v1/status-pages/"


@pytest.fixture
def mail(settings, smtp_server):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = smtp_server.port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    settings.UPTIMY_PUBLIC_URL = "https://status.example.com"
    return smtp_server


@pytest.fixture
def private_ok(settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True


@pytest.fixture
def page(org, make_page):
    return make_page(org, slug="acme", title="Acme status")


@pytest.fixture
def checks(org, make_check):
    return make_check(org, name="api"), make_check(org, name="docs")


@pytest.fixture
def parts(page, checks, add_component):
    return add_component(page, checks[0], display_name="API"), add_component(
        page, checks[1], display_name="Docs"
    )


def deliver() -> None:
    """Run what the beat entry runs: fan every notice out, then send every delivery due."""
    now = timezone.now()
    while notices.notices_fan_out(now=now):
        pass
    while sending.deliveries_send():
        pass


def received(smtp, index: int) -> EmailMessage:
    message = email.message_from_bytes(smtp.handler.messages[index][2], policy=default)
    assert isinstance(message, EmailMessage)
    return message


def link(message: EmailMessage, kind: str) -> str:
    text = message.get_body(("plain",)).get_content()
    found = re.search(rf"https://status\.example\.com(/s/acme/{kind}/\S+/)", text)
    assert found, text
    return found.group(1)


def subscribe(address: str, **extra) -> int:
    browser = Client(enforce_csrf_checks=True)
    form = browser.get("/s/acme/subscribe/")
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', form.content).group(1).decode()
    answer = browser.post("/s/acme/subscribe/", {"email": address, "csrfmiddlewaretoken": token, **extra})
    return answer.status_code


def confirm(smtp, index: int) -> None:
    browser = Client()
    path = link(received(smtp, index), "subscribe/confirm")
    assert browser.get(path).status_code == 200  # asks: a mail scanner's GET confirms nothing
    assert browser.post(path).status_code == 200


def publish(page, title: str = "API errors", components=()):
    return services.incident_create(
        page=page,
        changes={"title": title, "components": [c.public_id for c in components]},
        body="We are looking into it.",
        now=timezone.now(),
    )


def test_the_form_sends_a_confirmation_and_nothing_else_until_confirmed(db, mail, page, parts):
    assert subscribe("Ann@Example.com") == 200
    deliver()
    assert [rcpt for _, rcpt, _ in mail.handler.messages] == [["ann@example.com"]]
    assert "Confirm your subscription" in received(mail, 0)["Subject"]
    publish(page)
    deliver()
    assert len(mail.handler.messages) == 1  # unconfirmed: no incident mail


def test_a_confirmed_subscriber_gets_incidents_with_both_parts_and_one_click_unsubscribe(
    db, mail, page, parts
):
    subscribe("ann@example.com")
    deliver()
    confirm(mail, 0)
    publish(page)
    deliver()
    message = received(mail, 1)
    assert message["Subject"] == "[Acme status] API errors"
    assert message.get_body(("plain",)).get_content().count("We are looking into it.") == 1
    assert "We are looking into it." in message.get_body(("html",)).get_content()
    unsubscribe = link(message, "unsubscribe")
    # Folded on the wire (a long line); the value is the link.
    assert message["List-Unsubscribe"].strip() == f"<https://status.example.com{unsubscribe}>"
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert f"href='https://status.example.com{unsubscribe}'" in message.get_body(("html",)).get_content()
    # RFC 8058: the mail client POSTs this body, with no cookie and no CSRF token.
    one_click = Client(enforce_csrf_checks=True).post(
        unsubscribe, "List-Unsubscribe=One-Click", content_type="application/x-www-form-urlencoded"
    )
    assert one_click.status_code == 200
    assert not Subscriber.objects.exists()
    assert Client(enforce_csrf_checks=True).post(unsubscribe).status_code == 200  # a second click is fine


def test_subscribing_again_neither_duplicates_nor_tells(db, mail, page, parts):
    first = Client().post("/s/acme/subscribe/", {"email": "ann@example.com"})
    deliver()
    confirm(mail, 0)
    again = Client().post("/s/acme/subscribe/", {"email": "ANN@example.com"})
    fresh = Client().post("/s/acme/subscribe/", {"email": "bob@example.com"})
    deliver()
    assert Subscriber.objects.filter(email="ann@example.com").count() == 1
    assert first.content == again.content == fresh.content.replace(b"bob@", b"ann@")
    assert [rcpt for _, rcpt, _ in mail.handler.messages] == [["ann@example.com"], ["bob@example.com"]]


@pytest.mark.parametrize(
    ("chosen", "affected", "hears"),
    [
        ("API", "API", True),
        ("API", "Docs", False),
        ("API", None, True),  # an incident naming no component is the whole page's
        (None, "Docs", True),
    ],
)
def test_a_subscriber_of_chosen_components_hears_only_of_them(db, mail, page, parts, chosen, affected, hears):
    by_name = {c.display_name: c for c in parts}
    now = timezone.now()
    subscriber = services.email_subscribe(
        page=page,
        email="ann@example.com",
        components=[by_name[chosen].public_id] if chosen else None,
        now=now,
    )
    services.email_confirm(page=page, token=_token(subscriber, page), now=now)
    deliver()
    publish(page, components=[by_name[affected]] if affected else ())
    deliver()
    assert len(mail.handler.messages) == (2 if hears else 1)


def _token(subscriber, page) -> str:
    return services.subscribers.confirm_url(subscriber=subscriber, page=page).rstrip("/").rsplit("/", 1)[1]


def test_a_webhook_is_signed_per_standard_webhooks_and_its_secret_shown_once(
    db,
    client,
    page,
    parts,
    receiver,
    private_ok,
):
    added = client.post(
        f"{API}{page.public_id}/subscribers/",
        {"kind": "webhook", "url": receiver.url("/hook/token-abcdef123")},
        format="json",
    )
    assert added.status_code == 201, added.content
    secret = added.json()["secret"]
    assert secret.startswith("whsec_")
    listed = client.get(f"{API}{page.public_id}/subscribers/").json()["results"]
    assert "secret" not in listed[0]
    assert "token-abcdef123" not in json.dumps(listed)
    incident = publish(page, components=[parts[0]])
    services.incident_update_add(incident=incident, status="resolved", body="Fixed.", now=timezone.now())
    deliver()
    assert receiver.wait_received(2, timeout=10)
    bodies = [Webhook(secret).verify(request.body, request.headers) for request in receiver.received]
    assert [body["type"] for body in bodies] == ["incident.created", "incident.resolved"]
    assert bodies[0]["version"] == 1
    assert bodies[1]["data"]["update"]["body"] == "Fixed."
    assert bodies[0]["data"]["incident"]["components"] == [{"id": str(parts[0].public_id), "name": "API"}]


def test_a_webhook_at_a_private_address_is_refused(db, client, page):
    answer = client.post(
        f"{API}{page.public_id}/subscribers/",
        {"kind": "webhook", "url": "http://127.0.0.1:9/hook"},
        format="json",
    )
    assert answer.status_code == 400
    assert "url" in json.dumps(answer.json())


def test_a_redirecting_webhook_is_retried_not_followed(db, page, parts, receiver, private_ok):
    receiver.answer(Reply(status=302, headers=(("Location", "http://elsewhere.example/"),)))
    services.webhook_subscribe(page=page, url=receiver.url(), components=None, now=timezone.now())
    publish(page)
    deliver()
    delivery = NoticeDelivery.objects.get()
    assert (delivery.state, len(receiver.received)) == ("failed", 1)
    assert "redirect" in delivery.last_error


def test_a_gone_webhook_is_disabled(db, page, parts, receiver, private_ok):
    receiver.answer(Reply(status=410))
    subscriber, _ = services.webhook_subscribe(
        page=page, url=receiver.url(), components=None, now=timezone.now()
    )
    publish(page)
    deliver()
    subscriber.refresh_from_db()
    assert NoticeDelivery.objects.get().state == "given_up"
    assert "410" in subscriber.disabled_reason


# --- the ledger ----------------------------------------------------------------------------------


def test_a_claimed_but_unsent_delivery_is_sent_again_once_its_lease_lapses(db, mail, page, parts):
    subscriber = services.email_subscribe(
        page=page, email="ann@example.com", components=None, now=timezone.now()
    )
    now = timezone.now()
    notices.notices_fan_out(now=now)
    claimed = sending.deliveries_claim(now=now, lease=timedelta(minutes=5))  # the sender dies here
    assert len(claimed) == 1
    assert sending.deliveries_claim(now=now + timedelta(minutes=4)) == []  # still its
    assert sending.deliveries_send(now=now + timedelta(minutes=6)) == 1
    assert len(mail.handler.messages) == 1
    assert NoticeDelivery.objects.get().state == "sent"
    assert subscriber.deliveries.get().attempts == 2


def test_a_sent_delivery_is_never_sent_again(db, mail, page, parts):
    services.email_subscribe(page=page, email="ann@example.com", components=None, now=timezone.now())
    deliver()
    later = timezone.now() + timedelta(days=2)
    assert sending.deliveries_claim(now=later) == []
    assert notices.notices_fan_out(now=later) == 0
    assert len(mail.handler.messages) == 1


def test_a_failed_delivery_is_retried_with_backoff(db, mail, page, parts, settings):
    services.email_subscribe(page=page, email="ann@example.com", components=None, now=timezone.now())
    settings.EMAIL_PORT = 9  # nothing listens: refused
    deliver()
    delivery = NoticeDelivery.objects.get()
    assert delivery.state == "failed"
    assert delivery.next_attempt_at > timezone.now() + timedelta(seconds=20)
    settings.EMAIL_PORT = mail.port
    assert sending.deliveries_send(now=delivery.next_attempt_at) == 1
    assert len(mail.handler.messages) == 1


def test_a_page_of_many_subscribers_fans_out_in_chunks(db, page, parts):
    now = timezone.now()
    Subscriber.objects.bulk_create(
        Subscriber(page=page, kind="email", email=f"s{i}@example.com", confirmed_at=now, created_at=now)
        for i in range(2500)
    )
    publish(page)
    rounds = 0
    while notices.notices_fan_out(now=timezone.now(), chunk=1000):
        rounds += 1
    assert rounds == 3
    assert NoticeDelivery.objects.count() == 2500


def test_a_subscriber_confirmed_after_the_notice_does_not_hear_of_it(db, page, parts):
    incident = publish(page)
    later = incident.created_at + timedelta(minutes=1)
    Subscriber.objects.create(
        page=page, kind="email", email="late@example.com", confirmed_at=later, created_at=later
    )
    deliver()
    assert not NoticeDelivery.objects.exists()


# --- drafts --------------------------------------------------------------------------------------


def test_a_draft_tells_nobody_and_its_publication_does(db, client, mail, page, parts):
    now = timezone.now()
    subscriber = services.email_subscribe(page=page, email="ann@example.com", components=None, now=now)
    services.email_confirm(page=page, token=_token(subscriber, page), now=now)
    created = client.post(
        f"{API}{page.public_id}/incidents/",
        {"title": "Slow API", "body": "Looking.", "draft": True},
        format="json",
    )
    assert created.status_code == 201
    assert created.json()["draft"] is True
    deliver()
    assert len(mail.handler.messages) == 1  # the confirmation only
    assert "Slow API" not in Client().get("/s/acme/api/v2/incidents.json").content.decode()
    published = client.post(f"{API}{page.public_id}/incidents/{created.json()['id']}/publish/")
    assert (published.status_code, published.json()["draft"]) == (200, False)
    deliver()
    assert received(mail, 1)["Subject"] == "[Acme status] Slow API"
    assert "Slow API" in Client().get("/s/acme/api/v2/incidents.json").content.decode()


# --- the API -------------------------------------------------------------------------------------


def test_another_organizations_page_has_no_subscribers(db, other_client, page):
    assert other_client.get(f"{API}{page.public_id}/subscribers/").status_code == 404
    answer = other_client.post(
        f"{API}{page.public_id}/subscribers/", {"kind": "email", "email": "x@example.com"}, format="json"
    )
    assert answer.status_code == 404


def test_a_read_only_key_lists_but_cannot_add_or_delete(db, read_client, page):
    subscriber = services.email_subscribe(
        page=page, email="ann@example.com", components=None, now=timezone.now()
    )
    url = f"{API}{page.public_id}/subscribers/"
    assert read_client.get(url).status_code == 200
    assert (
        read_client.post(url, {"kind": "email", "email": "b@example.com"}, format="json").status_code == 403
    )
    assert read_client.delete(f"{url}{subscriber.public_id}/").status_code == 403


def test_an_owner_deletes_a_subscriber_with_its_pending_deliveries(db, client, page, parts):
    subscriber = services.email_subscribe(
        page=page, email="ann@example.com", components=None, now=timezone.now()
    )
    notices.notices_fan_out(now=timezone.now())
    assert client.delete(f"{API}{page.public_id}/subscribers/{subscriber.public_id}/").status_code == 204
    assert not NoticeDelivery.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kind": "email", "email": "not-an-address"}, "email"),
        ({"kind": "email"}, "email"),
        ({"kind": "webhook", "url": "ftp://example.com/"}, "url"),
        ({"kind": "webhook"}, "url"),
        ({"kind": "pigeon"}, "kind"),
        (
            {
                "kind": "email",
                "email": "a@example.com",
                "components": ["00000000-0000-4000-8000-000000000000"],
            },
            "components",
        ),
    ],
)
def test_bad_subscribers_are_refused_naming_the_field(db, client, page, body, field):
    answer = client.post(f"{API}{page.public_id}/subscribers/", body, format="json")
    assert answer.status_code == 400
    assert field in json.dumps(answer.json())


def test_notices_are_written_once_per_change(db, page, parts):
    incident = publish(page)
    services.incident_update(incident=incident, changes={"title": "Renamed"}, now=timezone.now())
    assert list(Notice.objects.values_list("kind", flat=True)) == ["incident.created"]
    assert PublishedIncident.objects.count() == 1


# --- more of the public side ---------------------------------------------------------------------


def test_following_the_unsubscribe_link_asks_before_it_removes(db, page):
    subscriber = services.email_subscribe(
        page=page, email="ann@example.com", components=None, now=timezone.now()
    )
    path = urlsplit(services.subscribers.unsubscribe_url(subscriber=subscriber, page=page)).path
    shown = Client().get(path)
    assert shown.status_code == 200
    assert b"<button" in shown.content
    assert Subscriber.objects.exists()


@pytest.mark.parametrize("method", ["get", "post"])
@pytest.mark.parametrize("view", ["subscribe/confirm", "unsubscribe"])
def test_a_forged_link_is_a_clear_400_whether_followed_or_pressed(db, page, view, method):
    answer = getattr(Client(), method)(f"/s/acme/{view}/not-a-signed-token/")
    assert answer.status_code == 400
    assert b"This link is not valid" in answer.content
    assert b"<button" not in answer.content


def test_a_confirmation_link_from_another_page_confirms_nothing(db, org, make_page, page):
    other = make_page(org, slug="other")
    subscriber = services.email_subscribe(
        page=page, email="ann@example.com", components=None, now=timezone.now()
    )
    assert services.email_confirm(page=other, token=_token(subscriber, page), now=timezone.now()) is None
    subscriber.refresh_from_db()
    assert subscriber.confirmed_at is None


def test_a_bad_address_in_the_form_is_a_400_naming_it(db, page):
    answer = Client().post("/s/acme/subscribe/", {"email": "not an address"})
    assert answer.status_code == 400
    assert b"valid email address" in answer.content


def test_the_form_is_rate_limited_per_client(db, page):
    answers = [
        Client().post("/s/acme/subscribe/", {"email": f"a{i}@example.com"}).status_code for i in range(11)
    ]
    assert answers == [200] * 10 + [429]


def test_a_private_page_asks_for_its_password_before_the_form(db, org, make_page):
    make_page(org, slug="secret", access="password", password="correct horse")
    answer = Client().get("/s/secret/subscribe/")
    assert (answer.status_code, answer["Location"]) == (302, "/s/secret/login/")


def test_owner_text_is_escaped_in_the_html_part(db, mail, page, parts):
    subscriber = services.email_subscribe(
        page=page, email="ann@example.com", components=None, now=timezone.now()
    )
    services.email_confirm(page=page, token=_token(subscriber, page), now=timezone.now())
    publish(page, title="<script>alert(1)</script>")
    deliver()
    html = received(mail, 1).get_body(("html",)).get_content()
    assert "<script>" not in html
    assert "&lt;script&gt;" in html


def test_resolving_through_a_change_of_status_tells_subscribers(db, page, parts):
    now = timezone.now()
    Subscriber.objects.create(
        page=page, kind="email", email="a@example.com", confirmed_at=now, created_at=now
    )
    incident = publish(page)
    services.incident_update(incident=incident, changes={"status": "resolved"}, now=timezone.now())
    assert list(Notice.objects.order_by("id").values_list("kind", flat=True)) == [
        "incident.created",
        "incident.resolved",
    ]


def test_a_maintenance_mail_names_its_times_in_the_pages_zone(db, mail, org, page, parts, checks):
    from monitors.services.maintenance import maintenance_window_create

    services.status_page_update(page=page, changes={"time_zone": "Europe/Paris"})
    now = timezone.now()
    Subscriber.objects.create(
        page=page, kind="email", email="a@example.com", confirmed_at=now, created_at=now
    )
    maintenance_window_create(
        organization=org,
        name="Database upgrade",
        starts_at=now + timedelta(hours=2),
        duration=timedelta(hours=1),
        healthchecks=[checks[0].public_id],
    )
    notices.maintenance_scan(now=now)
    deliver()
    message = received(mail, 0)
    assert message["Subject"] == "[Acme status] Scheduled maintenance: Database upgrade"
    # Paris's own abbreviation at that instant: CET in winter, CEST in summer (the suite runs on any day).
    starts = (now + timedelta(hours=2)).astimezone(ZoneInfo("Europe/Paris"))
    assert f"Starts: {starts:%Y-%m-%d %H:%M %Z}" in message.get_body(("plain",)).get_content()
    assert "Affected: API" in message.get_body(("plain",)).get_content()


# --- more of the ledger --------------------------------------------------------------------------


def test_a_subscribers_deliveries_go_in_order(db, page, parts, receiver, private_ok):
    receiver.answer(Reply(status=503))
    services.webhook_subscribe(page=page, url=receiver.url(), components=None, now=timezone.now())
    incident = publish(page)
    services.incident_update_add(incident=incident, status="resolved", body="Fixed.", now=timezone.now())
    deliver()
    # The created notice failed: the resolution waits behind it instead of overtaking it.
    assert len(receiver.received) == 1
    first = NoticeDelivery.objects.order_by("id").first()
    assert sending.deliveries_send(now=first.next_attempt_at) == 1
    assert sending.deliveries_send(now=first.next_attempt_at) == 1
    types = [json.loads(request.body)["type"] for request in receiver.received]
    assert types == ["incident.created", "incident.created", "incident.resolved"]


def test_a_webhook_that_never_answers_fails_within_the_timeout(
    db, page, parts, receiver, private_ok, settings
):
    settings.UPTIMY_NOTICE_SEND_TIMEOUT = 0.5
    receiver.answer(Reply(hang=True))
    services.webhook_subscribe(page=page, url=receiver.url(), components=None, now=timezone.now())
    publish(page)
    deliver()
    delivery = NoticeDelivery.objects.get()
    assert delivery.state == "failed"
    assert "did not answer within 0.5 s" in delivery.last_error


def test_a_missing_mailbox_gives_up_and_disables_the_subscriber(db, mail, page, parts):
    now = timezone.now()
    subscriber = Subscriber.objects.create(
        page=page, kind="email", email="bounce@example.com", confirmed_at=now, created_at=now
    )
    publish(page)
    deliver()
    subscriber.refresh_from_db()
    assert NoticeDelivery.objects.get().state == "given_up"
    assert "550" in subscriber.disabled_reason


def test_the_beat_task_sends_what_is_due(db, mail, page, parts):
    from statuspages.tasks import notify_subscribers

    services.email_subscribe(page=page, email="ann@example.com", components=None, now=timezone.now())
    assert notify_subscribers() == 1
    assert len(mail.handler.messages) == 1


def test_the_beat_schedule_runs_the_status_page_tasks(settings):
    from celery import current_app

    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert {"statuspages.draft_incidents", "statuspages.notify_subscribers"} <= tasks
    assert {"statuspages.draft_incidents", "statuspages.notify_subscribers"} <= set(current_app.tasks)


def test_a_webhooks_secret_stays_out_of_its_admin_page(db, page, receiver, private_ok):
    from django.contrib.auth import get_user_model

    subscriber, secret = services.webhook_subscribe(
        page=page, url=receiver.url("/hook/private-token-123"), components=None, now=timezone.now()
    )
    browser = Client()
    browser.force_login(get_user_model().objects.create_superuser("root", "", "pw-for-tests-only"))
    answer = browser.get(f"/admin/statuspages/subscriber/{subscriber.pk}/change/")
    assert answer.status_code == 200
    assert secret not in answer.content.decode()
    assert "private-token-123" not in answer.content.decode()


def test_tidying_forgets_unconfirmed_addresses_and_old_notices(db, page, parts):
    from statuspages.tasks import tidy_subscribers

    long_ago = timezone.now() - timedelta(days=40)
    services.email_subscribe(page=page, email="never@example.com", components=None, now=long_ago)
    confirmed = Subscriber.objects.create(
        page=page, kind="email", email="ann@example.com", confirmed_at=long_ago, created_at=long_ago
    )
    notices.notices_fan_out(now=long_ago)  # the confirmation's notice: fanned out 40 days ago, then sent
    NoticeDelivery.objects.update(state="sent")
    fresh = publish(page)
    notices.notices_fan_out(now=timezone.now())
    assert tidy_subscribers() >= 2
    assert list(Subscriber.objects.all()) == [confirmed]
    assert list(Notice.objects.values_list("key", flat=True)) == [f"incident:{fresh.public_id}:created"]
