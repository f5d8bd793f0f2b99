"""A missing service or peer skips a test on a developer's machine and fails it in CI."""

from __future__ import annotations

import pytest
from _pytest.outcomes import Failed, Skipped

from tests.conftest import PEERS_SWITCH, SERVICES_SWITCH, service_missing, unavailable


@pytest.mark.parametrize("switch", [SERVICES_SWITCH, PEERS_SWITCH])
@pytest.mark.parametrize(("value", "outcome"), [("1", Failed), ("0", Skipped), (None, Skipped)])
def test_a_missing_dependency_fails_only_where_its_switch_requires_it(monkeypatch, switch, value, outcome):
    if value is None:
        monkeypatch.delenv(switch, raising=False)
    else:
        monkeypatch.setenv(switch, value)

    with pytest.raises(outcome, match="PostgreSQL"):
        unavailable("PostgreSQL is not configured", switch=switch)


def test_a_missing_service_says_how_to_configure_it(monkeypatch):
    monkeypatch.delenv(SERVICES_SWITCH, raising=False)

    with pytest.raises(Skipped, match="DATABASE_URL=postgres://"):
        service_missing("PostgreSQL (DATABASE_URL)")
