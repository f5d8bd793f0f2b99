"""Decide what an assistant gets: the scopes a member's role lets them grant, and what a grant holds.

Pure rules, tested as a table (``tests/signin/test_consent_rules.py``). Writing needs a role that
may change things in the web app (owner, admin, member); a viewer can grant read only. Write
implies read: an assistant allowed to add monitors may also see them.
"""

from __future__ import annotations

from collections.abc import Iterable

READ = "read"
WRITE = "write"
ORDER = (READ, WRITE)
WRITER_ROLES = frozenset({"owner", "admin", "member"})


def grantable_scopes(role: str) -> frozenset[str]:
    """Return the scopes a member with ``role`` may grant for their organization."""
    return frozenset(ORDER) if role in WRITER_ROLES else frozenset({READ})


def granted_scopes(requested: Iterable[str], role: str) -> tuple[str, ...]:
    """Return the scopes an access holds, in order: what was asked for and the role allows, write bringing read.

    Empty when nothing asked for can be granted (a viewer asked for write alone).
    """
    granted = set(requested) & grantable_scopes(role)
    if WRITE in granted:
        granted.add(READ)
    return tuple(scope for scope in ORDER if scope in granted)
