"""Tenancy (Plan, Region, Organization, Membership, ApiKey) and the Healthcheck.

Healthcheck.type is a plain integer validated against the check-type registry (``probes.checks``)
rather than a field with choices, so adding a check type never migrates existing rows.

Over 600 lines on purpose: the app's tables (28 classes) stay in the one module Django, its
migrations and the admin read as the app's schema; the rules live elsewhere (``monitors.rules``,
the services), so each class here is fields, constraints and small properties.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from probes.checks import CheckKind, check_kind
from probes.types import Status


def region_queue(slug: str) -> str:
    """Return the Celery queue that only the workers of region ``slug`` consume."""
    return f"probes.{slug}"


class Region(models.Model):
    """Name a place checks run from; its worker pool consumes the queue ``probes.<slug>``."""

    slug = models.SlugField(max_length=32, unique=True)
    name = models.CharField(max_length=64)
    enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    @property
    def queue(self) -> str:
        return region_queue(self.slug)


class Plan(models.Model):
    """Bound what an organization may run: how many checks, how often, where, kept how long."""

    slug = models.SlugField(max_length=32, unique=True)
    name = models.CharField(max_length=64)
    max_healthchecks = models.PositiveIntegerField()
    min_interval_seconds = models.PositiveIntegerField()
    retention_days = models.PositiveIntegerField(default=30)
    allowed_regions = models.ManyToManyField(Region, related_name="plans")

    class Meta:
        ordering = ["max_healthchecks"]

    def __str__(self) -> str:
        return self.slug


class Organization(models.Model):
    """Own healthchecks, keys and members: the tenant every query is scoped to."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=128)
    plan = models.ForeignKey(Plan, on_delete=models.PROTECT, related_name="organizations")
    created_at = models.DateTimeField(auto_now_add=True)
    # Set by an owner (monitors.services.organization_require_two_factor): a member without a
    # confirmed second factor is sent to enrol before any page of the organization opens.
    require_two_factor = models.BooleanField(default=False)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner"
        ADMIN = "admin"
        MEMBER = "member"
        VIEWER = "viewer"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "organization"], name="membership_unique")]

    def __str__(self) -> str:
        return f"{self.user} in {self.organization} ({self.role})"


