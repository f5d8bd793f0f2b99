"""A listing per (name, version) of the Official MCP Registry, its remotes, and the sync's state."""

from __future__ import annotations

import math

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

# The raw entry is kept for inspection and reparsing, up to this many bytes of JSON.
RAW_MAX_BYTES = 64 * 1024


class Listing(models.Model):
    """One (name, version) as the registry last described it; ``deleted`` hides it from the directory."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        DEPRECATED = "deprecated"
        DELETED = "deleted"

    name = models.CharField(max_length=200, help_text="The registry's server name: namespace/name")
    version = models.CharField(max_length=255)
    is_latest = models.BooleanField(default=False)
    title = models.CharField(max_length=1000, blank=True)
    description = models.TextField(blank=True)
    website_url = models.URLField(max_length=2000, blank=True)
    repository_url = models.URLField(max_length=2000, blank=True)
    repository_source = models.CharField(max_length=100, blank=True)
    # [{"registry_type", "identifier", "version", "transport"}]: how a local-only server is run.
    packages = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE)
    status_message = models.CharField(max_length=500, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="The registry's update timestamp (check 21); null: the registry sent none",
    )
    synced_at = models.DateTimeField(help_text="When Uptimy last read this entry from the registry")
    raw = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["name", "version"], name="listing_name_version")]
        indexes = [models.Index(fields=["is_latest", "status"], name="listing_latest_status")]

    def __str__(self) -> str:
        return f"{self.name} {self.version}"

    @property
    def visible(self) -> bool:
        return self.status != self.Status.DELETED

    @property
    def local_only(self) -> bool:
        return not self.remotes.exists()


class ListingRemote(models.Model):
    """One remote endpoint of a listing, in the registry's order: what directory probing will check."""

    class Transport(models.TextChoices):
        STREAMABLE_HTTP = "streamable-http"
        SSE = "sse"

    listing = models.ForeignKey(Listing, on_delete=models.CASCADE, related_name="remotes")
    position = models.PositiveSmallIntegerField()
    transport = models.CharField(max_length=20, choices=Transport.choices)
    url = models.CharField(max_length=2000)
    # A URL with {variables} cannot be probed as it stands: a client fills them in first.
    templated = models.BooleanField(default=False)
    headers_required = models.BooleanField(default=False)
    header_names = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["listing", "position"]
        constraints = [
            models.UniqueConstraint(fields=["listing", "position"], name="remote_listing_position")
        ]

    def __str__(self) -> str:
        return f"{self.transport} {self.url}"


class RegistrySync(models.Model):
    """The sync's state per registry address: the high-water mark incremental syncs ask from."""

    base_url = models.CharField(max_length=500, unique=True)
    updated_since = models.DateTimeField(null=True, blank=True)
    last_full_at = models.DateTimeField(null=True, blank=True)
    last_run_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    def __str__(self) -> str:
        return self.base_url


class RepositoryLicence(models.Model):
    """GitHub's licence lookup of one repository (check 22), shared by every listing linking it."""

    class Status(models.TextChoices):
        DONE = "done"
        FAILED = "failed"
        RATE_LIMITED = "rate_limited"

    # Lowercase: GitHub's owners and repository names are case-insensitive.
    owner = models.CharField(max_length=100)
    repo = models.CharField(max_length=100)
    status = models.CharField(max_length=12, choices=Status.choices)
    spdx_id = models.CharField(max_length=100, blank=True, help_text="Empty: GitHub names no licence")
    # The SPDX License List's OSI flag at lookup time (None: not on the list), and that list's version.
    osi_approved = models.BooleanField(null=True)
    list_version = models.CharField(max_length=40, blank=True)
    reason = models.CharField(max_length=200, blank=True)
    looked_up_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "repo"], name="licence_owner_repo")]

    def __str__(self) -> str:
        return f"{self.owner}/{self.repo}: {self.spdx_id or self.status}"


# --- directory probing (scorecard checks 1–16) ------------------------------------------------------


class ListingProbeState(models.Model):
    """A listing's directory probing: when it is next due, and its latest attempt as the scorecard reads it.

    One narrow row per listing, rewritten by each probe; the windows are ListingProbeHour's
    counts and the tool list ListingToolList's, so a probe never rewrites a long list.
    """

    listing = models.OneToOneField(
        Listing, on_delete=models.CASCADE, primary_key=True, related_name="probe_state"
    )
    next_probe_at = models.DateTimeField(db_index=True)
    # The remote the latest probe reached, and what the engine spoke there.
    url = models.CharField(max_length=2000, blank=True)
    transport = models.CharField(max_length=20, blank=True)
    # The latest attempt (probed_at None: never probed). tool_count None: no tool list came back.
    probed_at = models.DateTimeField(null=True, blank=True)
    tool_count = models.IntegerField(null=True, blank=True)
    http_status = models.SmallIntegerField(null=True, blank=True)
    total_ms = models.FloatField(null=True, blank=True)
    protocol = models.CharField(max_length=40, blank=True)
    server_name = models.CharField(max_length=200, blank=True)
    kind = models.CharField(max_length=40, blank=True)
    reason = models.CharField(max_length=500, blank=True)
    # probes.types.SigninDiscovery's value when a keyless probe found sign-in (check 11).
    signin_discovery = models.CharField(max_length=40, blank=True)
    # When a probe last listed tools: the date of checks 6, 7, 9 and 13–16.
    listed_at = models.DateTimeField(null=True, blank=True)
    # The latest probe not made (robots.txt disallows it, the URL can't be checked), and why.
    skipped_at = models.DateTimeField(null=True, blank=True)
    skipped_reason = models.CharField(max_length=300, blank=True)
    # probes.mcp.session's digests of the latest list: names and required inputs, and every detail.
    tool_digest = models.CharField(max_length=64, blank=True)
    tool_details_digest = models.CharField(max_length=64, blank=True)

    def __str__(self) -> str:
        return f"probing of listing {self.listing_id}"


