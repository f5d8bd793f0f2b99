"""Subscribe to a page's updates: email with double opt-in, webhooks added by the owner; confirm and unsubscribe.

Links are signed (``django.core.signing``, the public id of the subscriber): the confirmation
link works for CONFIRM_DAYS, the unsubscribe link for as long as the subscriber exists.
Subscribing an address again never makes a second row and answers the same whether or not
the address was there: an unconfirmed one gets its confirmation again (at most once per
CONFIRM_RESEND), a confirmed one nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.core import signing
from django.core.exceptions import ValidationError
from django.core.validators import EmailValidator
from django.db import IntegrityError, transaction

from monitors.errors import ServiceError
from statuspages import webhooks
from statuspages.models import Component, Notice, StatusPage, Subscriber
from statuspages.services.audit import audited, subscriber_name, subscriber_snapshot

CONFIRM_DAYS = 7
CONFIRM_RESEND = timedelta(minutes=10)
MAX_EMAIL = 254
_CONFIRM_SALT = "statuspages.subscriber.confirm"
_UNSUBSCRIBE_SALT = "statuspages.subscriber.unsubscribe"
_validate_email = EmailValidator()


def _public_url(path: str) -> str:
    return str(settings.UPTIMY_PUBLIC_URL).rstrip("/") + path


def confirm_url(*, subscriber: Subscriber, page: StatusPage) -> str:
    """Return the signed link that confirms ``subscriber`` (valid CONFIRM_DAYS)."""
    token = signing.dumps(subscriber.public_id.hex, salt=_CONFIRM_SALT)
    return _public_url(f"/s/{page.slug}/subscribe/confirm/{token}/")


def unsubscribe_url(*, subscriber: Subscriber, page: StatusPage) -> str:
    """Return the signed one-click unsubscribe link of ``subscriber`` (RFC 8058's List-Unsubscribe)."""
    token = signing.dumps(subscriber.public_id.hex, salt=_UNSUBSCRIBE_SALT)
    return _public_url(f"/s/{page.slug}/unsubscribe/{token}/")


def _subscriber_of(
    token: str, *, page: StatusPage, salt: str, max_age: timedelta | None
) -> Subscriber | None:
    try:
        value = signing.loads(token, salt=salt, max_age=max_age)
        public_id = UUID(hex=str(value))
    except (signing.BadSignature, ValueError):
        return None
    return Subscriber.objects.filter(page=page, public_id=public_id).first()


def _address(value: Any) -> str:
    address = str(value or "").strip().lower()
    if len(address) > MAX_EMAIL:
        raise ServiceError("email", f"Use at most {MAX_EMAIL} characters.")
    try:
        _validate_email(address)
    except ValidationError:
        raise ServiceError("email", "Give a valid email address.") from None
    return address


def _components(page: StatusPage, public_ids: Iterable[Any] | None) -> list[Component] | None:
    """Return the chosen components (None: all of them); each must be the page's."""
    if public_ids is None:
        return None
    wanted = {str(public_id) for public_id in public_ids}
    if not wanted:
        return None
    found = [c for c in Component.objects.filter(page=page) if str(c.public_id) in wanted]
    if len(found) != len(wanted):
        raise ServiceError("components", "Every chosen component must be a component of this page.")
    return found


def _confirmation_notice(subscriber: Subscriber, page: StatusPage, now: datetime) -> None:
    # Sent by the ledger like every notice: the form's request sends no mail itself.
    Notice.objects.create(
        page=page,
        kind=Notice.Kind.SUBSCRIPTION_CONFIRM,
        key=f"confirm:{subscriber.public_id}:{now.isoformat()}",
        at=now,
        data={
            "page": {"id": str(page.public_id), "title": page.title, "url": _public_url(f"/s/{page.slug}/")}
        },
        subscriber=subscriber,
    )
    subscriber.confirmation_sent_at = now
    subscriber.save(update_fields=["confirmation_sent_at"])


def email_subscribe(
    *,
    page: StatusPage,
    email: Any,
    components: Iterable[Any] | None,
    now: datetime,
    by_owner: bool = False,
) -> Subscriber:
    """Subscribe ``email`` (unconfirmed) and queue its confirmation; an existing address is not duplicated.

    The caller answers the same either way: whether an address is subscribed never shows.
    ``by_owner``: added by the page's organization (web app, API), so logged in its audit log;
    a visitor subscribing on the public page is not a change of the organization's.
    """
    address = _address(email)
    chosen = _components(page, components)
    with transaction.atomic():
        existing = (
            Subscriber.objects.select_for_update()
            .filter(page=page, kind=Subscriber.Kind.EMAIL, email=address)
            .first()
        )
        if existing is not None:
            due = (
                existing.confirmation_sent_at is None or now - existing.confirmation_sent_at >= CONFIRM_RESEND
            )
            if existing.confirmed_at is None and due:
                # Not yet confirmed: the latest choice of components stands, and the mail goes again.
                _choose(existing, chosen)
                _confirmation_notice(existing, page, now)
            return existing
        try:
            with transaction.atomic():
                subscriber = Subscriber.objects.create(
                    page=page,
                    kind=Subscriber.Kind.EMAIL,
                    email=address,
                    all_components=chosen is None,
                    created_at=now,
                )
        except IntegrityError:
            # Another request subscribed the same address a moment ago: that one stands.
            return Subscriber.objects.get(page=page, kind=Subscriber.Kind.EMAIL, email=address)
        if chosen:
            subscriber.components.set(chosen)
        _confirmation_notice(subscriber, page, now)
        if by_owner:
            _audit(subscriber, "subscriber.added", after=subscriber_snapshot(subscriber))
    return subscriber


def _audit(subscriber: Subscriber, action: str, **sides: Any) -> None:
    audited(
        subscriber.page.organization_id, action, target=subscriber, name=subscriber_name(subscriber), **sides
    )


def _choose(subscriber: Subscriber, chosen: list[Component] | None) -> None:
    subscriber.all_components = chosen is None
    subscriber.save(update_fields=["all_components"])
    subscriber.components.set(chosen or [])


def email_confirm(*, page: StatusPage, token: str, now: datetime) -> Subscriber | None:
    """Confirm the subscriber the signed token names; return it, or None for a bad or expired token."""
    subscriber = _subscriber_of(token, page=page, salt=_CONFIRM_SALT, max_age=timedelta(days=CONFIRM_DAYS))
    if subscriber is not None and subscriber.confirmed_at is None:
        Subscriber.objects.filter(pk=subscriber.pk, confirmed_at__isnull=True).update(confirmed_at=now)
        subscriber.refresh_from_db()
    return subscriber


def confirm_token_valid(*, page: StatusPage, token: str) -> bool:
    """Return whether ``token`` would confirm a subscriber of this page: signed, within its week, the subscriber still there."""
    return (
        _subscriber_of(token, page=page, salt=_CONFIRM_SALT, max_age=timedelta(days=CONFIRM_DAYS)) is not None
    )


def unsubscribe_token_valid(*, page: StatusPage, token: str) -> bool:
    """Return whether ``token`` is an unsubscribe token of this page's (even for a subscriber already gone)."""
    try:
        signing.loads(token, salt=_UNSUBSCRIBE_SALT)
    except signing.BadSignature:
        return False
    return True


def unsubscribe(*, page: StatusPage, token: str) -> bool:
    """Remove the subscriber the signed token names, with its pending deliveries; return whether the token was good.

    Idempotent: a second click (or a mail client's one-click POST after the person's own)
    finds nobody and still succeeds.
    """
    if not unsubscribe_token_valid(page=page, token=token):
        return False
    subscriber = _subscriber_of(token, page=page, salt=_UNSUBSCRIBE_SALT, max_age=None)
    if subscriber is not None:
        subscriber.delete()
    return True


def webhook_subscribe(
    *, page: StatusPage, url: Any, components: Iterable[Any] | None, now: datetime
) -> tuple[Subscriber, str]:
    """Add a webhook subscriber (confirmed: its owner adds it); return it and its secret, shown this once."""
    try:
        checked = webhooks.check_url(str(url or ""))
    except webhooks.BadUrl as exc:
        raise ServiceError("url", f"The URL {exc}.") from None
    problem = webhooks.target_problem(
        checked,
        allow_private=settings.UPTIMY_ALLOW_PRIVATE_TARGETS,
        nameservers=tuple(settings.UPTIMY_DNS_SERVERS),
    )
    if problem is not None:
        raise ServiceError("url", problem)
    chosen = _components(page, components)
    secret = webhooks.generate_secret()
    with transaction.atomic():
        subscriber = Subscriber(
            page=page,
            kind=Subscriber.Kind.WEBHOOK,
            url_shown=webhooks.masked_url(checked),
            all_components=chosen is None,
            confirmed_at=now,
            created_at=now,
        )
        subscriber.config = {"url": checked, "secret": secret}
        subscriber.save()
        if chosen:
            subscriber.components.set(chosen)
        _audit(subscriber, "subscriber.added", after=subscriber_snapshot(subscriber))
    return subscriber, secret


def subscriber_delete(*, subscriber: Subscriber) -> None:
    """Remove a subscriber (its owner's doing: a visitor unsubscribes by link); its unsent deliveries go with it."""
    with transaction.atomic():
        _audit(subscriber, "subscriber.removed", before=subscriber_snapshot(subscriber))
        subscriber.delete()


def subscribers_expire(*, now: datetime) -> int:
    """Forget email addresses never confirmed within CONFIRM_DAYS (their link no longer works); return how many."""
    deleted, _ = Subscriber.objects.filter(
        kind=Subscriber.Kind.EMAIL,
        confirmed_at__isnull=True,
        created_at__lt=now - timedelta(days=CONFIRM_DAYS),
    ).delete()
    return deleted