class Invitation(models.Model):
    """Ask someone, by email, to join an organization with a role; the link carries a signed public_id."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField(max_length=254)
    role = models.CharField(max_length=16, choices=Membership.Role.choices, default=Membership.Role.MEMBER)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # Inviting an address again replaces its pending invitation (one live link per address).
            models.UniqueConstraint(
                fields=["organization", "email"],
                condition=Q(accepted_at__isnull=True, revoked_at__isnull=True),
                name="invitation_one_pending",
            )
        ]

    def __str__(self) -> str:
        return f"{self.email} to {self.organization} ({self.role})"


class ApiKey(models.Model):
    """Authenticate API calls for one organization; only a SHA-256 of the key is stored."""

    class Scope(models.TextChoices):
        READ = "read"
        READ_WRITE = "read_write"

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=128, blank=True)
    prefix = models.CharField(
        max_length=16, help_text="The first characters of the key, shown to tell keys apart."
    )
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.READ_WRITE)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    # The client address of the use recorded at last_used_at (REMOTE_ADDR, or the ASGI client at /mcp).
    last_used_address = models.GenericIPAddressField(null=True, blank=True)
    # Null: the key never expires. Refused from this instant on (monitors.access_rules.api_key_expired).
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.organization})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @property
    def can_write(self) -> bool:
        return self.scope == self.Scope.READ_WRITE


class SignInSession(models.Model):
    """Remember one signed-in web session of a person, so they can see it and end it.

    ``session_key`` is Django's session key (the database session engine's primary key, so
    storing it here adds no secret the database does not hold already); it is never shown: pages
    and forms name a session by ``public_id``. Rows whose Django session is gone are left out
    of the list (monitors.selectors.sign_in_sessions_of) and pruned at the person's next sign-in.
    """

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sign_in_sessions"
    )
    session_key = models.CharField(max_length=40, unique=True, editable=False)
    created_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    address = models.GenericIPAddressField(null=True, blank=True)
    # The client's text, cleaned and capped (monitors.access_rules.clean_user_agent).
    user_agent = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["-last_seen_at", "-id"]

    def __str__(self) -> str:
        return f"session of {self.user_id} since {self.created_at:%Y-%m-%d %H:%M}"


class Healthcheck(models.Model):
    """Describe one monitored target: what to check, how often, from where; and its state."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="healthchecks")
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200)
    type = models.PositiveSmallIntegerField(
        help_text="The check type's number in the check-type registry (probes.checks)."
    )
    # The API-shaped config without header values; those live encrypted in secret_headers.
    config = models.JSONField(default=dict)
    secret_headers = models.TextField(blank=True, default="", editable=False)
    interval_seconds = models.PositiveIntegerField(default=60)
    regions = models.ManyToManyField(Region, related_name="healthchecks")
    paused = models.BooleanField(default=False)
    status = models.CharField(max_length=16, default=Status.PENDING.value)
    status_changed_at = models.DateTimeField(null=True, blank=True)
    # Rules (monitors.rules): rechecks before a region counts as down, regions that make it
    # down (null: more than half), and the response time above which it is degraded.
    recheck_count = models.PositiveSmallIntegerField(default=2)
    recheck_delay_seconds = models.PositiveSmallIntegerField(default=5)
    quorum = models.PositiveSmallIntegerField(null=True, blank=True)
    degraded_threshold_ms = models.PositiveIntegerField(null=True, blank=True)
    # The schedule: next_check_at is always a slot, slot_offset + k * interval seconds after
    # the epoch, so checks created together spread over their interval (monitors.slots).
    next_check_at = models.DateTimeField(null=True, blank=True)
    slot_offset = models.PositiveIntegerField(default=0)
    tool_digest = models.CharField(max_length=64, blank=True, default="")
    # The current ToolListVersion's digest (probes.mcp.tool_details_digest): details included.
    tool_details_digest = models.CharField(max_length=64, blank=True, default="")
    # The current cause while down or degraded (monitors.rules.cause_of); empty otherwise.
    cause_kind = models.CharField(max_length=32, blank=True, default="")
    cause_reason = models.TextField(blank=True, default="")
    cause_regions = models.JSONField(default=dict, blank=True, help_text="region slug -> failure kind")
    cause_missing_tools = models.JSONField(default=list, blank=True)
    cause_since = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["organization", "-created_at"], name="hc_org_created"),
            # The scheduler's due scan: unpaused rows by next_check_at.
            models.Index(fields=["next_check_at"], name="hc_due", condition=Q(paused=False)),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(interval_seconds__gte=1), name="hc_interval_positive"),
            models.CheckConstraint(
                condition=Q(status__in=[status.value for status in Status]), name="hc_status_known"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def check_type(self) -> CheckKind[Any]:
        return check_kind(self.type)


class SlotVerdict(models.Model):
    """Track a healthcheck's one verdict per slot (monitors.rules.slot_due): the slot last decided,
    and when a slot some region has decided must be decided even if the others stay silent.

    A row of its own, not two healthcheck columns: recording changes it once or twice every slot,
    and an update of the wide healthcheck row (config, secret headers, its indexes) cost recording
    a fifth of its throughput (docs/benchmarks.md, "Scheduling and recording").
    """

    healthcheck = models.OneToOneField(
        Healthcheck, on_delete=models.CASCADE, primary_key=True, related_name="slot_verdict"
    )
    slot = models.DateTimeField(null=True, blank=True, help_text="The latest slot decided.")
    settle_at = models.DateTimeField(
        null=True, blank=True, help_text="When the open slot is decided without the regions still silent."
    )
    held_split = models.BooleanField(
        default=False,
        help_text="The slot last decided split its regions at an outage's start or end and was held "
        "for the next one (monitors.rules.holds_split).",
    )

    class Meta:
        indexes = [
            # The settle scan: the few rows with a slot waiting for a silent region.
            models.Index(
                fields=["settle_at"], name="slot_verdict_settle", condition=Q(settle_at__isnull=False)
            ),
        ]

    def __str__(self) -> str:
        return f"{self.healthcheck_id}: {self.slot} (settles {self.settle_at})"


class HealthcheckTag(models.Model):
    """Label a healthcheck; a row per tag so filtering by tag is an indexed join on every database."""

    healthcheck = models.ForeignKey(Healthcheck, on_delete=models.CASCADE, related_name="tag_rows")
    name = models.CharField(max_length=64)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["healthcheck", "name"], name="hc_tag_unique")]
        indexes = [models.Index(fields=["name"], name="hc_tag_name")]

    def __str__(self) -> str:
        return self.name


