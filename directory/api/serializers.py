"""The directory's JSON: a server as a list item, and with its 22 checks (the healthcheck scorecard's shape)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rest_framework import serializers

from directory.models import Listing, ListingScorecard
from directory.selectors import CheckRow
from monitors.api.serializers import ScorecardCheckSerializer


class DirectoryCheckSerializer(ScorecardCheckSerializer):
    """One of the checks, as a healthcheck's scorecard gives it, with the rule it was judged by."""

    rule = serializers.CharField(help_text="The check's rule in one line.")


class ServerSerializer(serializers.Serializer[dict[str, Any]]):
    """A listed server and its stored scorecard's figures; null figures before its first scorecard."""

    name = serializers.CharField(help_text="The registry's server name, namespace/name.")
    title = serializers.CharField()
    description = serializers.CharField()
    version = serializers.CharField()
    status = serializers.ChoiceField(choices=["active", "deprecated"])
    status_message = serializers.CharField(help_text="The publisher's message of a deprecated server.")
    remote = serializers.BooleanField(
        help_text="False for a local-only package: the six publisher checks only."
    )
    passed = serializers.IntegerField(allow_null=True)
    total = serializers.IntegerField(allow_null=True)
    core_passed = serializers.IntegerField(
        allow_null=True, help_text="Passed among the connection checks 1–4."
    )
    success_ratio = serializers.FloatField(allow_null=True, help_text="Successes / attempts over 30 days.")
    p50_ms = serializers.FloatField(allow_null=True, help_text="Median successful time over 7 days.")
    p95_ms = serializers.FloatField(allow_null=True, help_text="p95 successful time over 7 days.")
    observed_at = serializers.DateTimeField(allow_null=True, help_text="The latest evidence's time.")
    computed_at = serializers.DateTimeField(allow_null=True, help_text="When the scorecard was computed.")
    page_url = serializers.CharField(help_text="The server's page in the directory.")
    badge_url = serializers.CharField(help_text='The "MCP checks 19/22" SVG badge.')


class ServerDetailSerializer(ServerSerializer):
    """A listed server with its endpoints and each check of its scorecard."""

    website_url = serializers.CharField()
    repository_url = serializers.CharField()
    updated_at = serializers.DateTimeField(
        allow_null=True, help_text="The registry's update timestamp; null when the registry sent none."
    )
    remotes = serializers.ListField(child=serializers.DictField())
    checks = DirectoryCheckSerializer(many=True)


def server_data(
    listing: Listing, card: ListingScorecard | None, *, remote: bool, base: str
) -> dict[str, Any]:
    """Return a server's list item; ``base`` is the directory's absolute URL ("https://host/directory/")."""
    return {
        "name": listing.name,
        "title": listing.title,
        "description": listing.description,
        "version": listing.version,
        "status": listing.status,
        "status_message": listing.status_message,
        "remote": remote,
        "passed": card.passed if card else None,
        "total": card.total if card else None,
        "core_passed": card.core_passed if card else None,
        "success_ratio": card.success_ratio if card else None,
        "p50_ms": card.p50_ms if card else None,
        "p95_ms": card.p95_ms if card else None,
        "observed_at": card.observed_at if card else None,
        "computed_at": card.computed_at if card else None,
        "page_url": f"{base}{listing.name}/",
        "badge_url": f"{base}{listing.name}/badge.svg",
    }


def server_detail_data(
    listing: Listing, card: ListingScorecard | None, rows: list[CheckRow], *, base: str, now: datetime
) -> dict[str, Any]:
    """Return a server's answer: its list item, endpoints, links and checks."""
    remotes = list(listing.remotes.all())
    answer = server_data(listing, card, remote=bool(remotes), base=base)
    answer.update(
        {
            "website_url": listing.website_url,
            "repository_url": listing.repository_url,
            "updated_at": listing.updated_at,
            "remotes": [
                {
                    "url": remote.url,
                    "transport": remote.transport,
                    "templated": remote.templated,
                    "headers_required": remote.headers_required,
                }
                for remote in remotes
            ],
            "checks": [
                {
                    "number": row.number,
                    "name": row.name,
                    "rule": row.rule,
                    "verdict": row.verdict,
                    "observed_at": row.observed_at,
                    "outdated": row.outdated,
                    "outdated_label": row.outdated_label,
                    "reason": row.reason,
                    "evidence": dict(row.evidence),
                }
                for row in rows
            ],
        }
    )
    return dict(ServerDetailSerializer(answer).data)
