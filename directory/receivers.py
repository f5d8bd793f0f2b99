"""Answer what monitors asks of the directory (``monitors.signals``) from the directory's own data."""

from __future__ import annotations

from typing import Any

from directory.github import repository_of
from directory.models import RepositoryLicence
from monitors.scorecard import LicenceLookup, LookupStatus


def answer_licence(sender: Any, *, repository_url: str, **_: Any) -> LicenceLookup:
    """Return GitHub's licence lookup of a customer's listed repository (``licence_asked``): check 22.

    Not done for a repository not on GitHub, or one the lookups have not reached yet (they
    cover customers' listings: ``services._repositories_due``).
    """
    repository = repository_of(repository_url)
    if repository is None:
        return LicenceLookup(status=LookupStatus.NOT_DONE)
    owner, repo = repository
    found = RepositoryLicence.objects.filter(owner=owner.lower(), repo=repo.lower()).first()
    if found is None:
        return LicenceLookup(status=LookupStatus.NOT_DONE)
    return LicenceLookup(
        status=LookupStatus(found.status),
        looked_up_at=found.looked_up_at,
        spdx_id=found.spdx_id or None,
        osi_approved=found.osi_approved,
        list_version=found.list_version or None,
    )