class RegionState(models.Model):
    """Keep one region's view of one healthcheck: what the rules read to decide the next verdict."""

    healthcheck = models.ForeignKey(Healthcheck, on_delete=models.CASCADE, related_name="region_states")
    region = models.ForeignKey(Region, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=16, default=Status.PENDING.value)
    since = models.DateTimeField(null=True, blank=True)
    # The newest (slot, attempt) applied: an older or repeated result changes nothing, which is
    # what makes recording idempotent when a worker dies after inserting and the batch reruns.
    last_slot = models.DateTimeField(null=True, blank=True)
    last_attempt = models.PositiveSmallIntegerField(default=0)
    # The slot of the latest decided run (not one awaiting its recheck): what slot verdicts wait on.
    decided_slot = models.DateTimeField(null=True, blank=True)
    last_result_at = models.DateTimeField(null=True, blank=True)
    response_ms = models.FloatField(null=True, blank=True)
    kind = models.CharField(max_length=32, blank=True, default="")
    reason = models.TextField(blank=True, default="")
    missing_tools = models.JSONField(default=list, blank=True)
    # The last TLS certificate this region saw ({serial, sha256, issuer, not_after}; {}: none yet):
    # the recorder compares each result's with it, in the batch's one read of the states.
    certificate = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["healthcheck", "region"], name="region_state_unique")]

    def __str__(self) -> str:
        return f"{self.healthcheck_id}@{self.region_id}: {self.status}"


class ProbeResult(models.Model):
    """Record one check run in one region: the slot it was for, the attempt, and what it found."""

    healthcheck = models.ForeignKey(Healthcheck, on_delete=models.CASCADE, related_name="results")
    region = models.ForeignKey(Region, on_delete=models.PROTECT, related_name="+")
    slot = models.DateTimeField(help_text="The scheduled time this run was for.")
    attempt = models.PositiveSmallIntegerField(
        default=0, help_text="0 for the scheduled run, 1.. for rechecks."
    )
    checked_at = models.DateTimeField()
    recorded_at = models.DateTimeField()
    status = models.CharField(max_length=16)
    kind = models.CharField(max_length=32, blank=True, default="")
    reason = models.TextField(blank=True, default="")
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    server_name = models.CharField(max_length=200, blank=True, default="")
    server_version = models.CharField(max_length=100, blank=True, default="")
    protocol = models.CharField(max_length=16, blank=True, default="")
    access = models.CharField(max_length=8, blank=True, default="")
    signin_server = models.CharField(max_length=2048, blank=True, default="")
    signin_discovery = models.CharField(
        max_length=24,
        blank=True,
        default="",
        help_text="How sign-in was found: 2025-06-18+ (resource metadata) or 2025-03-26-fallback (the origin's).",
    )
    transport = models.CharField(max_length=16, blank=True, default="")
    tool_count = models.PositiveIntegerField(null=True, blank=True)
    tool_digest = models.CharField(max_length=64, blank=True, default="")
    missing_tools = models.JSONField(default=list, blank=True)
    dns_ms = models.FloatField(null=True, blank=True)
    tcp_ms = models.FloatField(null=True, blank=True)
    tls_ms = models.FloatField(null=True, blank=True)
    ttfb_ms = models.FloatField(null=True, blank=True)
    total_ms = models.FloatField(null=True, blank=True)
    in_maintenance = models.BooleanField(
        default=False, help_text="Taken inside a maintenance window: left out of uptime and rollups."
    )
    details = models.JSONField(
        default=dict,
        blank=True,
        help_text="What the check type found beyond the common fields (a certificate, a DNS answer, ping figures).",
    )

    class Meta:
        constraints = [
            # One row per run: a redelivered batch or a doubled tick inserts nothing twice.
            models.UniqueConstraint(fields=["healthcheck", "region", "slot", "attempt"], name="result_once"),
        ]
        indexes = [
            models.Index(fields=["healthcheck", "-slot"], name="result_hc_slot"),
            # Pruning and rollups scan by time.
            models.Index(fields=["slot"], name="result_slot"),
        ]

    def __str__(self) -> str:
        return f"{self.healthcheck_id}@{self.region_id} {self.slot:%Y-%m-%d %H:%M:%S}#{self.attempt}: {self.status}"


