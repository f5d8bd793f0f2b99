"""Uptimy's statuses in Statuspage's words: per component, per group, and the page's indicator and sentence."""

from __future__ import annotations

import pytest

from probes.types import Status
from statuspages.render.vocabulary import (
    ComponentStatus,
    Impact,
    Indicator,
    PageStatus,
    component_status,
    group_status,
    page_status,
    shown_status,
)

OP = ComponentStatus.OPERATIONAL
DEGRADED = ComponentStatus.DEGRADED_PERFORMANCE
PARTIAL = ComponentStatus.PARTIAL_OUTAGE
MAJOR = ComponentStatus.MAJOR_OUTAGE
MAINT = ComponentStatus.UNDER_MAINTENANCE


@pytest.mark.parametrize(
    ("status", "regions_down", "in_maintenance", "expected"),
    [
        (Status.UP, 0, False, OP),
        # Slow regions make a degraded verdict with no region down: performance, not outage.
        (Status.DEGRADED, 0, False, DEGRADED),
        # Some regions down, fewer than the quorum: a partial outage.
        (Status.DEGRADED, 1, False, PARTIAL),
        (Status.DEGRADED, 2, False, PARTIAL),
        # A stale down region left the overall verdict up: still some region is down.
        (Status.UP, 1, False, PARTIAL),
        (Status.DOWN, 3, False, MAJOR),
        (Status.DOWN, 0, False, MAJOR),
        # Nothing measured yet, or not measured now: nothing to report.
        (Status.PENDING, 0, False, OP),
        (Status.PAUSED, 0, False, OP),
        (Status.PAUSED, 2, False, OP),
        # Maintenance wins over every verdict.
        (Status.DOWN, 3, True, MAINT),
        (Status.DEGRADED, 1, True, MAINT),
        (Status.UP, 0, True, MAINT),
        (Status.PAUSED, 0, True, MAINT),
    ],
)
def test_component_status_follows_the_verdict_and_its_regions(status, regions_down, in_maintenance, expected):
    assert (
        component_status(status=status, regions_down=regions_down, in_maintenance=in_maintenance) is expected
    )


def test_a_negative_region_count_is_refused():
    with pytest.raises(ValueError, match="regions_down"):
        component_status(status=Status.UP, regions_down=-1, in_maintenance=False)


@pytest.mark.parametrize(
    ("components", "impacts", "indicator", "description"),
    [
        ([], [], Indicator.NONE, "All Systems Operational"),
        ([OP, OP], [], Indicator.NONE, "All Systems Operational"),
        ([OP, DEGRADED], [], Indicator.MINOR, "Partially Degraded Service"),
        ([OP, PARTIAL, DEGRADED], [], Indicator.MINOR, "Minor Service Outage"),
        # Statuspage's own sample answer: one partial and one major outage.
        ([PARTIAL, MAJOR], [], Indicator.MAJOR, "Partial System Outage"),
        ([OP, MAJOR], [], Indicator.MAJOR, "Partial System Outage"),
        ([MAJOR, MAJOR], [], Indicator.CRITICAL, "Major Service Outage"),
        ([MAJOR], [], Indicator.CRITICAL, "Major Service Outage"),
        ([OP, MAINT], [], Indicator.MAINTENANCE, "Service Under Maintenance"),
        # Unplanned trouble outranks planned maintenance.
        ([MAINT, DEGRADED], [], Indicator.MINOR, "Partially Degraded Service"),
        ([MAINT, MAJOR], [], Indicator.MAJOR, "Partial System Outage"),
        # An unresolved incident raises the indicator to its impact, with that level's sentence.
        ([OP], [Impact.MINOR], Indicator.MINOR, "Minor Service Outage"),
        ([OP], [Impact.MAJOR], Indicator.MAJOR, "Partial System Outage"),
        ([OP, DEGRADED], [Impact.CRITICAL], Indicator.CRITICAL, "Major Service Outage"),
        ([MAINT], [Impact.MINOR], Indicator.MINOR, "Minor Service Outage"),
        # An incident no worse than the components leaves their sentence.
        ([DEGRADED], [Impact.MINOR], Indicator.MINOR, "Partially Degraded Service"),
        ([MAJOR, MAJOR], [Impact.MAJOR], Indicator.CRITICAL, "Major Service Outage"),
        # Impact "none" (an informational post) and a maintenance's impact raise nothing.
        ([OP], [Impact.NONE], Indicator.NONE, "All Systems Operational"),
        ([OP], [Impact.MAINTENANCE], Indicator.NONE, "All Systems Operational"),
        ([], [Impact.NONE, Impact.MAJOR, Impact.MINOR], Indicator.MAJOR, "Partial System Outage"),
    ],
)
def test_page_status_blends_components_and_incidents(components, impacts, indicator, description):
    assert page_status(components, impacts) == PageStatus(indicator, description)


def test_page_status_reads_impacts_given_as_text():
    assert page_status([OP], ["critical"]).indicator is Indicator.CRITICAL


@pytest.mark.parametrize(
    ("members", "expected"),
    [
        ([], OP),
        ([OP, OP], OP),
        ([OP, MAINT], MAINT),
        ([MAINT, DEGRADED], DEGRADED),
        ([DEGRADED, PARTIAL, OP], PARTIAL),
        ([PARTIAL, MAJOR], MAJOR),
    ],
)
def test_a_group_shows_its_worst_member(members, expected):
    assert group_status(members) is expected


@pytest.mark.parametrize(
    ("measured", "declared", "shown"),
    [
        # Nothing declared (no open incident names it, nothing set by hand): what the checks measure.
        (OP, (), OP),
        (MAJOR, (), MAJOR),
        (MAINT, (), MAINT),
        # A declaration worse than the measurement shows.
        (OP, (DEGRADED,), DEGRADED),
        (OP, (PARTIAL,), PARTIAL),
        (OP, (MAJOR,), MAJOR),
        (DEGRADED, (PARTIAL,), PARTIAL),
        (OP, (MAINT,), MAINT),
        # A declaration never hides trouble the checks see.
        (MAJOR, (OP,), MAJOR),
        (PARTIAL, (DEGRADED,), PARTIAL),
        (DEGRADED, (OP,), DEGRADED),
        # Unplanned trouble, measured or declared, outranks maintenance.
        (MAINT, (DEGRADED,), DEGRADED),
        (DEGRADED, (MAINT,), DEGRADED),
        # Several open incidents (and a status set by hand): the worst of them all.
        (OP, (DEGRADED, MAJOR, PARTIAL), MAJOR),
        (DEGRADED, (OP, OP), DEGRADED),
    ],
)
def test_a_component_shows_the_worse_of_its_measured_and_declared_status(measured, declared, shown):
    assert shown_status(measured, declared) is shown
