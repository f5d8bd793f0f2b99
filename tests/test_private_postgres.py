"""The private PostgreSQL cluster of the fault tests is a service: missing, it skips a test, and fails it in CI."""

from __future__ import annotations

import pytest
from _pytest.outcomes import Failed, Skipped

from tests import conftest


@pytest.mark.parametrize(("value", "outcome"), [("1", Failed), (None, Skipped)])
def test_without_initdb_the_cluster_is_unavailable(monkeypatch, value, outcome):
    monkeypatch.setattr(conftest, "postgres_bin_dir", lambda: None)
    if value is None:
        monkeypatch.delenv(conftest.SERVICES_SWITCH, raising=False)
    else:
        monkeypatch.setenv(conftest.SERVICES_SWITCH, value)

    with pytest.raises(outcome, match="initdb is not installed"), conftest.private_postgres_cluster():
        pass