# What is kept of a target's tool list (monitors.services.result_capping.storable_outcome): at most
# this many tools, names cut to the length MCP recommends (1–128 characters).
MAX_STORED_TOOLS = 10_000
MAX_TOOL_NAME = 128
# What a ToolChange keeps of each list (the first names, sorted; the counts are whole), so one
# change, and one page of changes, stays small however many names a target rotates.
MAX_CHANGE_NAMES = 100
MAX_CHANGE_INPUTS = 20


class ToolList(models.Model):
    """Store a healthcheck's tool list (at most MAX_STORED_TOOLS tools) once per distinct digest.

    Pruned with the results (monitors.services.results_prune) once no result refers to it.
    """

    healthcheck = models.ForeignKey(Healthcheck, on_delete=models.CASCADE, related_name="tool_lists")
    digest = models.CharField(max_length=64)
    tools = models.JSONField(help_text='[{"name": …, "required_inputs": […]}, …]')
    first_seen_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["healthcheck", "digest"], name="tool_list_once")]

    def __str__(self) -> str:
        return f"{self.healthcheck_id}: {self.digest[:12]}"


# Replaced tool list versions kept per healthcheck (the current one aside): a server that rewords
# its tools on every run stores at most this many capped lists, not one per result.
MAX_REPLACED_VERSIONS = 20


class ToolListVersion(models.Model):
    """Store each distinct version of a healthcheck's tool list, details included, once.

    A version is told by the outcome's ``tool_details_digest`` (names, required inputs,
    descriptions, schemas, hints), so a changed description is a new version where ToolList (by
    names and required inputs) sees none. The recorder writes it only when a result's list
    differs from the check's current one (``Healthcheck.tool_details_digest``): an unchanged
    list costs no write. ``tools`` holds what the engine kept, at most MAX_STORED_TOOLS tools
    within probes.mcp.tools' caps; each ``input_schema`` is the server's JSON text, as a string,
    since jsonb would reorder its keys. The current version has no ``replaced_at``; a list that
    comes back is current again from ``current_since``. At most MAX_REPLACED_VERSIONS replaced
    versions are kept per check, and those are pruned with the results
    (monitors.services.results_prune).
    """

    healthcheck = models.ForeignKey(Healthcheck, on_delete=models.CASCADE, related_name="tool_list_versions")
    digest = models.CharField(max_length=64)
    tools = models.JSONField(
        help_text='[{"name", "required_inputs", "description", "input_schema" (JSON text), '
        '"read_only_hint", "destructive_hint", "description_kept", "schema_kept"}, …]'
    )
    tool_count = models.PositiveIntegerField()
    first_seen_at = models.DateTimeField()
    current_since = models.DateTimeField(help_text="When this list last became the check's current one.")
    replaced_at = models.DateTimeField(
        null=True, blank=True, help_text="When another list replaced it; empty while it is current."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["healthcheck", "digest"], name="tool_list_version_once")
        ]
        indexes = [models.Index(fields=["healthcheck", "-current_since"], name="tool_version_hc_current")]

    def __str__(self) -> str:
        return f"{self.healthcheck_id}: {self.digest[:12]} ({self.tool_count} tools)"


class ToolChange(models.Model):
    """Record that a tool was removed or gained a required input, even while the check stays up."""

    healthcheck = models.ForeignKey(Healthcheck, on_delete=models.CASCADE, related_name="tool_changes")
    at = models.DateTimeField()
    region = models.ForeignKey(Region, on_delete=models.PROTECT, related_name="+")
    previous_digest = models.CharField(max_length=64)
    digest = models.CharField(max_length=64)
    removed = models.JSONField(
        default=list, help_text=f"The first {MAX_CHANGE_NAMES} removed tools, by name."
    )
    removed_count = models.PositiveIntegerField(default=0)
    added = models.JSONField(default=list, help_text=f"The first {MAX_CHANGE_NAMES} added tools, by name.")
    added_count = models.PositiveIntegerField(default=0)
    new_required_inputs = models.JSONField(
        default=dict, help_text=f"The first {MAX_CHANGE_NAMES} tools that gained required inputs."
    )
    new_required_inputs_count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["healthcheck", "-at"], name="tool_change_hc_at")]

    def __str__(self) -> str:
        return f"{self.healthcheck_id} at {self.at}: -{self.removed}"


