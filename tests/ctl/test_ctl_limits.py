"""The API's published limits (its schema's bounds and the plan) applied to a file's plain fields."""

from __future__ import annotations

import pytest

from uptimy.ctl.limits import Limits
from uptimy.ctl.spec import load

# What /api/v1/schema/ publishes for these fields (HealthcheckRequest), and a plan as /organization/ shows it.
SCHEMA = {
    "interval": {"type": "integer", "minimum": 1, "maximum": 86400},
    "recheck_count": {"type": "integer", "minimum": 0, "maximum": 5},
    "quorum": {"type": ["integer", "null"], "minimum": 1},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 64}, "maxItems": 2},
    "name": {"type": "string", "maxLength": 20},
}
PLAN = {
    "name": "Free",
    "min_interval_seconds": 300,
    "allowed_regions": ["eu-west", "us-east"],
    "max_healthchecks": 2,
}


# What it publishes for the listing's PUT (HealthcheckListingRequest).
LISTING_SCHEMA = {
    "namespace": {"type": "string", "maxLength": 200},
    "quote": {"type": "string", "maxLength": 500},
}


def faults(extra: str, *, name: str = "A") -> list[str]:
    text = f"monitors:\n  - name: {name}\n    type: mcp\n    target: https://a.example/\n    {extra}\n"
    monitors = load(text, env={}).monitors
    limits = Limits(fields=SCHEMA, plan=PLAN, listing_fields=LISTING_SCHEMA)
    return [p.render("m.yaml") for p in limits.problems(monitors)]


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("recheck_count: 6", ["m.yaml:5:5: monitors[0].recheck_count: must be ≤ 5"]),
        ("recheck_count: 5", []),
        ("quorum: 0", ["m.yaml:5:5: monitors[0].quorum: must be ≥ 1"]),
        ("quorum: null", []),
        ("interval: 1m", ["m.yaml:5:5: monitors[0].interval: must be ≥ 300 seconds on the Free plan"]),
        ("interval: 25h", ["m.yaml:5:5: monitors[0].interval: must be ≤ 86400"]),
        ("tags: [a, b, c]", ["m.yaml:5:5: monitors[0].tags: at most 2 items"]),
        (f"tags: [{'x' * 65}]", ["m.yaml:5:5: monitors[0].tags.0: must be at most 64 characters"]),
        (
            f"listing: {{namespace: com.example/a, quote: {'free ' * 101}}}",
            ["m.yaml:5:41: monitors[0].listing.quote: must be at most 500 characters"],
        ),
        (f"listing: {{namespace: com.example/a, quote: {'free ' * 100}}}", []),
        (
            "regions: [eu-west, ap-southeast]",
            [
                "m.yaml:5:5: monitors[0].regions: the Free plan doesn't allow ap-southeast; allowed: eu-west, us-east"
            ],
        ),
    ],
)
def test_a_field_beyond_the_apis_limits_is_refused_at_its_line(extra, expected):
    assert faults(extra) == expected


def test_a_name_longer_than_the_api_takes_is_refused():
    assert faults("tags: []", name="N" * 21) == [
        "m.yaml:2:5: monitors[0].name: must be at most 20 characters"
    ]


def test_more_monitors_than_the_plan_allows_is_refused():
    limits = Limits(fields=SCHEMA, plan=PLAN)

    assert limits.count_problem(after=2) is None
    assert limits.count_problem(after=3).message == "the Free plan allows 2 monitors; applying makes 3"


def test_an_api_that_publishes_no_limits_leaves_them_to_its_answers():
    monitors = load(
        "monitors:\n  - {name: A, type: mcp, target: 'https://a.example/', recheck_count: 99}\n", env={}
    ).monitors

    assert Limits().problems(monitors) == []
