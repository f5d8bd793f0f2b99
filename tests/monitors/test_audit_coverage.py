"""What the audit log covers: one row per change service, the one event it writes, and no secret in it.

The table is the list of audited changes: a service that changes a healthcheck, channel, policy,
maintenance window, status page, member, role, API key, OAuth grant or organization setting
belongs here, with the action it records.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db.models import Max
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_refresh_token_model,
)

from alerts import services as alerts
from monitors import services as monitors
from monitors.models import AuditEvent, Membership, Organization, StatusChange
from probes.checks import check_kind
from reports import services as reports
from signin import services as signin
from signin.models import AccessTokenOrganization, RefreshTokenOrganization
from statuspages import services as pages
from statuspages.models import StatusPage
from statuspages.services import drafting

SECRET = "s3cret-never-in-the-log-9f2c"
PASSWORD = "page-password-never-logged"
CHANNEL_SECRET = "whsec_" + base64.b64encode(b"channel-secret-never-logged-0042").decode()


@dataclass
class World:
    """Hold what the rows change: an organization, its owner, and makers of what they act on."""

    org: Organization
    now: datetime
    owner: Membership

    def person(self, role: str = "member") -> Membership:
        email = f"{uuid.uuid4().hex[:8]}@example.com"
        user = get_user_model().objects.create_user(username=email, email=email, password="x" * 12)
        return monitors.membership_add(organization=self.org, user=user, role=role)

    def healthcheck(self) -> Any:
        return monitors.healthcheck_create(
            organization=self.org,
            name="api",
            check_type=check_kind("http"),
            config={"uri": "https://example.com/", "headers": {"X-Key": SECRET}},
            now=self.now,
        )

    def channel(self) -> Any:
        return alerts.channel_add(
            organization=self.org,
            name="hook",
            kind="webhook",
            config={"url": "http://127.0.0.1:9/in", "secret": CHANNEL_SECRET},
        ).channel

    def window(self) -> Any:
        return monitors.maintenance_window_create(
            organization=self.org, name="db", starts_at=self.now, duration=timedelta(hours=1), tags=["db"]
        )

    def page(self, **changes: Any) -> StatusPage:
        fields = {"slug": f"p-{uuid.uuid4().hex[:8]}", "title": "Status", **changes}
        return pages.status_page_create(organization=self.org, changes=fields)

    def component(self) -> Any:
        return self.adding_component()()

    def adding_component(self) -> Callable[[], Any]:
        page, healthcheck = self.page(), self.healthcheck()
        return lambda: pages.component_create(page=page, changes={"healthcheck": healthcheck.public_id})

    def incident(self) -> Any:
        return self.opening_incident()()

    def opening_incident(self) -> Callable[[], Any]:
        page = self.page()
        return lambda: pages.incident_create(
            page=page, changes={"title": "Slow"}, body="Looking", now=self.now
        )

    def application(self) -> Any:
        return get_application_model().objects.create(
            name="Assistant",
            client_type="public",
            authorization_grant_type="authorization-code",
            redirect_uris="https://assistant.example/cb",
        )

    def issued(self) -> tuple[Any, Any, Any]:
        """Return an application and the access and refresh tokens it holds for the owner in the organization."""
        application = self.application()
        user = self.owner.user
        access = get_access_token_model().objects.create(
            user=user, application=application, token=SECRET + "a", expires=self.now + timedelta(days=1)
        )
        AccessTokenOrganization.objects.create(access_token=access, organization=self.org)
        refresh = get_refresh_token_model().objects.create(
            user=user, application=application, token=SECRET + "r", access_token=access
        )
        RefreshTokenOrganization.objects.create(refresh_token=refresh, organization=self.org)
        return application, access, refresh


# A row's change: given the world, set up what it needs and return the call under test.
Change = Callable[[World], Callable[[], object]]


@dataclass(frozen=True)
class Row:
    service: str
    action: str
    target_type: str
    change: Change
    # The events the same change writes after the first, in order (accepting an invitation adds a member).
    also: tuple[str, ...] = ()
    # The change makes an organization of its own (signing up), where its event goes.
    new_organization: bool = False

    def __str__(self) -> str:
        return self.service


def _grant(w: World) -> Callable[[], object]:
    application = w.application()
    grant = get_grant_model().objects.create(
        application=application,
        user=w.owner.user,
        code=SECRET,
        expires=w.now + timedelta(minutes=1),
        redirect_uri="https://assistant.example/cb",
        scope="read write",
        code_challenge="x" * 43,
        code_challenge_method="S256",
    )
    return lambda: signin.grant_organization_bind(grant=grant, organization_id=w.org.pk)


def _client_revoke(w: World) -> Callable[[], object]:
    application, access, _ = w.issued()
    return lambda: signin.client_token_revoke(
        token=SECRET + "a", application=application, revoke=lambda: access.delete()
    )


def _replay_revoke(w: World) -> Callable[[], object]:
    application, access, refresh = w.issued()
    return lambda: signin.issued_tokens_revoke(
        access_token_id=access.pk, token_family=refresh.token_family, application=application
    )


def _drafting(w: World) -> Callable[[], object]:
    """Return the draft reader's next batch, a check of a drafting page having gone down."""
    page = w.page(draft_incidents=True)
    healthcheck = w.healthcheck()
    pages.component_create(page=page, changes={"healthcheck": healthcheck.public_id})
    StatusChange.objects.create(healthcheck=healthcheck, at=w.now, from_status="pending", to_status="up")
    drafting.drafts_consume(now=w.now)  # the reader starts at the table's end
    StatusChange.objects.create(healthcheck=healthcheck, at=w.now, from_status="up", to_status="down")
    return lambda: drafting.drafts_consume(now=w.now)