class CertificateChange(models.Model):
    """Record that a region saw the check's TLS certificate replaced (another SHA-256 fingerprint).

    Compared per region: regions served by different edges, each with its own certificate, record
    nothing until one of theirs changes. The first certificate a region sees records nothing.
    """

    healthcheck = models.ForeignKey(Healthcheck, on_delete=models.CASCADE, related_name="certificate_changes")
    at = models.DateTimeField()
    region = models.ForeignKey(Region, on_delete=models.PROTECT, related_name="+")
    previous_serial = models.CharField(max_length=128, blank=True, default="")
    serial = models.CharField(max_length=128, blank=True, default="")
    previous_sha256 = models.CharField(max_length=128, blank=True, default="")
    sha256 = models.CharField(max_length=128, blank=True, default="")
    previous_issuer = models.TextField(blank=True, default="")
    issuer = models.TextField(blank=True, default="")
    previous_not_after = models.DateTimeField(null=True, blank=True)
    not_after = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["healthcheck", "-at"], name="cert_change_hc_at")]

    def __str__(self) -> str:
        return f"{self.healthcheck_id} at {self.at}: {self.previous_serial} -> {self.serial}"


class StatusChange(models.Model):
    """Record every change of a healthcheck's status: the outbox that alerts claim and deliver."""

    healthcheck = models.ForeignKey(Healthcheck, on_delete=models.CASCADE, related_name="status_changes")
    at = models.DateTimeField()
    from_status = models.CharField(max_length=16)
    to_status = models.CharField(max_length=16)
    reason = models.TextField(blank=True, default="", help_text="The verdict's sentence over the regions.")
    failed_regions = models.JSONField(default=dict, help_text="region slug -> failure kind")
    missing_tools = models.JSONField(default=list)
    # The new status's cause as the recorder decided it (monitors.rules.cause_of): empty unless
    # down or degraded. Readers (alerts) take it as is instead of deriving it again.
    cause_kind = models.CharField(max_length=32, blank=True, default="")
    cause_reason = models.TextField(
        blank=True,
        default="",
        help_text='The failure\'s own sentence: "Required tools missing: search_docs".',
    )
    # When the new status's cause began, as the healthcheck's cause_since says after this change
    # (a cause that stays, degraded to down for the same failure, keeps its start); null unless
    # down or degraded, and on rows written before it was kept.
    cause_since = models.DateTimeField(null=True, blank=True)
    failed_reasons = models.JSONField(
        default=dict, blank=True, help_text="region slug -> the sentence of that region's failure"
    )
    # Where downtime really began or ended, read from the raw results as the change is written:
    # into down, the first failing result that led to it; out of down, the first good result of
    # the recovery. Null for other changes, for rows written before, or when the results did not
    # say; uptime then bounds the change from the results still kept (monitors.selectors.uptime_history).
    effective_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["healthcheck", "-at"], name="status_change_hc_at")]

    def __str__(self) -> str:
        return f"{self.healthcheck_id}: {self.from_status} -> {self.to_status} at {self.at}"


class CauseChange(models.Model):
    """Record that a failing check's cause changed while its status did not: the outbox beside StatusChange.

    E.g. connection refused, then the server answers but a required tool is missing. A cause
    change is a change of the failures' kinds or of the missing tools (monitors.rules.Cause).
    """

    healthcheck = models.ForeignKey(Healthcheck, on_delete=models.CASCADE, related_name="cause_changes")
    at = models.DateTimeField()
    status = models.CharField(max_length=16, help_text="The status, unchanged: down or degraded.")
    from_kind = models.CharField(max_length=32, blank=True, default="")
    to_kind = models.CharField(max_length=32, blank=True, default="")
    reason = models.TextField(blank=True, default="")
    failed_regions = models.JSONField(default=dict, help_text="region slug -> failure kind")
    failed_reasons = models.JSONField(
        default=dict, blank=True, help_text="region slug -> the sentence of that region's failure"
    )
    missing_tools = models.JSONField(default=list)
    previous_reason = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["healthcheck", "-at"], name="cause_change_hc_at")]

    def __str__(self) -> str:
        return f"{self.healthcheck_id}: {self.from_kind} -> {self.to_kind} at {self.at}"


