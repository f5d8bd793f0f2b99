"""Fuzz the whole API with hostile bodies: lone surrogates, NUL and deep nesting; never a 5xx.

Schemathesis builds each operation's requests from the OpenAPI schema (as in
test_api_schema_fuzz.py); a second strategy then poisons them: a NUL or a lone surrogate
spliced into any string of the body, or into a new key; any value of the body replaced by
arrays nested 65 to 200,000 deep; a NUL in a query parameter. A body that is parsed must be
refused with a 400, the rest must at least never be a 5xx.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlencode

import pytest
from hypothesis import given
from hypothesis import strategies as st
from schemathesis.core import NotSet

from alerts.models import Channel
from monitors.models import Healthcheck
from tests.fuzzing import fuzz_settings
from tests.monitors.test_api_schema_fuzz import OPERATIONS

SURROGATES = st.integers(0xD800, 0xDFFF).map(chr)
BAD_CHARACTERS = st.one_of(st.just("\x00"), SURROGATES)
DEPTHS = st.sampled_from([65, 100, 1_200, 200_000])
DEEP_MARK = "\x01deep\x01"
# A NUL or a lone surrogate, as json.dumps escapes them.
ALREADY_HOSTILE = re.compile(r"\\u(0000|d[89a-f][0-9a-f]{2})")


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Return the path of every value in a JSON document, the document itself first."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _places(item, (*path, index))
    return found


def _replace(document: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    container = document
    for step in path[:-1]:
        container = container[step]
    container[path[-1]] = new
    return document


@st.composite
def poisoned(draw: st.DrawFn, body: Any) -> tuple[str, Any, str | None]:
    """Return (how, body, deep) for ``body`` with one poison in it; ``deep`` is the nesting to splice in."""
    document = json.loads(json.dumps(body)) if not isinstance(body, NotSet) else {}
    places = _places(document)
    path = draw(st.sampled_from(places))
    target = _at(document, path)
    how = draw(st.sampled_from(["string", "key", "deep"]))
    if how == "deep":
        return how, _replace(document, path, DEEP_MARK), nested(draw(DEPTHS))
    bad = draw(BAD_CHARACTERS)
    if how == "key" and isinstance(target, dict):
        target[f"k{bad}"] = "v"
        return how, document, None
    if isinstance(target, str):
        cut = draw(st.integers(0, len(target)))
        return "string", _replace(document, path, target[:cut] + bad + target[cut:]), None
    if isinstance(target, dict):
        target["poisoned"] = f"v{bad}"
    elif isinstance(target, list):
        target.append(f"v{bad}")
    else:
        document = _replace(document, path, f"v{bad}")
    return "string", document, None


def _at(document: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        document = document[step]
    return document


def _query(query: dict | None) -> str:
    return "?" + urlencode(query, doseq=True) if query else ""


def _parses_body(method: str, path: str, aimed_at_seed: bool) -> bool:
    """Return whether the operation reads its body (after finding its object, for updates).

    No status page is seeded: aimed at one, an id finds nothing and the answer is a 404 before
    any body is read (tests/statuspages/test_api.py sends them hostile bodies of its own).
    """
    if method == "POST":
        return path in ("/api/v1/healthchecks/", "/api/v1/maintenance-windows/", "/api/v1/channels/")
    return method in ("PUT", "PATCH") and aimed_at_seed and not path.startswith("/api/v1/status-pages/")


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda op: f"{op.method.upper()} {op.path}")
def test_no_hostile_body_gets_a_5xx(fuzz_client, operation):
    @given(case=operation.as_strategy(), data=st.data())
    @fuzz_settings(20)
    def send(case, data):
        path_parameters = dict(case.path_parameters or {})
        aimed_at_seed = "id" in path_parameters and data.draw(st.booleans(), label="aim at the seed")
        if aimed_at_seed:
            path_parameters["id"] = fuzz_client.seed_for(case.path)
        path = case.path.format(**path_parameters) if path_parameters else case.path
        how, body, deep = data.draw(poisoned(case.body), label="poison")
        text = json.dumps(body)
        if deep is not None:
            text = text.replace(json.dumps(DEEP_MARK), deep)
        method = case.method.upper()

        response = fuzz_client.generic(
            method, path + _query(case.query), data=text, content_type="application/json"
        )

        assert response.status_code < 500, (method, path, how, text[:300], response.content[:300])
        if _parses_body(method, case.path, aimed_at_seed):
            assert response.status_code == 400, (method, path, how, text[:300], response.content[:300])
            # Schemathesis's own body may already hold a NUL (its key strategy draws any
            # text); then that refusal may come first, and it names its field instead.
            if deep is not None and not ALREADY_HOSTILE.search(text):
                assert "nested too deeply" in response.json()["detail"]

    send()
    # Nothing poisoned was stored: every create and update was refused (DELETE may remove the seed).
    assert set(Healthcheck.objects.values_list("name", flat=True)) <= {"seed"}
    assert set(Channel.objects.values_list("name", flat=True)) <= {"seed"}


@pytest.mark.parametrize(
    "operation",
    [op for op in OPERATIONS if op.method.upper() == "GET"],
    ids=lambda op: f"{op.method.upper()} {op.path}",
)
def test_no_query_with_a_nul_gets_a_5xx(fuzz_client, operation):
    @given(case=operation.as_strategy(), data=st.data())
    @fuzz_settings(12)
    def send(case, data):
        path_parameters = dict(case.path_parameters or {})
        if "id" in path_parameters:
            path_parameters["id"] = fuzz_client.seed_for(case.path)
        path = case.path.format(**path_parameters) if path_parameters else case.path
        query = dict(case.query or {})
        names = [*query, "search", "tag", "type", "status", "region", "cursor", "from", "page"]
        name = data.draw(st.sampled_from(names), label="parameter")
        value = str(query.get(name, ""))
        cut = data.draw(st.integers(0, len(value)), label="at")
        query[name] = value[:cut] + "\x00" + value[cut:]

        response = fuzz_client.get(path + _query(query))

        assert response.status_code == 400, (path, query, response.content[:300])
        assert name in response.json()

    send()
