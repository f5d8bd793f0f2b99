"""Who may give which role to whom in an organization: pure, no Django.

The rules of the members page, in one place: owners and admins manage members, only an owner
makes an owner or changes one, and an organization always keeps at least one owner.
"""

from __future__ import annotations

OWNER, ADMIN, MEMBER, VIEWER = "owner", "admin", "member", "viewer"
ROLES = (OWNER, ADMIN, MEMBER, VIEWER)
MANAGERS = frozenset({OWNER, ADMIN})
# The session key of the organization a signed-in person works in (the web app's switcher); the
# API's session-authenticated audit log reads the same one.
SESSION_ORGANIZATION = "web_organization"

NOT_A_MANAGER = "Only an owner or admin of the organization can manage its members."
UNKNOWN_ROLE = "Choose one of: owner, admin, member, viewer."
OWNERS_ONLY = "Only an owner can make an owner or change an owner's role."
LAST_OWNER = "An organization keeps at least one owner: make another member an owner first."


def role_change_refusal(*, actor: str, current: str | None, wanted: str | None, owners: int) -> str | None:
    """Return why ``actor`` may not move a member from ``current`` to ``wanted``; None when allowed.

    ``current`` None is an invitation (no role yet); ``wanted`` None is a removal; ``owners`` is
    how many owners the organization has now.
    """
    if actor not in MANAGERS:
        return NOT_A_MANAGER
    if wanted is not None and wanted not in ROLES:
        return UNKNOWN_ROLE
    if actor != OWNER and OWNER in (current, wanted):
        return OWNERS_ONLY
    if current == OWNER and wanted != OWNER and owners <= 1:
        return LAST_OWNER
    return None


TWO_FACTOR_OWNERS_ONLY = "Only an owner can change whether the organization requires two-factor sign-in."
TWO_FACTOR_SELF_FIRST = (
    "Turn on two-factor sign-in for your own account first (Security), then require it of every member."
)


def two_factor_policy_refusal(*, actor: str, actor_enrolled: bool, required: bool) -> str | None:
    """Return why ``actor`` may not require (``required``) or stop requiring two-factor sign-in; None when allowed.

    Owners only, not admins: the rule binds the owners' own accounts too, and whoever may lift
    it may weaken every member's sign-in. An owner requires it only once their own account has
    it, so the rule can't send the person who set it out of the app on their next page.
    """
    if actor != OWNER:
        return TWO_FACTOR_OWNERS_ONLY
    if required and not actor_enrolled:
        return TWO_FACTOR_SELF_FIRST
    return None
