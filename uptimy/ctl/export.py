"""Write the organization's monitors as a monitors file that applies back with no changes.

Config keys equal to the check type's defaults (as its own parser fills them in) are left out;
header values, which the API never shows, become ``${…}`` references to environment variables
named after the monitor and the header. Applying the file with those variables unset keeps the
stored values; setting them sends the new values. An MCP monitor's listing is written with the
fields that are set (the file leaves out the empty ones, which is what a missing key means), as
the healthcheck's answer carries it.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from probes.checks import UnknownCheckKind, check_kind
from probes.config import ConfigError
from uptimy.ctl import fields as F


def placeholder(monitor_name: str, header: str) -> str:
    """Return the environment variable a header's value is exported as: DOCS_MCP_AUTHORIZATION."""
    words = re.sub(r"[^A-Za-z0-9]+", "_", f"{monitor_name}_{header}").strip("_").upper()
    return words if words and not words[0].isdigit() else f"UPTIMY_{words}"


def file_config(healthcheck: dict[str, Any]) -> dict[str, Any]:
    """Return a healthcheck's config as a file writes it: no uri (the target), no defaults, headers as references."""
    config = dict(healthcheck["config"])
    headers = config.pop("headers", None) or {}
    required: list[str] = []
    try:
        kind = check_kind(healthcheck["type_name"])
        # The type's defaults: what its parser fills in around the keys its schema requires.
        required = [key for key in dict(kind.schema).get("required", []) if key != "headers"]
        defaults = kind.to_api(kind.parse({key: config[key] for key in required if key in config}))
    except (UnknownCheckKind, ConfigError):
        defaults = {}
    # A uri is the monitor's `target` (fields.file_entry), never a config key of the file.
    config.pop(F.URI_KEY, None)
    out = {
        key: value
        for key, value in config.items()
        if key in required or key not in defaults or defaults[key] != value
    }
    if headers:
        out["headers"] = {name: f"${{{placeholder(healthcheck['name'], name)}}}" for name in headers}
    return out


class _Dumper(yaml.SafeDumper):
    """Write as the product text does: list items indented under their key, short lists on one line."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _list(dumper: yaml.SafeDumper, items: list[Any]) -> yaml.Node:
    scalars = all(isinstance(item, str | int | float | bool) or item is None for item in items)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=scalars)


_Dumper.add_representer(list, _list)


def to_yaml(data: Any) -> str:
    """Return ``data`` as block YAML in the file's style, keys in the order given."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False)


def entries(healthchecks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return monitor entries of ``healthchecks``, by name, each with its listing when it has one."""
    return [
        F.file_entry(hc, config=file_config(hc), listing=hc.get(F.LISTING))
        for hc in sorted(healthchecks, key=lambda hc: hc["name"])
    ]


def dump(healthchecks: list[dict[str, Any]], *, source: str) -> str:
    """Return the monitors file of ``healthchecks``, with a comment saying where it came from."""
    written = entries(healthchecks)
    body = to_yaml({"monitors": written})
    variables = sorted(
        {ref[2:-1] for hc in written for ref in hc.get("config", {}).get("headers", {}).values()}
    )
    lines = [f"# Exported by uptimyctl from {source}."]
    if variables:
        lines.append(
            "# Header values are never exported: set "
            + ", ".join(variables)
            + " to send new ones; unset, the stored values are kept."
        )
    return "\n".join(lines) + "\n" + body
