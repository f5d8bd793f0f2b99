"""Every write of the monitors app, by domain; keyword-only functions named <entity>_<action>.

Callers import from here (``monitors.services.outcomes_record``); the modules split the
writes by what they touch: tenancy, healthchecks, recording outcomes (what a result stores is
capped in ``result_capping``), rollups.
"""

from monitors.services.audit import audit_prune, audit_record
from monitors.services.healthchecks import (
    RULE_FIELDS,
    HealthcheckUpdated,
    Notice,
    healthcheck_create,
    healthcheck_create_from,
    healthcheck_delete,
    healthcheck_pause,
    healthcheck_resume,
    healthcheck_trial_config,
    healthcheck_update,
)
from monitors.services.listings import (
    listing_clear,
    listing_set,
    quote_verification_record,
    quotes_verify,
)
from monitors.services.maintenance import (
    maintenance_window_create,
    maintenance_window_delete,
    maintenance_window_update,
)
from monitors.services.members import (
    INVITATION_GONE,
    invitation_accept,
    invitation_addressee_refusal,
    invitation_create,
    invitation_public_id,
    invitation_revoke,
    invitation_sign_up,
    invitation_token,
    membership_remove,
    membership_role_set,
)
from monitors.services.recording import (
    Recheck,
    RunResult,
    outcomes_record,
    result_unsaved,
    stale_after,
    verdicts_settle,
)
from monitors.services.result_capping import storable_outcome
from monitors.services.rollups import results_prune, rollups_refresh
from monitors.services.signins import (
    SIGN_IN_SEEN_INTERVAL,
    sign_in_session_end,
    sign_in_session_password_changed,
    sign_in_session_record,
    sign_in_session_rekey,
    sign_in_session_seen,
    sign_in_sessions_end_others,
)
from monitors.services.tenancy import (
    api_key_create,
    api_key_revoke,
    api_key_touch,
    demo_bootstrap,
    hash_api_key,
    membership_add,
    organization_create,
    organization_sign_up,
)
from monitors.services.two_factor import (
    organization_require_two_factor,
    recovery_codes_left,
    recovery_codes_regenerate,
    two_factor_confirm,
    two_factor_disable,
    two_factor_enrol,
    two_factor_secret,
    two_factor_verify,
)

__all__ = [
    "INVITATION_GONE",
    "RULE_FIELDS",
    "SIGN_IN_SEEN_INTERVAL",
    "HealthcheckUpdated",
    "Notice",
    "Recheck",
    "RunResult",
    "api_key_create",
    "api_key_revoke",
    "api_key_touch",
    "audit_prune",
    "audit_record",
    "demo_bootstrap",
    "hash_api_key",
    "healthcheck_create",
    "healthcheck_create_from",
    "healthcheck_delete",
    "healthcheck_pause",
    "healthcheck_resume",
    "healthcheck_trial_config",
    "healthcheck_update",
    "invitation_accept",
    "invitation_addressee_refusal",
    "invitation_create",
    "invitation_public_id",
    "invitation_revoke",
    "invitation_sign_up",
    "invitation_token",
    "listing_clear",
    "listing_set",
    "maintenance_window_create",
    "maintenance_window_delete",
    "maintenance_window_update",
    "membership_add",
    "membership_remove",
    "membership_role_set",
    "organization_create",
    "organization_require_two_factor",
    "organization_sign_up",
    "outcomes_record",
    "quote_verification_record",
    "quotes_verify",
    "recovery_codes_left",
    "recovery_codes_regenerate",
    "result_unsaved",
    "results_prune",
    "rollups_refresh",
    "sign_in_session_end",
    "sign_in_session_password_changed",
    "sign_in_session_record",
    "sign_in_session_rekey",
    "sign_in_session_seen",
    "sign_in_sessions_end_others",
    "stale_after",
    "storable_outcome",
    "two_factor_confirm",
    "two_factor_disable",
    "two_factor_enrol",
    "two_factor_secret",
    "two_factor_verify",
    "verdicts_settle",
]
