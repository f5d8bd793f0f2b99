"""Read the directory: visible listings, and a listing as the scorecard's evidence (checks 17–22)."""

from __future__ import annotations

from django.db.models import QuerySet

from directory.github import repository_of
from directory.models import Listing, RepositoryLicence
from monitors.scorecard import Evidence, LicenceLookup, ListingSource, LookupStatus
from monitors.scorecard import Listing as ListingEvidence


def visible_listings() -> QuerySet[Listing]:
    """Return each server's latest listing the directory shows: deleted ones hidden, deprecated ones kept."""
    return (
        Listing.objects.filter(is_latest=True)
        .exclude(status=Listing.Status.DELETED)
        .prefetch_related("remotes")
        .order_by("name")
    )


def listing_evidence(listing: Listing) -> ListingEvidence:
    """Return what the listing says, as the publisher checks read it.

    The registry verified the namespace when it was published (17); the website (18), the
    repository (19, 20) and the update date (21) are the registry's own fields. It was observed
    when Uptimy last read it. A remote declaring a required header declares credentials (10).
    """
    remotes = list(listing.remotes.all())
    return ListingEvidence(
        source=ListingSource.REGISTRY,
        name=listing.name,
        observed_at=listing.synced_at,
        website_url=listing.website_url or None,
        repository_url=listing.repository_url or None,
        updated_at=listing.updated_at,
        declares_credentials=any(remote.headers_required for remote in remotes),
    )


def licence_lookup(listing: Listing) -> LicenceLookup:
    """Return GitHub's licence lookup of the listing's repository; not done for none, or one not on GitHub."""
    repository = repository_of(listing.repository_url)
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


def listing_scorecard_evidence(listing: Listing) -> Evidence:
    """Return the scorecard's evidence of a listing as far as the registry and GitHub know it.

    The endpoint is the first remote's URL (a local-only listing has none, so it gets the
    publisher checks only); the probing evidence (1–16) comes with directory probing.
    """
    remotes = list(listing.remotes.all())
    return Evidence(
        endpoint_url=remotes[0].url if remotes else None,
        listing=listing_evidence(listing),
        licence=licence_lookup(listing),
    )
