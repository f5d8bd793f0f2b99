"""Write a page's incident history as RSS 2.0 and Atom 1.0, with Django's syndication framework.

One item per published incident, newest first (the last :data:`FEED_ITEMS`): its title, its
impact and status, and its updates as the description (escaped text: a feed reader renders the
description as HTML, and a body is the owner's plain text). The item's link is the incident on
the page's history; its id a ``urn:uuid`` that never changes, so a reader shows an incident
once and marks it changed when an update arrives (``updated``).

The views (statuspages/views.py ``history_feed``) decide who may read; this module only draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from django.contrib.syndication.views import Feed
from django.http import HttpRequest
from django.utils.feedgenerator import Atom1Feed, Rss201rev2Feed, SyndicationFeed
from django.utils.html import escape, linebreaks

from statuspages.models import PublishedIncident, StatusPage

FEED_ITEMS = 50


@dataclass(frozen=True)
class FeedSource:
    """Hold what a feed is drawn from: the page, its public address, the feed's own address and the incidents."""

    page: StatusPage
    url: str  # the page's public address, ending in "/"
    feed_url: str
    incidents: Sequence[PublishedIncident]


@dataclass(frozen=True)
class FeedItem:
    """Hold one incident of a feed, its link and the page's zone (the framework hands an item nothing but itself)."""

    incident: PublishedIncident
    link: str
    time_zone: str


# Feed is generic in django-stubs only, not at run time.
if TYPE_CHECKING:
    _Feed = Feed[FeedItem, FeedSource]
else:
    _Feed = Feed


class IncidentsRss(_Feed):
    """Draw the page's incident history as RSS 2.0."""

    feed_type: type[SyndicationFeed] = Rss201rev2Feed

    def get_object(self, request: HttpRequest, *args: Any, **kwargs: Any) -> FeedSource:
        source = kwargs["source"]
        assert isinstance(source, FeedSource)
        return source

    def title(self, source: FeedSource) -> str:
        return f"{source.page.title}: incident history"

    def link(self, source: FeedSource) -> str:
        return source.url + "history/"

    def feed_url(self, source: FeedSource) -> str:
        return source.feed_url

    def description(self, source: FeedSource) -> str:
        return source.page.description or f"Incidents published on {source.page.title}'s status page."

    def subtitle(self, source: FeedSource) -> str:
        return self.description(source)

    def feed_guid(self, source: FeedSource) -> str:
        return source.page.public_id.urn

    def items(self, source: FeedSource) -> list[FeedItem]:
        return [
            FeedItem(incident, _incident_link(source, incident), source.page.time_zone)
            for incident in source.incidents
        ]

    def item_title(self, item: FeedItem) -> str:
        # Escaped once more, as Django does by default: readers may render titles as HTML.
        return escape(item.incident.title)

    def item_description(self, item: FeedItem) -> str:
        incident = item.incident
        zone = ZoneInfo(item.time_zone)
        parts = [
            f"<p>Impact: {escape(incident.get_impact_display())}. Status: {escape(incident.get_status_display())}.</p>"
        ]
        affected = [component.display_name for component in incident.components.all()]
        if affected:
            parts.append(f"<p>Affected: {escape(', '.join(affected))}</p>")
        for update in incident.updates.all():
            moment = update.created_at.astimezone(zone).strftime("%d %b %Y, %H:%M %Z")
            parts.append(
                f"<p><strong>{escape(update.get_status_display())}</strong> {escape(moment)}</p>"
                f"{linebreaks(escape(update.body))}"
            )
        return "".join(parts)

    def item_link(self, item: FeedItem) -> str:
        return item.link

    def item_guid(self, item: FeedItem) -> str:
        return item.incident.public_id.urn

    item_guid_is_permalink = False

    def item_pubdate(self, item: FeedItem) -> datetime:
        return item.incident.created_at

    def item_updateddate(self, item: FeedItem) -> datetime:
        return item.incident.updated_at

    def item_categories(self, item: FeedItem) -> tuple[str, ...]:
        return (item.incident.impact, item.incident.status)


def _incident_link(source: FeedSource, incident: PublishedIncident) -> str:
    """Return the incident on the page's history: its year's page, at its anchor."""
    year = incident.created_at.astimezone(ZoneInfo(source.page.time_zone)).year
    return f"{source.url}history/?year={year}#incident-{incident.public_id}"


class IncidentsAtom(IncidentsRss):
    """Draw the page's incident history as Atom 1.0."""

    feed_type = Atom1Feed