class Rollup(models.Model):
    """Summarize an hour or a day of one healthcheck's results in one region; kept after pruning."""

    class Period(models.TextChoices):
        HOUR = "hour"
        DAY = "day"

    healthcheck = models.ForeignKey(Healthcheck, on_delete=models.CASCADE, related_name="rollups")
    region = models.ForeignKey(Region, on_delete=models.PROTECT, related_name="+")
    period = models.CharField(max_length=4, choices=Period.choices)
    start = models.DateTimeField()
    runs = models.PositiveIntegerField(default=0)
    failures = models.PositiveIntegerField(default=0)
    degraded = models.PositiveIntegerField(default=0)
    p50_ms = models.FloatField(null=True, blank=True)
    p95_ms = models.FloatField(null=True, blank=True)
    # Response-time histogram (monitors.latency buckets) so a day's percentiles come from
    # its hours without rereading raw results, which are pruned.
    histogram = models.JSONField(default=list)
    # The MCP scorecard's evidence (monitors.scorecard, issue 14), per attempt rather than per
    # slot: every result counts, rechecks included, except skipped ones (in a maintenance window,
    # or a config Uptimy could not run) and 401/403 answers. A success is an attempt whose tool
    # list came back; the 1 s and 3 s counts are successes whose connection-and-discovery time
    # (total_ms) was at or under that, so nearest-rank p50/p95 verdicts need no raw results.
    # Null on rows rolled up before these counts existed: the windows skip those hours.
    attempts = models.PositiveIntegerField(null=True, blank=True)
    successes = models.PositiveIntegerField(null=True, blank=True)
    successes_1s = models.PositiveIntegerField(null=True, blank=True)
    successes_3s = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["healthcheck", "region", "period", "start"], name="rollup_once")
        ]
        indexes = [models.Index(fields=["healthcheck", "period", "start"], name="rollup_hc_period_start")]

    def __str__(self) -> str:
        return f"{self.healthcheck_id}@{self.region_id} {self.period} {self.start}"

    @property
    def uptime(self) -> float | None:
        return (self.runs - self.failures) / self.runs if self.runs else None


class OutboxBatch(models.Model):
    """Hold a region's batch until it is handed to the region's workers: the dispatcher's outbox.

    The claim writes its batches here in the transaction that moves the schedule; the
    dispatcher publishes them right after commit and deletes them. A row still here at
    ``publish_after`` was not handed over (its dispatcher died, the broker refused it), and the
    next tick publishes it (monitors.worker.outbox).
    """

    region = models.CharField(max_length=32, help_text="The slug of the region whose queue takes the batch.")
    items = models.JSONField(help_text="[[healthcheck_id, slot_iso, attempt], …], as a message carries them.")
    created_at = models.DateTimeField()
    # A grace after the claim (its own dispatcher publishes it at once), a recheck's delay, or
    # a grace after a tick took it: no other tick takes the row before.
    publish_after = models.DateTimeField()
    republished = models.PositiveIntegerField(default=0, help_text="How many times a later tick took it.")

    class Meta:
        indexes = [models.Index(fields=["publish_after"], name="outbox_due")]

    def __str__(self) -> str:
        return f"{self.region}: {len(self.items)} runs, after {self.publish_after}"