def _update_incident(w: World, status: str) -> Callable[[], object]:
    incident = w.incident()
    return lambda: pages.incident_update_add(incident=incident, status=status, body="Better", now=w.now)


ROWS = [
    # Healthchecks
    Row("healthcheck_create", "healthcheck.created", "healthcheck", lambda w: w.healthcheck),
    Row(
        "healthcheck_update",
        "healthcheck.updated",
        "healthcheck",
        lambda w: (
            lambda h: (
                lambda: monitors.healthcheck_update(
                    healthcheck=h, changes={"name": "api2"}, partial=True, now=w.now
                )
            )
        )(w.healthcheck()),
    ),
    Row(
        "healthcheck_delete",
        "healthcheck.deleted",
        "healthcheck",
        lambda w: (lambda h: lambda: monitors.healthcheck_delete(healthcheck=h))(w.healthcheck()),
    ),
    Row(
        "healthcheck_pause",
        "healthcheck.paused",
        "healthcheck",
        lambda w: (lambda h: lambda: monitors.healthcheck_pause(healthcheck=h, now=w.now))(w.healthcheck()),
    ),
    Row(
        "healthcheck_resume",
        "healthcheck.resumed",
        "healthcheck",
        lambda w: (lambda h: lambda: monitors.healthcheck_resume(healthcheck=h, now=w.now))(
            monitors.healthcheck_pause(healthcheck=w.healthcheck(), now=w.now)
        ),
    ),
    Row(
        "reports.healthcheck_target_set",
        "healthcheck.sla_target_changed",
        "healthcheck",
        lambda w: (
            lambda h: lambda: reports.healthcheck_target_set(healthcheck=h, sla_target=Decimal("99.5"))
        )(w.healthcheck()),
    ),
    # Channels
    Row("channel_add", "channel.created", "channel", lambda w: w.channel),
    Row(
        "channel_change",
        "channel.updated",
        "channel",
        lambda w: (lambda c: lambda: alerts.channel_change(channel=c, name="hook2", now=w.now))(w.channel()),
    ),
    Row(
        "channel_delete",
        "channel.deleted",
        "channel",
        lambda w: (lambda c: lambda: alerts.channel_delete(channel=c))(w.channel()),
    ),
    Row(
        "channel_rotate_secret",
        "channel.secret_rotated",
        "channel",
        lambda w: (lambda c: lambda: alerts.channel_rotate_secret(channel=c, now=w.now))(w.channel()),
    ),
    Row(
        "channel_disable",
        "channel.disabled",
        "channel",
        lambda w: (lambda c: lambda: alerts.channel_disable(channel_id=c.pk, reason="410 Gone", now=w.now))(
            w.channel()
        ),
    ),
    # Alert policies
    Row(
        "alert_policy_put (new)",
        "alert_policy.created",
        "alert_policy",
        lambda w: (
            lambda c: (
                lambda: alerts.alert_policy_put(
                    organization=w.org, healthcheck=None, channel_ids=[c.public_id]
                )
            )
        )(w.channel()),
    ),
    Row(
        "alert_policy_put (replacing)",
        "alert_policy.updated",
        "alert_policy",
        lambda w: (
            lambda c: (
                alerts.alert_policy_put(organization=w.org, healthcheck=None, channel_ids=[c.public_id]),
                lambda: alerts.alert_policy_put(
                    organization=w.org, healthcheck=None, channel_ids=[c.public_id], notify_on_recovery=False
                ),
            )[1]
        )(w.channel()),
    ),
    Row(
        "alert_policy_delete",
        "alert_policy.deleted",
        "alert_policy",
        lambda w: (
            lambda c: (
                alerts.alert_policy_put(organization=w.org, healthcheck=None, channel_ids=[c.public_id]),
                lambda: alerts.alert_policy_delete(organization=w.org, healthcheck=None),
            )[1]
        )(w.channel()),
    ),
    # Maintenance windows
    Row("maintenance_window_create", "maintenance_window.created", "maintenance_window", lambda w: w.window),
    Row(
        "maintenance_window_update",
        "maintenance_window.updated",
        "maintenance_window",
        lambda w: (
            lambda m: (
                lambda: monitors.maintenance_window_update(window=m, changes={"name": "db2"}, partial=True)
            )
        )(w.window()),
    ),
    Row(
        "maintenance_window_delete",
        "maintenance_window.deleted",
        "maintenance_window",
        lambda w: (lambda m: lambda: monitors.maintenance_window_delete(window=m))(w.window()),
    ),
    # Members, invitations, roles
    Row(
        "invitation_create",
        "invitation.created",
        "invitation",
        lambda w: (
            lambda: monitors.invitation_create(
                organization=w.org, email="new@example.com", role="member", actor=w.owner, now=w.now
            )
        ),
    ),
    Row(
        "invitation_revoke",
        "invitation.revoked",
        "invitation",
        lambda w: (lambda i: lambda: monitors.invitation_revoke(invitation=i, actor=w.owner, now=w.now))(
            monitors.invitation_create(
                organization=w.org, email="new@example.com", role="member", actor=w.owner, now=w.now
            )
        ),
    ),
    Row(
        "invitation_accept",
        "invitation.accepted",
        "invitation",
        lambda w: (lambda i, u: lambda: monitors.invitation_accept(invitation=i, user=u, now=w.now))(
            monitors.invitation_create(
                organization=w.org, email="new@example.com", role="member", actor=w.owner, now=w.now
            ),
            get_user_model().objects.create_user(username="new@example.com", email="new@example.com"),
        ),
        also=("member.added",),
    ),
    Row(
        "invitation_sign_up",
        "invitation.accepted",
        "invitation",
        lambda w: (
            lambda i: (
                lambda: monitors.invitation_sign_up(
                    invitation=i, email="new@example.com", password=SECRET, now=w.now
                )
            )
        )(
            monitors.invitation_create(
                organization=w.org, email="new@example.com", role="member", actor=w.owner, now=w.now
            )
        ),
        also=("member.added",),
    ),
    Row(
        "organization_sign_up",
        "organization.created",
        "organization",
        lambda w: (
            lambda: monitors.organization_sign_up(
                email="founder@example.com", password=SECRET, organization_name="Initech"
            )
        ),
        new_organization=True,
    ),
    Row(
        "membership_role_set",
        "member.role_changed",
        "member",
        lambda w: (lambda m: lambda: monitors.membership_role_set(membership=m, role="admin", actor=w.owner))(
            w.person()
        ),
    ),
    Row(
        "membership_remove",
        "member.removed",
        "member",
        lambda w: (lambda m: lambda: monitors.membership_remove(membership=m, actor=w.owner))(w.person()),
    ),
    # API keys
    Row(
        "api_key_create",
        "api_key.created",
        "api_key",
        lambda w: lambda: monitors.api_key_create(organization=w.org, name="ci")[1],
    ),
    Row(
        "api_key_revoke",
        "api_key.revoked",
        "api_key",
        lambda w: (lambda k: lambda: monitors.api_key_revoke(api_key=k, now=w.now))(
            monitors.api_key_create(organization=w.org, name="ci")[0]
        ),
    ),
    # OAuth grants
    Row("grant_organization_bind (consent)", "oauth_grant.created", "oauth_grant", _grant),
    Row("client_token_revoke (RFC 7009)", "oauth_grant.revoked", "oauth_grant", _client_revoke),
    Row("issued_tokens_revoke (code replayed)", "oauth_grant.revoked", "oauth_grant", _replay_revoke),
    # Organization settings
    Row(
        "report_settings_update",
        "report_settings.updated",
        "report_settings",
        lambda w: lambda: reports.report_settings_update(organization=w.org, sla_target=Decimal("99.5")),
    ),
    # Status pages
    Row(
        "status_page_create",
        "status_page.created",
        "status_page",
        lambda w: lambda: w.page(access="password", password=PASSWORD),
    ),
    Row(
        "status_page_update",
        "status_page.updated",
        "status_page",
        lambda w: (
            lambda p: (
                lambda: pages.status_page_update(
                    page=p,
                    changes={
                        "access": "password",
                        "password": PASSWORD,
                        "custom_domain": "status.example.com",
                    },
                )
            )
        )(w.page()),
    ),
    Row(
        "status_page_delete",
        "status_page.deleted",
        "status_page",
        lambda w: (lambda p: lambda: pages.status_page_delete(page=p))(w.page()),
    ),
    Row(
        "status_page_verify_domain",
        "status_page.domain_verified",
        "status_page",
        lambda w: (
            lambda p: (
                lambda: pages.status_page_verify_domain(
                    page=p, resolver=lambda name: [p.domain_token], now=w.now
                )
            )
        )(w.page(custom_domain="status.example.com")),
    ),
    Row("component_create", "component.created", "component", lambda w: w.adding_component()),
    Row(
        "component_update",
        "component.updated",
        "component",
        lambda w: (lambda c: lambda: pages.component_update(component=c, changes={"display_name": "API"}))(
            w.component()
        ),
    ),
    Row(
        "component_delete",
        "component.deleted",
        "component",
        lambda w: (lambda c: lambda: pages.component_delete(component=c))(w.component()),
    ),
    Row(
        "component_rotate_badge_token",
        "component.badge_token_rotated",
        "component",
        lambda w: (lambda c: lambda: pages.component_rotate_badge_token(component=c))(w.component()),
    ),
    Row(
        "group_create",
        "component_group.created",
        "component_group",
        lambda w: (lambda p: lambda: pages.group_create(page=p, name="Core"))(w.page()),
    ),
    Row(
        "group_update",
        "component_group.updated",
        "component_group",
        lambda w: (lambda g: lambda: pages.group_update(group=g, changes={"name": "Edge"}))(
            pages.group_create(page=w.page(), name="Core")
        ),
    ),
    Row(
        "group_delete",
        "component_group.deleted",
        "component_group",
        lambda w: (lambda g: lambda: pages.group_delete(group=g))(
            pages.group_create(page=w.page(), name="Core")
        ),
    ),
    Row("incident_create", "incident.created", "incident", lambda w: w.opening_incident()),
    Row("drafting.drafts_consume (a check went down)", "incident.drafted", "incident", _drafting),
    Row(
        "incident_update",
        "incident.updated",
        "incident",
        lambda w: (
            lambda i: lambda: pages.incident_update(incident=i, changes={"title": "Slower"}, now=w.now)
        )(w.incident()),
    ),
    Row(
        "incident_update (resolving)",
        "incident.resolved",
        "incident",
        lambda w: (
            lambda i: lambda: pages.incident_update(incident=i, changes={"status": "resolved"}, now=w.now)
        )(w.incident()),
    ),
    Row(
        "incident_publish",
        "incident.published",
        "incident",
        lambda w: (lambda i: lambda: pages.incident_publish(incident=i, now=w.now))(
            pages.incident_create(
                page=w.page(), changes={"title": "Slow", "draft": True}, body="x", now=w.now
            )
        ),
    ),
    Row(
        "incident_delete",
        "incident.deleted",
        "incident",
        lambda w: (lambda i: lambda: pages.incident_delete(incident=i))(w.incident()),
    ),
    Row(
        "incident_update_add",
        "incident_update.created",
        "incident_update",
        lambda w: _update_incident(w, "identified"),
    ),
    Row(
        "incident_update_add (resolving)",
        "incident.resolved",
        "incident",
        lambda w: _update_incident(w, "resolved"),
    ),
    Row(
        "incident_update_delete",
        "incident_update.deleted",
        "incident_update",
        lambda w: (lambda u: lambda: pages.incident_update_delete(update=u))(
            pages.incident_update_add(incident=w.incident(), status="identified", body="x", now=w.now)
        ),
    ),
    Row(
        "webhook_subscribe",
        "subscriber.added",
        "subscriber",
        lambda w: (
            lambda p: (
                lambda: pages.webhook_subscribe(
                    page=p, url="http://127.0.0.1:9/page", components=None, now=w.now
                )[1]
            )
        )(w.page()),
    ),
    Row(
        "email_subscribe (by the owner)",
        "subscriber.added",
        "subscriber",
        lambda w: (
            lambda p: (
                lambda: pages.email_subscribe(
                    page=p, email="reader@example.com", components=None, now=w.now, by_owner=True
                )
            )
        )(w.page()),
    ),
    Row(
        "subscriber_delete",
        "subscriber.removed",
        "subscriber",
        lambda w: (lambda s: lambda: pages.subscriber_delete(subscriber=s))(
            pages.email_subscribe(page=w.page(), email="reader@example.com", components=None, now=w.now)
        ),
    ),
]


@pytest.fixture
def world(org, now, settings) -> World:
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True  # webhooks to a loopback address need no DNS
    email = "owner@example.com"
    user = get_user_model().objects.create_user(username=email, email=email, password="x" * 12)
    return World(org=org, now=now, owner=monitors.membership_add(organization=org, user=user, role="owner"))


def _events_after(mark: int | None) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(id__gt=mark or 0).order_by("id"))


@pytest.mark.parametrize("row", ROWS, ids=str)
def test_each_change_service_records_its_one_event_without_secrets(world, row):
    call = row.change(world)
    mark = AuditEvent.objects.aggregate(last=Max("id"))["last"]

    returned = call()

    events = _events_after(mark)
    assert [e.action for e in events] == [row.action, *row.also]
    assert events[0].target_type == row.target_type
    organizations = {e.organization_id for e in events}
    assert len(organizations) == 1
    assert (world.org.pk in organizations) is not row.new_organization
    logged = str([(e.before, e.after, e.target_name) for e in events])
    for secret in (SECRET, PASSWORD, CHANNEL_SECRET, *([returned] if isinstance(returned, str) else [])):
        assert secret not in logged


def test_the_table_names_each_service_once():
    assert len({row.service for row in ROWS}) == len(ROWS)
