"""A check type only a test registers gets its own tab in the healthcheck form, drawn from its FormFields."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from monitors.models import Healthcheck
from probes.checks import CheckKind, register, unregister
from probes.checks.form import FormField, Widget
from probes.config import ConfigError, config_fields, headers_field, timeout_field, uri_field
from probes.connection import Connection, uri_host
from probes.types import Headers, ProbeOutcome, Status

pytestmark = pytest.mark.django_db
KEYS = frozenset(
    {"uri", "word", "note", "count", "ratio", "mode", "loud", "items", "codes", "extra", "headers"}
)


@dataclass(frozen=True, slots=True)
class WidgetsConfig:
    uri: str
    word: str
    values: tuple[tuple[str, Any], ...] = ()
    headers: Headers = ()
    timeout: float = 5.0

    @property
    def target(self) -> str:
        return self.uri

    @property
    def host(self) -> str:
        return uri_host(self.uri)


def parse(raw: object) -> WidgetsConfig:
    data, errors = config_fields(raw, KEYS)
    uri = uri_field(data, errors)
    headers = headers_field(data.get("headers"), errors)
    word = data.get("word")
    if not isinstance(word, str) or word == "bad":
        errors["word"] = "Must not be bad."
    timeout_field(5, errors)
    if errors:
        raise ConfigError(errors)
    rest = tuple(sorted((k, v) for k, v in data.items() if k not in ("uri", "word", "headers")))
    return WidgetsConfig(uri=uri, word=str(word), values=rest, headers=headers)


def to_api(config: WidgetsConfig) -> dict[str, Any]:
    return {"uri": config.uri, "word": config.word, "headers": dict(config.headers), **dict(config.values)}


async def run(config: WidgetsConfig, conn: Connection, *, deadline: float) -> ProbeOutcome:
    return ProbeOutcome(status=Status.UP)


FORM = (
    FormField("uri", "uri", "Widget URL", Widget.URL, required=True),
    FormField("word", "word", "The word", Widget.TEXT, help="Any word but bad."),
    FormField("note", "note", "A note", Widget.TEXTAREA),
    FormField("count", "count", "A count", Widget.INTEGER),
    FormField("ratio", "ratio", "A ratio", Widget.NUMBER),
    FormField("mode", "mode", "A mode", Widget.CHOICE, choices=("fast", "slow")),
    FormField("loud", "loud", "Loud", Widget.CHECKBOX),
    FormField("items", "items", "Items", Widget.LINES),
    FormField("codes", "codes", "Codes", Widget.CODES),
    FormField("extra", "extra", "Extra JSON", Widget.JSON),
    FormField("headers", "headers", "Request headers", Widget.HEADERS),
)


@pytest.fixture
def widgets() -> Iterator[CheckKind[WidgetsConfig]]:
    kind = register(
        CheckKind(
            number=98,
            name="widgets",
            title="Widgets check",
            config_type=WidgetsConfig,
            parse=parse,
            to_api=to_api,
            schema={"type": "object", "properties": {}},
            run=run,
            form=FORM,
        )
    )
    yield kind
    unregister(kind)


FORM_DATA = {
    "type": "widgets",
    "name": "Widgets",
    "uri": "https://widgets.example/",
    "word": "hello",
    "note": "two\nlines",
    "count": "3",
    "ratio": "0.5",
    "mode": "slow",
    "loud": "on",
    "items": "a\nb, c",
    "codes": "200, 2xx",
    "extra": '{"k": [1]}',
    "header_name_0": "X-Key",
    "header_value_0": "k-1",
    "interval": "300",
    "regions": ["eu-west"],
    "recheck_count": "2",
    "action": "save",
}


def test_it_has_its_own_tab_and_each_widget_is_drawn(owner, widgets):
    page = owner.get("/app/healthchecks/new/?type=widgets").content.decode()

    assert '<a href="?type=widgets" aria-current="page">Widgets check</a>' in page
    assert '<a href="?type=mcp">MCP check</a>' in page
    for html in [
        '<input type="url" id="f-uri" name="uri"',
        '<input type="text" id="f-word" name="word"',
        '<textarea id="f-note" name="note"',
        '<input type="number" id="f-count" name="count"',
        '<input type="number" id="f-ratio" name="ratio" value="" step="any"',
        '<select id="f-mode" name="mode"><option>fast</option><option>slow</option></select>',
        '<input type="checkbox" id="f-loud" name="loud">',
        '<textarea id="f-items" name="items"',
        '<input type="text" id="f-codes" name="codes"',
        '<textarea id="f-extra" name="extra"',
        'name="header_name_0"',
        '<p class="help">Any word but bad.</p>',
    ]:
        assert html in page, html
    assert "Required tools" not in page


def test_a_posted_form_creates_it_with_each_widget_s_config(owner, org, widgets):
    answer = owner.post("/app/healthchecks/new/", FORM_DATA)

    assert answer.status_code == 302, answer.context["form"].errors
    assert Healthcheck.objects.get(organization=org).config == {
        "uri": "https://widgets.example/",
        "word": "hello",
        "headers": {"X-Key": "********"},
        "note": "two\nlines",
        "count": 3,
        "ratio": 0.5,
        "mode": "slow",
        "loud": True,
        "items": ["a", "b", "c"],
        "codes": [200, "2xx"],
        "extra": {"k": [1]},
    }


def test_an_error_on_its_config_key_shows_at_that_field(owner, widgets):
    answer = owner.post("/app/healthchecks/new/", {**FORM_DATA, "word": "bad"})

    assert answer.status_code == 400
    assert answer.context["form"].errors["word"] == ["Must not be bad."]
    page = answer.content.decode()
    assert 'name="word" value="bad" aria-invalid="true" aria-describedby="word-errors"' in page
    assert '<ul class="errorlist" id="word-errors"><li>Must not be bad.</li></ul>' in page


def test_test_now_runs_it(owner, widgets, settings):
    answer = owner.post("/app/healthchecks/new/", {**FORM_DATA, "action": "test"})

    assert answer.status_code == 200
    assert answer.context["trial"] is not None
    assert not Healthcheck.objects.exists()