class MaintenanceWindow(models.Model):
    """Mark when chosen healthchecks are under maintenance: once, or by an RFC 5545 rule in a time zone.

    Results taken inside a window are recorded with ``in_maintenance`` and left out of uptime;
    checks keep running and status changes are still recorded (alerts hold them back). The
    schedule's rules are pure (monitors.maintenance); ``ends_at`` is stored for the time filter.
    """

    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="maintenance_windows"
    )
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    starts_at = models.DateTimeField(help_text="The start of the window, or of the rule's first occurrence.")
    duration = models.DurationField(help_text="How long the window, or each occurrence, lasts.")
    rrule = models.CharField(
        max_length=500, blank=True, default="", help_text="An RFC 5545 RRULE; empty for a one-off window."
    )
    timezone = models.CharField(max_length=64, default="UTC", help_text="The IANA zone the rule runs in.")
    # When the last occurrence ends (for UNTIL, a bound past it); null while the series never ends.
    # Derived from the schedule on every write: the recorder's time filter reads it.
    ends_at = models.DateTimeField(null=True, blank=True)
    healthchecks = models.ManyToManyField(Healthcheck, related_name="maintenance_windows", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-starts_at", "-id"]
        indexes = [
            # The recorder's and the selectors' scan: an organization's windows not over yet.
            models.Index(fields=["organization", "ends_at", "starts_at"], name="maintenance_org_ends"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(duration__gt=timedelta(0)), name="maintenance_duration_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class MaintenanceWindowTag(models.Model):
    """Apply a window to every healthcheck with this tag, now or later; a row per tag, like HealthcheckTag."""

    window = models.ForeignKey(MaintenanceWindow, on_delete=models.CASCADE, related_name="tag_rows")
    name = models.CharField(max_length=64)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["window", "name"], name="maintenance_tag_unique")]

    def __str__(self) -> str:
        return self.name


class HealthcheckListing(models.Model):
    """A customer's own listing of their MCP server: the publisher evidence of its scorecard (checks 12, 17–22).

    What the customer enters (namespace, website, repository, pricing page and the free-tier
    quote) and what Uptimy found when it last fetched the pricing page: ``quote_checked_at``
    (the last fetch), ``quote_found_at`` (the last fetch that found the quote: check 12's date,
    kept when a later fetch does not find it) and ``quote_problem`` (why the last fetch did not).
    """

    healthcheck = models.OneToOneField(Healthcheck, on_delete=models.CASCADE, related_name="listing")
    namespace = models.CharField(max_length=200, help_text="The registry-style server name, namespace/name")
    website_url = models.CharField(max_length=2000, blank=True)
    repository_url = models.CharField(max_length=2000, blank=True)
    pricing_url = models.CharField(max_length=2000, blank=True)
    quote = models.CharField(max_length=500, blank=True)
    quote_checked_at = models.DateTimeField(null=True, blank=True)
    quote_found_at = models.DateTimeField(null=True, blank=True)
    quote_problem = models.CharField(max_length=300, blank=True)
    # When the pricing page is next fetched: soon after the quote is entered, then daily.
    quote_due_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["quote_due_at"], name="listing_quote_due", condition=~Q(pricing_url=""))
        ]

    def __str__(self) -> str:
        return self.namespace


class TwoFactor(models.Model):
    """Hold an account's TOTP second factor: the secret (encrypted), when it was confirmed, the last step used.

    A row without ``confirmed_at`` is an enrolment in progress: it signs nobody in until a
    current code has proven the authenticator holds the secret.
    """

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="two_factor")
    # The base32 TOTP secret, encrypted with UPTIMY_SECRETS_KEY (monitors.secrets); never shown
    # again once confirmed, never in the API or a log.
    secret = models.TextField()
    created_at = models.DateTimeField()
    confirmed_at = models.DateTimeField(null=True, blank=True)
    # The RFC 6238 time step of the last code accepted: a code of this step or an earlier one is
    # refused, so a code seen over a shoulder can't be used again within its window.
    last_used_step = models.BigIntegerField(null=True, blank=True)

    def __str__(self) -> str:
        return f"two-factor of {self.user} ({'on' if self.confirmed_at else 'enrolling'})"


class RecoveryCode(models.Model):
    """Let a person in once without their authenticator: only the code's SHA-256 is stored."""

    two_factor = models.ForeignKey(TwoFactor, on_delete=models.CASCADE, related_name="recovery_codes")
    code_hash = models.CharField(max_length=64)
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["two_factor", "code_hash"], name="recovery_code_unique")
        ]

    def __str__(self) -> str:
        return f"recovery code of {self.two_factor.user} ({'used' if self.used_at else 'unused'})"


class RateCounter(models.Model):
    """One rate limit's count in its current window, for the embedded default (no Redis): monitors.ratelimit.

    A window opens at its first attempt and lasts until ``expires_at``; the row is raised under
    its own lock (``SELECT … FOR UPDATE``, or SQLite's write lock), so parallel attempts on any
    number of processes each see the count the one before left.
    """

    key = models.CharField(max_length=200, unique=True)
    count = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.key}: {self.count}"


class AuditEventImmutable(Exception):
    """Refuse an edit or a removal of an audit event outside the retention's pruning."""


class AuditEventQuerySet(models.QuerySet["AuditEvent"]):
    """Refuse ``update()`` and ``delete()``: an event is written once and only retention removes it."""

    def update(self, **kwargs: Any) -> int:
        raise AuditEventImmutable("Audit events are never changed.")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AuditEventImmutable(
            "Audit events are removed only by their retention (monitors.services.audit_prune)."
        )

    def retention_delete(self) -> int:
        """Delete these events: the one way out, for ``audit_prune`` alone."""
        return super().delete()[0]


