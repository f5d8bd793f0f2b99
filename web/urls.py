"""Route the web app's pages; uptimy.urls mounts them under /app/ in the ``web`` namespace."""

from django.contrib.auth import views as auth_views
from django.urls import path, reverse_lazy

from web import account_views as accounts
from web import audit_views as audit
from web import channel_views, healthcheck_views, settings_views, views
from web import status_page_views as pages
from web import two_factor_views as two_factor

app_name = "web"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("login/", views.SignInView.as_view(), name="login"),
    path("login/two-factor/", two_factor.login_two_factor, name="login-two-factor"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("account/security/", two_factor.security, name="security"),
    path("account/security/enrol/", two_factor.two_factor_enrol, name="two-factor-enrol"),
    path("account/security/confirm/", two_factor.two_factor_confirm, name="two-factor-confirm"),
    path(
        "account/security/recovery-codes/",
        two_factor.recovery_codes_regenerate,
        name="two-factor-recovery-codes",
    ),
    path("account/security/disable/", two_factor.two_factor_disable, name="two-factor-disable"),
    path("settings/organization/", two_factor.organization_settings, name="organization-settings"),
    path("settings/audit/", audit.audit_events, name="audit-events"),
    path("signup/", views.signup, name="signup"),
    path(
        "password-reset/",
        auth_views.PasswordResetView.as_view(
            template_name="web/accounts/password_reset.html",
            email_template_name="web/accounts/password_reset_email.txt",
            subject_template_name="web/accounts/password_reset_subject.txt",
            success_url=reverse_lazy("web:password_reset_done"),
        ),
        name="password_reset",
    ),
    path(
        "password-reset/sent/",
        auth_views.PasswordResetDoneView.as_view(template_name="web/accounts/password_reset_done.html"),
        name="password_reset_done",
    ),
    path(
        "password-reset/<uidb64>/<token>/",
        accounts.PasswordResetConfirm.as_view(
            template_name="web/accounts/password_reset_confirm.html",
            success_url=reverse_lazy("web:password_reset_complete"),
        ),
        name="password_reset_confirm",
    ),
    path(
        "password-reset/done/",
        auth_views.PasswordResetCompleteView.as_view(
            template_name="web/accounts/password_reset_complete.html"
        ),
        name="password_reset_complete",
    ),
    path("account/", accounts.account, name="account"),
    path("account/password/", accounts.password_change, name="password-change"),
    path(
        "account/sessions/end-others/",
        accounts.sign_in_sessions_end_others,
        name="sign-in-sessions-end-others",
    ),
    path("account/sessions/<uuid:public_id>/end/", accounts.sign_in_session_end, name="sign-in-session-end"),
    path("organization/", views.switch_organization, name="switch-organization"),
    path("healthchecks/new/", healthcheck_views.healthcheck_new, name="healthcheck-new"),
    path("healthchecks/<uuid:public_id>/", healthcheck_views.healthcheck_detail, name="healthcheck"),
    path("healthchecks/<uuid:public_id>/edit/", healthcheck_views.healthcheck_edit, name="healthcheck-edit"),
    path(
        "healthchecks/<uuid:public_id>/delete/",
        healthcheck_views.healthcheck_delete,
        name="healthcheck-delete",
    ),
    path(
        "healthchecks/<uuid:public_id>/listing/",
        healthcheck_views.healthcheck_listing,
        name="healthcheck-listing",
    ),
    path(
        "healthchecks/<uuid:public_id>/<str:action>/",
        healthcheck_views.healthcheck_action,
        name="healthcheck-action",
    ),
    path("incidents/", views.incidents, name="incidents"),
    path(
        "incidents/<uuid:public_id>/acknowledge/",
        healthcheck_views.incident_acknowledge,
        name="incident-acknowledge",
    ),
    path("invitations/<str:token>/", views.invitation, name="invitation"),
    path("settings/members/", views.members, name="members"),
    path("settings/members/invite/", views.member_invite, name="member-invite"),
    path("settings/members/<int:member_id>/role/", views.member_role, name="member-role"),
    path("settings/members/<int:member_id>/remove/", views.member_remove, name="member-remove"),
    path("settings/invitations/<uuid:public_id>/revoke/", views.invitation_revoke, name="invitation-revoke"),
    path("settings/channels/", channel_views.channels, name="channels"),
    path("settings/alerts/", channel_views.alert_policy, name="alert-policy"),
    path("settings/channels/<uuid:public_id>/", channel_views.channel_edit, name="channel-edit"),
    path(
        "settings/channels/<uuid:public_id>/rotate-secret/",
        channel_views.channel_rotate_secret,
        name="channel-rotate-secret",
    ),
    path("settings/channels/<uuid:public_id>/test/", channel_views.channel_test, name="channel-test"),
    path("settings/channels/<uuid:public_id>/delete/", channel_views.channel_delete, name="channel-delete"),
    path("settings/maintenance/", settings_views.maintenance, name="maintenance"),
    path("settings/maintenance/<uuid:public_id>/", settings_views.maintenance_edit, name="maintenance-edit"),
    path(
        "settings/maintenance/<uuid:public_id>/delete/",
        settings_views.maintenance_delete,
        name="maintenance-delete",
    ),
    path("status-pages/", pages.status_pages, name="status-pages"),
    path("status-pages/<uuid:public_id>/", pages.status_page, name="status-page"),
    path(
        "status-pages/<uuid:public_id>/verify-domain/",
        pages.status_page_verify_domain,
        name="status-page-verify-domain",
    ),
    path("status-pages/<uuid:public_id>/delete/", pages.status_page_delete, name="status-page-delete"),
    path("status-pages/<uuid:public_id>/components/", pages.component_add, name="status-page-component-add"),
    path(
        "status-pages/<uuid:public_id>/components/<uuid:component_id>/",
        pages.component_edit,
        name="status-page-component",
    ),
    path(
        "status-pages/<uuid:public_id>/components/<uuid:component_id>/rotate-badge-token/",
        pages.component_rotate_badge_token,
        name="status-page-component-rotate-badge-token",
    ),
    path(
        "status-pages/<uuid:public_id>/components/<uuid:component_id>/remove/",
        pages.component_remove,
        name="status-page-component-remove",
    ),
    path(
        "status-pages/<uuid:public_id>/components/<uuid:component_id>/group/",
        pages.component_group_set,
        name="status-page-component-group",
    ),
    path("status-pages/<uuid:public_id>/groups/", pages.group_add, name="status-page-group-add"),
    path(
        "status-pages/<uuid:public_id>/groups/<uuid:group_id>/",
        pages.group_edit,
        name="status-page-group-edit",
    ),
    path(
        "status-pages/<uuid:public_id>/groups/<uuid:group_id>/remove/",
        pages.group_remove,
        name="status-page-group-remove",
    ),
    path(
        "status-pages/<uuid:public_id>/subscribers/", pages.subscriber_add, name="status-page-subscriber-add"
    ),
    path(
        "status-pages/<uuid:public_id>/subscribers/<uuid:subscriber_id>/remove/",
        pages.subscriber_remove,
        name="status-page-subscriber-remove",
    ),
    path("status-pages/<uuid:public_id>/incidents/", pages.incident_add, name="status-page-incident-add"),
    path(
        "status-pages/<uuid:public_id>/incidents/<uuid:incident_id>/updates/",
        pages.incident_update_add,
        name="status-page-incident-update",
    ),
    path(
        "status-pages/<uuid:public_id>/incidents/<uuid:incident_id>/publish/",
        pages.incident_publish,
        name="status-page-incident-publish",
    ),
    path(
        "status-pages/<uuid:public_id>/incidents/<uuid:incident_id>/",
        pages.incident_edit,
        name="status-page-incident-edit",
    ),
    path(
        "status-pages/<uuid:public_id>/incidents/<uuid:incident_id>/delete/",
        pages.incident_delete,
        name="status-page-incident-delete",
    ),
    path(
        "status-pages/<uuid:public_id>/incidents/<uuid:incident_id>/updates/<uuid:update_id>/delete/",
        pages.incident_update_delete,
        name="status-page-incident-update-delete",
    ),
    path("settings/reports/", settings_views.report_settings, name="reports"),
    path("settings/reports/monthly/", settings_views.monthly_report, name="monthly-report"),
    path("settings/api-keys/", settings_views.api_keys, name="api-keys"),
    path("settings/api-keys/<uuid:public_id>/revoke/", settings_views.api_key_revoke, name="api-key-revoke"),
]