class ListingProbeHour(models.Model):
    """A listing's probes in one UTC hour, counted as scorecard.AttemptTally counts them (checks 6–9)."""

    listing = models.ForeignKey(Listing, on_delete=models.CASCADE, related_name="probe_hours")
    hour = models.DateTimeField()
    attempts = models.PositiveIntegerField(default=0)
    successes = models.PositiveIntegerField(default=0)
    successes_1s = models.PositiveIntegerField(default=0)
    successes_3s = models.PositiveIntegerField(default=0)
    # Probes not made (robots.txt): no attempt, kept apart so an operator sees them.
    skipped = models.PositiveIntegerField(default=0)
    # The successes' connection-and-discovery times in directory.latency's fixed buckets (sparse
    # [[bucket, count], …]): a window's p50 and p95 are read from the sum of its hours'.
    latency = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["listing", "hour"], name="probe_hour_once")]
        indexes = [models.Index(fields=["hour"], name="probe_hour_hour")]

    def __str__(self) -> str:
        return f"listing {self.listing_id} at {self.hour:%Y-%m-%d %H}:00"


class ListingToolList(models.Model):
    """A listing's current tool list with its details (probes.types.ToolInfo), written only when it changes."""

    listing = models.OneToOneField(
        Listing, on_delete=models.CASCADE, primary_key=True, related_name="tool_list"
    )
    digest = models.CharField(max_length=64)
    tools = models.JSONField(default=list)
    tool_count = models.PositiveIntegerField(default=0)
    current_since = models.DateTimeField()

    def __str__(self) -> str:
        return f"tools of listing {self.listing_id}"


class ListingToolChange(models.Model):
    """A probe found tools removed or top-level inputs newly required (check 9), as monitors.rules.tool_diff tells."""

    listing = models.ForeignKey(Listing, on_delete=models.CASCADE, related_name="tool_changes")
    at = models.DateTimeField()
    removed = models.JSONField(default=list)
    removed_count = models.PositiveIntegerField(default=0)
    added_count = models.PositiveIntegerField(default=0)
    new_required_inputs = models.JSONField(default=dict)
    new_required_inputs_count = models.PositiveIntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["listing", "at"], name="tool_change_listing_at")]

    def __str__(self) -> str:
        return f"tool change of listing {self.listing_id} at {self.at:%Y-%m-%d %H:%M}"


class ResultsField(models.JSONField):
    """A JSONField bulk-inserted with a placeholder per row, not Django's UNNEST of one array per column.

    Django 5.2 inserts many rows on PostgreSQL as ``UNNEST(%s::jsonb[], …)``, and psycopg quotes
    each JSON text into the array's literal character by character: 1,000 scorecards took 1.8 s
    to send, against 0.01 s to insert. A field with ``get_placeholder`` opts the insert out.
    """

    def get_placeholder(self, value: object, compiler: object, connection: object) -> str:
        return "%s"


class ListingScorecard(models.Model):
    """A visible latest listing's stored scorecard: what the directory ranks, lists and draws badges from.

    Written only by ``directory.services.scorecards_recompute``. The directory's order
    (``directory.selectors.RANKING``, the ``scorecard_rank`` index) is passed checks, then core checks (the connection checks 1–4,
    ``monitors.scorecard.CORE_CHECKS``), the sampled success ratio, the p50 then p95 latency (lower first)
    and the latest observation (recency), unknowns last. A local-only listing (``remote`` False)
    holds the six publisher checks and is never ranked with remote ones.
    """

    listing = models.OneToOneField(
        Listing, on_delete=models.CASCADE, primary_key=True, related_name="scorecard"
    )
    remote = models.BooleanField()
    passed = models.PositiveSmallIntegerField()
    total = models.PositiveSmallIntegerField()
    core_passed = models.PositiveSmallIntegerField(help_text="Passed among the connection checks 1–4")
    success_ratio = models.FloatField(
        null=True, blank=True, help_text="Successes / attempts over 30 days; null without attempts"
    )
    p50_ms = models.FloatField(null=True, blank=True, help_text="Median successful time over 7 days")
    p95_ms = models.FloatField(null=True, blank=True, help_text="p95 successful time over 7 days")
    observed_at = models.DateTimeField(null=True, blank=True, help_text="The latest evidence's time")
    # [{"number", "name", "verdict", "observed_at" (ISO or null), "reason", "evidence"}] in check order.
    results = ResultsField(default=list, encoder=DjangoJSONEncoder)
    computed_at = models.DateTimeField()

    # The ranking index ("scorecard_rank": directory.selectors.RANKING column for column, so a page
    # is read in its order) is PostgreSQL's only, as SQLite can't say NULLS LAST in an index:
    # migration 0004 makes it.

    def __str__(self) -> str:
        return f"{self.listing_id}: {self.passed}/{self.total}"

    @property
    def success_percent(self) -> str | None:
        """Return the sampled success as a percentage floored to a tenth ("99.9"), as uptime figures are."""
        if self.success_ratio is None:
            return None
        return f"{math.floor(self.success_ratio * 1000) / 10:.1f}"