class AuditEvent(models.Model):
    """Record one change made in an organization: who, what, when, from where, before and after (secrets masked).

    Written by ``monitors.services.audit_record`` in the transaction of the change it records.
    Actor and target are kept by value (names, public ids) as well as by link, so an event still
    says who and what after the key is revoked, the person leaves or the object is deleted.
    """

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="audit_events")
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    at = models.DateTimeField()
    action = models.CharField(max_length=64, help_text="<object type>.<verb>, such as healthcheck.updated.")
    actor_kind = models.CharField(max_length=16)
    # The person: the one signed in, or the one an OAuth client acts for.
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    actor_email = models.CharField(max_length=254, blank=True)
    actor_api_key = models.ForeignKey(
        ApiKey, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    actor_api_key_public_id = models.UUIDField(null=True, blank=True)
    actor_oauth_client_id = models.CharField(max_length=2000, blank=True)
    actor_label = models.CharField(
        max_length=300, help_text="Who, as shown: an address, a key's prefix and name."
    )
    via = models.CharField(max_length=16)
    address = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=300, blank=True)  # access_rules.USER_AGENT_MAX
    target_type = models.CharField(max_length=64)
    target_id = models.CharField(max_length=2000, blank=True)
    target_name = models.CharField(max_length=300, blank=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["organization", "-at", "-id"], name="audit_org_at"),
            models.Index(fields=["organization", "target_type", "target_id"], name="audit_org_target"),
            # Retention's scan: the oldest events, all organizations.
            models.Index(fields=["at"], name="audit_at"),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.target_name or self.target_id} by {self.actor_label}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AuditEventImmutable("Audit events are never changed.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AuditEventImmutable(
            "Audit events are removed only by their retention (monitors.services.audit_prune)."
        )


class Heartbeat(models.Model):
    """Keep a heartbeat check's ping id and what its judge needs: a narrow row pings update, never the healthcheck's.

    A ping raises ``ping_count`` and its rate window (one UPDATE, no lock on the healthcheck row); the beat's judge
    (monitors.services.heartbeats) takes the rows whose count is past ``judged_count`` or whose
    ``due_at`` has passed.
    """

    healthcheck = models.OneToOneField(
        Healthcheck, on_delete=models.CASCADE, primary_key=True, related_name="heartbeat"
    )
    # The unguessable id in the ping URL: its own UUID, not the public id, so it can be rotated.
    ping_id = models.UUIDField(default=uuid.uuid4, unique=True)
    ping_count = models.PositiveBigIntegerField(default=0)
    judged_count = models.PositiveBigIntegerField(default=0)
    last_start_at = models.DateTimeField(null=True, blank=True)
    due_at = models.DateTimeField(
        null=True, blank=True, help_text="When the heartbeat is late without a ping."
    )
    # The pings' rate limit, in the row each ping updates anyway: a fixed window that opens at its
    # first ping (as monitors.ratelimit's), without a counter row or a Redis call of its own.
    window_start = models.DateTimeField(null=True, blank=True)
    window_count = models.PositiveIntegerField(default=0)

    class Meta:
        indexes = [
            models.Index(fields=["due_at"], name="heartbeat_due", condition=Q(due_at__isnull=False)),
            # The judge's other half: the rows pinged since it last looked, found without a scan of
            # every heartbeat (the partial index holds only those, and each ping's UPDATE files it).
            models.Index(
                fields=["healthcheck"], name="heartbeat_pinged", condition=Q(ping_count__gt=F("judged_count"))
            ),
        ]

    def __str__(self) -> str:
        return f"{self.healthcheck_id}: due {self.due_at}"


class Ping(models.Model):
    """Record one ping a heartbeat's job sent: when, what it said, from where, and the body it carried (capped)."""

    healthcheck = models.ForeignKey(Healthcheck, on_delete=models.CASCADE, related_name="pings")
    at = models.DateTimeField()
    kind = models.CharField(
        max_length=8, help_text="success, start, fail or exit (probes.heartbeats.PingKind)."
    )
    exit_status = models.PositiveSmallIntegerField(null=True, blank=True)
    source = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=300, blank=True, default="")
    body = models.TextField(blank=True, default="")
    duration_seconds = models.FloatField(null=True, blank=True, help_text="Since the run's /start, if any.")

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["healthcheck", "-at"], name="ping_hc_at")]

    def __str__(self) -> str:
        return f"{self.healthcheck_id}: {self.kind} at {self.at}"
