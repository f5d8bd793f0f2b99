"""Say Uptimy's statuses in Atlassian Statuspage's vocabulary, per component and for the whole page.

Statuspage's public API documents the page indicator as one of ``none``, ``minor``, ``major``
or ``critical`` with "a human description of the blended component status", and gives "All
Systems Operational", "Partial System Outage" and "Major Service Outage" as examples; its own
sample answer shows a page with one ``partial_outage`` and one ``major_outage`` component as
``major`` / "Partial System Outage". Live Statuspage pages also answer ``minor`` / "Partially
Degraded Service", ``minor`` / "Minor Service Outage" and, while only maintenance is going on,
``maintenance`` / "Service Under Maintenance", which clients of the format already read. The
blend below reproduces those pairs:

========================================  ===========  ===========================
worst component status                    indicator    description
========================================  ===========  ===========================
every component ``major_outage``          critical     Major Service Outage
some component ``major_outage``           major        Partial System Outage
some component ``partial_outage``         minor        Minor Service Outage
some component ``degraded_performance``   minor        Partially Degraded Service
some component ``under_maintenance``      maintenance  Service Under Maintenance
otherwise (or no components)              none         All Systems Operational
========================================  ===========  ===========================

An unresolved published incident raises the indicator to its impact (``minor``, ``major``,
``critical``; ``none`` raises nothing), and a raised indicator takes that level's sentence.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from probes.types import Status


class ComponentStatus(StrEnum):
    """Name a component's status as Statuspage does."""

    OPERATIONAL = "operational"
    DEGRADED_PERFORMANCE = "degraded_performance"
    PARTIAL_OUTAGE = "partial_outage"
    MAJOR_OUTAGE = "major_outage"
    UNDER_MAINTENANCE = "under_maintenance"


class Impact(StrEnum):
    """Name a published incident's impact (``maintenance`` is a scheduled maintenance's)."""

    NONE = "none"
    MINOR = "minor"
    MAJOR = "major"
    CRITICAL = "critical"
    MAINTENANCE = "maintenance"


class Indicator(StrEnum):
    """Name the page's ``status.indicator``."""

    NONE = "none"
    MAINTENANCE = "maintenance"
    MINOR = "minor"
    MAJOR = "major"
    CRITICAL = "critical"


# Worst last: maintenance is planned and announced, so any unplanned trouble outranks it.
_SEVERITY = (Indicator.NONE, Indicator.MAINTENANCE, Indicator.MINOR, Indicator.MAJOR, Indicator.CRITICAL)

ALL_OPERATIONAL = "All Systems Operational"
UNDER_MAINTENANCE = "Service Under Maintenance"
PARTIALLY_DEGRADED = "Partially Degraded Service"
MINOR_OUTAGE = "Minor Service Outage"
PARTIAL_OUTAGE = "Partial System Outage"
MAJOR_OUTAGE = "Major Service Outage"

# The sentence of an indicator raised by an incident rather than by the components.
_INDICATOR_SENTENCE = {
    Indicator.NONE: ALL_OPERATIONAL,
    Indicator.MAINTENANCE: UNDER_MAINTENANCE,
    Indicator.MINOR: MINOR_OUTAGE,
    Indicator.MAJOR: PARTIAL_OUTAGE,
    Indicator.CRITICAL: MAJOR_OUTAGE,
}

_IMPACT_INDICATOR = {
    Impact.NONE: Indicator.NONE,
    Impact.MINOR: Indicator.MINOR,
    Impact.MAJOR: Indicator.MAJOR,
    Impact.CRITICAL: Indicator.CRITICAL,
    # A scheduled maintenance speaks through its components' under_maintenance, not as an incident.
    Impact.MAINTENANCE: Indicator.NONE,
}


@dataclass(frozen=True)
class PageStatus:
    """Hold the page's ``status`` object: the indicator and its sentence."""

    indicator: Indicator
    description: str


