"""Every module of live-server tests restores the database by serialized rollback, or the browser tests break.

A plain transactional test's flush re-creates content types (post_migrate) under new ids; a later
serialized_rollback test (the browser tests, tests/ctl) then fails to restore over them with
"UNIQUE constraint failed: django_content_type". The failure shows far from its cause, in
whichever serialized module runs next, so the rule is pinned here.
"""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
USES_LIVE_SERVER = re.compile(r"def \w+\([^)]*\blive_server\b", re.S)


def test_every_live_server_test_module_uses_serialized_rollback():
    modules = [
        path.relative_to(TESTS).as_posix()
        for path in sorted(TESTS.rglob("*.py"))
        if USES_LIVE_SERVER.search(path.read_text()) and "serialized_rollback=True" not in path.read_text()
    ]

    assert modules == []
