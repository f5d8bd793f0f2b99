"""uptimyctl's file takes any registered type: `target` is config.uri only for types whose config has one."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from probes.checks import CheckKind, register, unregister
from probes.config import ConfigError, config_fields
from probes.types import Headers
from uptimy.ctl import export
from uptimy.ctl.spec import SpecInvalid, load


@dataclass(frozen=True, slots=True)
class PortConfig:
    address: str
    port: int
    banner: str = ""
    headers: Headers = ()
    timeout: float = 10.0

    @property
    def target(self) -> str:
        return f"{self.address}:{self.port}"

    @property
    def host(self) -> str:
        return self.address


def parse(raw: object) -> PortConfig:
    data, errors = config_fields(raw, frozenset({"address", "port", "banner"}))
    address, port = data.get("address"), data.get("port")
    if not isinstance(address, str) or not address:
        errors["address"] = "Must be a host name."
    if not isinstance(port, int) or not 1 <= port <= 65535:
        errors["port"] = "Must be 1–65535."
    if errors:
        raise ConfigError(errors)
    return PortConfig(address=str(address), port=int(str(port)), banner=str(data.get("banner", "")))


def to_api(config: PortConfig) -> dict[str, Any]:
    return {"address": config.address, "port": config.port, "banner": config.banner}


@pytest.fixture
def port_type() -> Iterator[CheckKind[PortConfig]]:
    schema = {"type": "object", "required": ["address", "port"], "properties": {"address": {}, "port": {}}}
    kind = register(
        CheckKind(
            number=97,
            name="porttest",
            title="Port",
            config_type=PortConfig,
            parse=parse,
            to_api=to_api,
            schema=schema,
            run=None,
        )
    )
    yield kind
    unregister(kind)


FILE = """\
monitors:
  - name: Port
    type: porttest
    config:
      address: db.example
      port: 5432
"""


def test_a_type_without_a_uri_needs_no_target_and_reads_its_config(port_type):
    # No "headers" either: the type's API shape has none, and the API would refuse the key.
    (monitor,) = load(FILE, env={}).monitors

    # Its config as the type's to_api answers it: no headers, which its API answer has none of either.
    assert monitor.fields == {
        "name": "Port",
        "type": "porttest",
        "config": {"address": "db.example", "port": 5432, "banner": ""},
    }


def test_a_target_on_a_type_without_a_uri_is_refused_at_its_line(port_type):
    text = FILE.replace("    type: porttest\n", "    type: porttest\n    target: db.example\n")
    with pytest.raises(SpecInvalid) as refused:
        load(text, env={})
    assert [p.render("m.yaml") for p in refused.value.problems] == [
        "m.yaml:4:5: monitors[0].target: a monitor of type porttest has no target; "
        "write its settings under `config:`"
    ]


def test_its_config_errors_are_at_their_keys(port_type):
    with pytest.raises(SpecInvalid) as refused:
        load(FILE.replace("5432", "70000"), env={})
    assert [p.render("m.yaml") for p in refused.value.problems] == [
        "m.yaml:6:7: monitors[0].config.port: must be 1–65535"
    ]


def test_http_still_requires_its_target():
    text = "monitors:\n  - name: Site\n    type: http\n"
    with pytest.raises(SpecInvalid) as refused:
        load(text, env={})
    assert [p.message for p in refused.value.problems] == ["required"]


def test_export_round_trips_a_type_without_a_uri(port_type):
    healthcheck = {
        "name": "Port",
        "type_name": "porttest",
        "config": {"address": "db.example", "port": 5432, "banner": ""},
        "interval": 60,
    }

    text = export.dump([healthcheck], source="test")

    assert "target" not in text
    assert "banner" not in text  # the default is left out
    (monitor,) = load(textwrap.dedent(text), env={}).monitors
    assert monitor.fields["config"] == healthcheck["config"]
    assert monitor.fields["interval"] == 60
