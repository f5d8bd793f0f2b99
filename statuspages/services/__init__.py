"""Write status pages, their components and groups, and published incidents; each function owns its transaction."""

from statuspages.services.components import (
    component_create,
    component_delete,
    component_rotate_badge_token,
    component_update,
    group_create,
    group_delete,
    group_update,
)
from statuspages.services.incidents import (
    incident_create,
    incident_delete,
    incident_publish,
    incident_update,
    incident_update_add,
    incident_update_delete,
)
from statuspages.services.pages import (
    PAGE_FIELDS,
    password_matches,
    status_page_create,
    status_page_delete,
    status_page_update,
    status_page_verify_domain,
)
from statuspages.services.subscribers import (
    email_confirm,
    email_subscribe,
    subscriber_delete,
    unsubscribe,
    webhook_subscribe,
)

__all__ = [
    "PAGE_FIELDS",
    "component_create",
    "component_delete",
    "component_rotate_badge_token",
    "component_update",
    "email_confirm",
    "email_subscribe",
    "group_create",
    "group_delete",
    "group_update",
    "incident_create",
    "incident_delete",
    "incident_publish",
    "incident_update",
    "incident_update_add",
    "incident_update_delete",
    "password_matches",
    "status_page_create",
    "status_page_delete",
    "status_page_update",
    "status_page_verify_domain",
    "subscriber_delete",
    "unsubscribe",
    "webhook_subscribe",
]