def component_status(*, status: Status, regions_down: int, in_maintenance: bool) -> ComponentStatus:
    """Return a component's Statuspage status from its healthcheck's overall status and its regions.

    Maintenance wins (the checks' verdicts are not news while the customer works on the service).
    ``down`` is a major outage. Any region down without the overall verdict being ``down`` is a
    partial outage: the quorum said "some regions", even when a stale down region left the
    overall verdict ``up``. ``degraded`` with no region down (slow regions) is degraded
    performance. ``pending`` and ``paused`` have nothing to report and read operational; the
    bars show those days as "no data", never as uptime.
    """
    if regions_down < 0:
        raise ValueError(f"regions_down must not be negative, not {regions_down}")
    if in_maintenance:
        return ComponentStatus.UNDER_MAINTENANCE
    if status is Status.DOWN:
        return ComponentStatus.MAJOR_OUTAGE
    if regions_down and status in (Status.UP, Status.DEGRADED):
        return ComponentStatus.PARTIAL_OUTAGE
    if status is Status.DEGRADED:
        return ComponentStatus.DEGRADED_PERFORMANCE
    return ComponentStatus.OPERATIONAL


def _blend(components: Sequence[ComponentStatus]) -> PageStatus:
    present = set(components)
    if ComponentStatus.MAJOR_OUTAGE in present:
        if present == {ComponentStatus.MAJOR_OUTAGE}:
            return PageStatus(Indicator.CRITICAL, MAJOR_OUTAGE)
        return PageStatus(Indicator.MAJOR, PARTIAL_OUTAGE)
    if ComponentStatus.PARTIAL_OUTAGE in present:
        return PageStatus(Indicator.MINOR, MINOR_OUTAGE)
    if ComponentStatus.DEGRADED_PERFORMANCE in present:
        return PageStatus(Indicator.MINOR, PARTIALLY_DEGRADED)
    if ComponentStatus.UNDER_MAINTENANCE in present:
        return PageStatus(Indicator.MAINTENANCE, UNDER_MAINTENANCE)
    return PageStatus(Indicator.NONE, ALL_OPERATIONAL)


def page_status(components: Iterable[ComponentStatus], incident_impacts: Iterable[Impact] = ()) -> PageStatus:
    """Return the page's indicator and sentence from its components and its unresolved published incidents.

    Pass the leaf components only (a group's status is its members' blend, not a vote of its
    own) and the impacts of the incidents that are published and not yet resolved.
    """
    blended = _blend(tuple(components))
    raised = max(
        (_IMPACT_INDICATOR[Impact(impact)] for impact in incident_impacts),
        key=_SEVERITY.index,
        default=Indicator.NONE,
    )
    if _SEVERITY.index(raised) > _SEVERITY.index(blended.indicator):
        return PageStatus(raised, _INDICATOR_SENTENCE[raised])
    return blended


# Best first: maintenance is planned and announced, so any unplanned trouble outranks it.
_COMPONENT_ORDER = (
    ComponentStatus.OPERATIONAL,
    ComponentStatus.UNDER_MAINTENANCE,
    ComponentStatus.DEGRADED_PERFORMANCE,
    ComponentStatus.PARTIAL_OUTAGE,
    ComponentStatus.MAJOR_OUTAGE,
)


def worst_status(statuses: Iterable[ComponentStatus]) -> ComponentStatus:
    """Return the worst of ``statuses`` (operational when there are none)."""
    return max(
        (ComponentStatus(s) for s in statuses),
        key=_COMPONENT_ORDER.index,
        default=ComponentStatus.OPERATIONAL,
    )


def group_status(members: Iterable[ComponentStatus]) -> ComponentStatus:
    """Return a component group's status: its worst member's (operational when it has none)."""
    return worst_status(members)


def shown_status(measured: ComponentStatus, declared: Iterable[ComponentStatus] = ()) -> ComponentStatus:
    """Return the status a component is shown with: the worse of the measured one and those its owners declared.

    ``declared`` holds the status the owner set by hand (if any) and, for each published
    incident still open, the status its latest update naming the component gave it; a resolved
    incident declares nothing, so the component goes back to what its checks measure. A
    declaration never hides trouble the checks see: "operational" declared over a measured
    outage still shows the outage.
    """
    return worst_status((measured, *declared))
