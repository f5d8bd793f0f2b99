"""Who may give which role to whom: the members page's rules as a table."""

import pytest

from monitors.roles import LAST_OWNER, NOT_A_MANAGER, OWNERS_ONLY, UNKNOWN_ROLE, role_change_refusal


@pytest.mark.parametrize(
    ("actor", "current", "wanted", "owners", "refusal"),
    [
        # Owners and admins manage; members and viewers don't.
        ("owner", "member", "admin", 1, None),
        ("admin", "member", "viewer", 1, None),
        ("member", "viewer", "member", 1, NOT_A_MANAGER),
        ("viewer", None, "viewer", 1, NOT_A_MANAGER),
        # Invitations (no current role) follow the same rules.
        ("admin", None, "member", 1, None),
        ("admin", None, "owner", 1, OWNERS_ONLY),
        ("owner", None, "owner", 1, None),
        # Only an owner makes an owner, or changes or removes one.
        ("admin", "member", "owner", 1, OWNERS_ONLY),
        ("admin", "owner", "member", 2, OWNERS_ONLY),
        ("admin", "owner", None, 2, OWNERS_ONLY),
        ("owner", "owner", "admin", 2, None),
        ("owner", "owner", None, 2, None),
        # At least one owner remains.
        ("owner", "owner", "admin", 1, LAST_OWNER),
        ("owner", "owner", None, 1, LAST_OWNER),
        ("owner", "owner", "owner", 1, None),
        # A role that doesn't exist.
        ("owner", "member", "superuser", 1, UNKNOWN_ROLE),
    ],
)
def test_role_change_refusal(actor, current, wanted, owners, refusal):
    assert role_change_refusal(actor=actor, current=current, wanted=wanted, owners=owners) == refusal
