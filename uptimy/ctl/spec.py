"""Read a monitors file into the API's shapes, with every problem at its line and column.

YAML is read with PyYAML's composer, not its constructor: the composed nodes carry a position
each (scalars too, which ruamel.yaml keeps only for containers), duplicated keys are seen while
walking (PyYAML's constructor keeps the last one silently), and nothing but plain scalars,
lists and mappings is ever built. The check types' config rules are the engine's own parsers
(``probes.checks``), the ones the API validates with, so a file that passes here passes there
for everything but plan limits and ranges, which the API's 400 reports at the field's line. A
listing's values (a registry-style namespace, http(s) URLs, the free-tier quote) are judged by
the server alone (its rules are Django's side); here its keys and their types are checked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from probes.checks import UnknownCheckKind, check_kind
from probes.config import ConfigError
from probes.urlkeys import key_in_url_words
from uptimy.ctl import fields as F

MASK = "********"
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_STR = "tag:yaml.org,2002:str"
# Nodes one file may expand to: aliases repeat a node without repeating its text, and a few
# lines of nested aliases would otherwise expand to billions of values.
MAX_NODES = 100_000


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a file (or refused by the API), at the field it is about."""

    path: str
    message: str
    line: int | None = None
    column: int | None = None

    def render(self, filename: str) -> str:
        where = f"{filename}:{self.line}:{self.column}" if self.line is not None else filename
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class SpecInvalid(Exception):
    """Carry every problem of a file; nothing was sent."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("; ".join(p.message for p in problems))


@dataclass(frozen=True, slots=True)
class Place:
    """Where an API field of one monitor is written in the file: its path in the file and its position."""

    path: str
    line: int
    column: int


@dataclass
class Monitor:
    """One monitor entry, in the API's names: what to compare with the API and what to send."""

    index: int
    name: str
    key: str | None
    type_name: str
    # API field -> value, for the fields the file sets (config always): what is compared.
    fields: dict[str, Any]
    # Header name -> the value to send: resolved from the environment, or MASK to keep the stored one.
    header_values: dict[str, str] = field(default_factory=dict)
    # Header name -> the environment variables it names that are unset.
    unresolved: dict[str, list[str]] = field(default_factory=dict)
    # API field path ("config.minTools", "interval") -> where the file writes it.
    places: dict[str, Place] = field(default_factory=dict)
    # Whether the entry writes `listing:`; one that leaves it out leaves the listing as it is.
    writes_listing: bool = False
    # The listing it writes (its five API fields, "" for a key left out), or None for `listing: null`:
    # remove it. Not in ``fields``: it is its own resource, compared and sent on its own.
    listing: dict[str, str] | None = None
    # What it watches, as the API's `target` answers it (the type's target of its config): what plan shows.
    target: str = ""

    @property
    def path(self) -> str:
        return f"monitors[{self.index}]"

    def place(self, api_path: str) -> Place:
        """Return where ``api_path`` (or the nearest field above it) is written; the entry itself at worst."""
        return self.places[self.nearest(api_path)]

    def nearest(self, api_path: str) -> str:
        """Return the API path nearest ``api_path`` that the file writes ("" for the entry itself)."""
        probe = api_path
        while probe:
            if probe in self.places:
                return probe
            probe = probe.rpartition(".")[0]
        return ""

    def problem(self, api_path: str, message: str) -> Problem:
        """Return a problem with ``api_path`` (an API error's field) at the place the file writes it."""
        nearest = self.nearest(api_path)
        place = self.places[nearest]
        path = place.path + api_path[len(nearest) :] if nearest else f"{self.path}.{api_path}"
        return Problem(path, message, place.line, place.column)

    def config_to_send(self) -> dict[str, Any]:
        """Return the config with header values to send (resolved, or masked to keep the stored ones)."""
        config = dict(self.fields["config"])
        if config.get("headers"):
            config["headers"] = dict(self.header_values)
        return config

    def body(self, api_fields: list[str] | None = None) -> dict[str, Any]:
        """Return a request body of ``api_fields`` (default all the file sets), config with header values."""
        names = list(self.fields) if api_fields is None else api_fields
        return {name: self.config_to_send() if name == "config" else self.fields[name] for name in names}


@dataclass
class Spec:
    """A monitors file, read: its monitors and its warnings (literal header values)."""

    monitors: list[Monitor]
    warnings: list[Problem]


class _Reader:
    def __init__(self, env: Mapping[str, str], *, ci: bool) -> None:
        self.env = env
        self.ci = ci
        self.problems: list[Problem] = []
        self.warnings: list[Problem] = []
        self.budget = MAX_NODES

    def problem(self, path: str, message: str, node: yaml.Node | None) -> None:
        self.problems.append(_at(path, message, node))

    # --- YAML nodes to plain values -------------------------------------------------------------

    def mapping(self, node: yaml.Node, path: str) -> list[tuple[str, yaml.Node, yaml.Node]] | None:
        """Return a mapping node's (key, key node, value node) triples, refusing duplicated and non-text keys."""
        if not isinstance(node, yaml.MappingNode):
            self.problem(path, "must be a mapping (key: value lines)", node)
            return None
        seen: dict[str, yaml.Node] = {}
        out: list[tuple[str, yaml.Node, yaml.Node]] = []
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != _STR:
                self.problem(path, "keys must be plain text", key_node)
                continue
            key = str(key_node.value)
            if key in seen:
                first = seen[key].start_mark.line + 1
                self.problem(_join(path, key), f"duplicated key (first written on line {first})", key_node)
                continue
            seen[key] = key_node
            out.append((key, key_node, value_node))
        return out

    def plain(self, node: yaml.Node, path: str) -> Any:
        """Return a node as plain Python values (lists, dicts, scalars)."""
        self.budget -= 1
        if self.budget < 0:
            raise SpecInvalid(
                [_at(path, f"the file expands to more than {MAX_NODES} values (aliases?)", node)]
            )
        if isinstance(node, yaml.ScalarNode):
            return _scalar(node)
        if isinstance(node, yaml.SequenceNode):
            return [self.plain(item, f"{path}[{i}]") for i, item in enumerate(node.value)]
        triples = self.mapping(node, path) or []
        return {key: self.plain(value, _join(path, key)) for key, _, value in triples}

    # --- the file -------------------------------------------------------------------------------

    def document(self, root: yaml.Node | None) -> list[Monitor]:
        if root is None:
            self.problem("", "the file is empty; write `monitors:` and a list of monitors", None)
            return []
        top = self.mapping(root, "")
        if top is None:
            return []
        monitors_node = None
        for key, key_node, value in top:
            if key == "monitors":
                monitors_node = value
            else:
                self.problem(key, "unknown field; the file has one: monitors", key_node)
        if monitors_node is None:
            self.problem("monitors", "required: a list of monitors", root)
            return []
        if isinstance(monitors_node, yaml.ScalarNode) and monitors_node.tag == _NULL:
            return []
        if not isinstance(monitors_node, yaml.SequenceNode):
            self.problem("monitors", "must be a list of monitors (lines starting with `- `)", monitors_node)
            return []
        monitors = [self.monitor(i, node) for i, node in enumerate(monitors_node.value)]
        found = [m for m in monitors if m is not None]
        self.unique_names(found)
        return found

    def unique_names(self, monitors: list[Monitor]) -> None:
        first: dict[str, Monitor] = {}
        for monitor in monitors:
            if monitor.name in first:
                place = monitor.place("name")
                self.problems.append(
                    Problem(
                        place.path,
                        f"duplicated name {monitor.name!r} (also {first[monitor.name].path}); "
                        "names match monitors, so each must be unique",
                        place.line,
                        place.column,
                    )
                )
            else:
                first[monitor.name] = monitor

    def monitor(self, index: int, node: yaml.Node) -> Monitor | None:
        path = f"monitors[{index}]"
        triples = self.mapping(node, path)
        if triples is None:
            return None
        places = {"": _place(path, node)}
        values: dict[str, Any] = {}
        nodes: dict[str, yaml.Node] = {}
        key_nodes: dict[str, yaml.Node] = {}
        before = len(self.problems)
        for key, key_node, value_node in triples:
            spec_field = F.BY_NAME.get(key)
            if spec_field is None:
                allowed = ", ".join(f.name for f in F.FIELDS)
                self.problem(_join(path, key), f"unknown field; the fields are: {allowed}", key_node)
                continue
            value = self.plain(value_node, _join(path, key))
            shaped = self.shaped(spec_field, value, _join(path, key), key_node)
            if shaped is _BAD:
                continue
            values[key], nodes[key], key_nodes[key] = shaped, value_node, key_node
            if spec_field.api is not None:
                places[spec_field.api] = _place(_join(path, key), key_node)
        for key in F.REQUIRED:
            if key not in values and not any(p.path == _join(path, key) for p in self.problems[before:]):
                self.problem(_join(path, key), "required", node)
        if any(key not in values for key in F.REQUIRED):
            return None
        try:
            kind = check_kind(values["type"])
        except UnknownCheckKind as exc:
            self.problem(_join(path, "type"), _sentence(str(exc)), key_nodes["type"])
            return None
        if F.has_target(kind) and F.TARGET not in values:
            if not any(p.path == _join(path, F.TARGET) for p in self.problems[before:]):
                self.problem(_join(path, F.TARGET), "required", node)
            return None
        if not F.has_target(kind) and F.TARGET in values:
            self.problem(
                _join(path, F.TARGET),
                f"a monitor of type {kind.name} has no target; write its settings under `config:`",
                key_nodes[F.TARGET],
            )
            return None
        monitor = Monitor(
            index=index,
            name=values["name"],
            key=values.get("key"),
            type_name=kind.name,
            fields={},
            places=places,
        )
        monitor.fields["name"] = values["name"]
        monitor.fields["type"] = kind.name
        self.config(monitor, kind, values, nodes)
        if F.LISTING in values:
            self.listing(monitor, kind.name, values[F.LISTING], nodes[F.LISTING], key_nodes[F.LISTING])
        for spec_field in F.FIELDS:
            if spec_field.api in F.PLAIN_API_FIELDS and spec_field.name in values:
                monitor.fields[spec_field.api] = values[spec_field.name]
        return monitor

    def shaped(self, spec_field: F.FileField, value: Any, path: str, node: yaml.Node) -> Any:
        shape = spec_field.shape
        if shape == F.TEXT and isinstance(value, str) and value.strip():
            return value
        if shape == F.TEXT_LIST and isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
        if shape == F.WHOLE and isinstance(value, int) and not isinstance(value, bool):
            return value
        if shape == F.WHOLE_OR_NULL and (
            value is None or (isinstance(value, int) and not isinstance(value, bool))
        ):
            return value
        if shape == F.BOOLEAN and isinstance(value, bool):
            return value
        if shape == F.MAPPING and isinstance(value, dict):
            return value
        if shape == F.MAPPING_OR_NULL and (value is None or isinstance(value, dict)):
            return value
        if shape == F.DURATION and (seconds := F.duration_seconds(value)) is not None:
            return seconds
        expected = {
            F.TEXT: "must be non-empty text",
            F.TEXT_LIST: "must be a list of text (quote values YAML reads otherwise, like `no` or `1`)",
            F.DURATION: 'must be seconds (60) or a duration ("30s", "5m", "1h")',
            F.MAPPING: "must be a mapping",
            F.MAPPING_OR_NULL: "must be a mapping, or null to remove it",
        }.get(shape, f"must be a {shape}")
        self.problem(path, expected, node)
        return _BAD

    def config(
        self, monitor: Monitor, kind: Any, values: dict[str, Any], nodes: dict[str, yaml.Node]
    ) -> None:
        """Check the config with the check type's own parser; keep its API shape and the header values."""
        path = monitor.path
        config_node = nodes.get("config")
        raw: dict[str, Any] = dict(values.get("config", {}))
        key_places: dict[str, Place] = {}
        if config_node is not None:
            for key, key_node, value_node in self.mapping(config_node, _join(path, "config")) or []:
                key_places[key] = _place(_join(path, f"config.{key}"), key_node)
                if key == "headers" and isinstance(value_node, yaml.MappingNode):
                    for name, name_node, _ in self.mapping(value_node, _join(path, "config.headers")) or []:
                        key_places[f"headers.{name}"] = _place(
                            _join(path, f"config.headers.{name}"), name_node
                        )
        target = F.has_target(kind)
        if target and F.URI_KEY in raw:
            self.problems.append(
                _from_place(key_places[F.URI_KEY], "write the URL as the monitor's `target`")
            )
            return
        for key, place in key_places.items():
            monitor.places[f"config.{key}"] = place
        if isinstance(raw.get("headers"), dict):
            raw["headers"] = self.headers(monitor, raw["headers"])
        if target:
            raw[F.URI_KEY] = values[F.TARGET]
        try:
            parsed = kind.parse(raw)
        except ConfigError as exc:
            for key, message in exc.errors.items():
                place = monitor.place(f"config.{key}" if key != F.URI_KEY else "config.uri")
                self.problems.append(_from_place(place, _sentence(message)))
            return
        pasted_key = key_in_url_words(parsed.uri) if target else None
        if pasted_key is not None:
            self.problems.append(_from_place(monitor.place("config.uri"), _sentence(pasted_key)))
            return
        monitor.target = kind.target(parsed)
        api_config = dict(kind.to_api(parsed))
        # Only a type whose config has headers gets them: a domain or ping check's parser refuses the key.
        if "headers" in api_config:
            api_config["headers"] = {name: MASK for name in api_config["headers"]}
        monitor.fields["config"] = api_config

    def listing(
        self,
        monitor: Monitor,
        type_name: str,
        value: dict[str, Any] | None,
        node: yaml.Node,
        key_node: yaml.Node,
    ) -> None:
        """Check the listing's keys and that each value is text; the API's 400 judges the values."""
        path = _join(monitor.path, F.LISTING)
        if type_name != F.LISTING_TYPE:
            self.problem(path, f"only a monitor of type {F.LISTING_TYPE} has a listing", key_node)
            return
        monitor.writes_listing = True
        if value is None:
            return
        listing = dict.fromkeys(F.LISTING_FIELDS, "")
        for key, name_node in _first_keys(node).items():
            key_path = _join(path, key)
            if key not in F.LISTING_FIELDS:
                self.problem(
                    key_path, f"unknown field; the fields are: {', '.join(F.LISTING_FIELDS)}", name_node
                )
                continue
            monitor.places[f"{F.LISTING}.{key}"] = _place(key_path, name_node)
            text = value[key]
            if not isinstance(text, str):
                self.problem(
                    key_path, "must be text (quote values YAML reads otherwise, like `no` or `1`)", name_node
                )
            elif key in F.LISTING_REQUIRED and not text.strip():
                self.problem(key_path, "must be non-empty text", name_node)
            else:
                # The API stores each value stripped: so does the plan, or a padded value would differ forever.
                listing[key] = text.strip()
        for key in F.LISTING_REQUIRED:
            if key not in value:
                self.problem(_join(path, key), "required", node)
        monitor.listing = listing

    def headers(self, monitor: Monitor, headers: dict[str, Any]) -> dict[str, Any]:
        """Resolve ``${ENV}`` references in header values; warn of (or, in CI mode, refuse) literal ones."""
        out: dict[str, Any] = {}
        for name, template in headers.items():
            if not isinstance(template, str):
                out[name] = template  # the parser says what is wrong, at this header's line
                continue
            place = monitor.place(f"config.headers.{name}")
            names = _REFERENCE.findall(template)
            if not names:
                message = (
                    "a literal header value; put the secret in an environment variable and write "
                    '"${NAME}" here, so it stays out of the file and out of git'
                )
                if self.ci:
                    self.problems.append(_from_place(place, message + " (refused in CI mode)"))
                else:
                    self.warnings.append(_from_place(place, message))
            elif "${" in _REFERENCE.sub("", template):
                self.problems.append(
                    _from_place(place, "a `${` that is no reference: write ${NAME}, a letter or _ first")
                )
                continue
            missing = [ref for ref in names if ref not in self.env]
            if missing:
                monitor.unresolved[name] = missing
                value = MASK
            else:
                value = _REFERENCE.sub(lambda match: self.env[match.group(1)], template)
            monitor.header_values[name] = value
            out[name] = value
        return out


_BAD = object()


def load(text: str, *, env: Mapping[str, str], ci: bool = False) -> Spec:
    """Return the monitors of a file's text; raise SpecInvalid listing every problem."""
    tab = text.find("\t")
    if tab >= 0:
        line = text.count("\n", 0, tab) + 1
        column = tab - (text.rfind("\n", 0, tab) + 1) + 1
        raise SpecInvalid([Problem("", "a tab character; indent and separate with spaces", line, column)])
    reader = _Reader(env, ci=ci)
    try:
        loader = yaml.SafeLoader(text)
        try:
            root = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(part for part in (exc.context, exc.problem) if part) or "not valid YAML"
        raise SpecInvalid(
            [
                Problem(
                    "",
                    f"not valid YAML: {message}",
                    mark.line + 1 if mark else None,
                    mark.column + 1 if mark else None,
                )
            ]
        ) from None
    except yaml.YAMLError as exc:
        raise SpecInvalid([Problem("", f"not valid YAML: {exc}")]) from None
    monitors = reader.document(root)
    if reader.problems:
        # The config's mapping is walked twice (as values, then for its keys' places): a problem
        # of its keys is found twice and listed once.
        found = dict.fromkeys(reader.problems)
        raise SpecInvalid(sorted(found, key=lambda p: (p.line or 0, p.column or 0)))
    return Spec(monitors=monitors, warnings=reader.warnings)


def _scalar(node: yaml.ScalarNode) -> Any:
    text = str(node.value)
    if node.tag == _NULL:
        return None
    if node.tag == _BOOL:
        return text.lower() in ("true", "yes", "on", "y")
    if node.tag == _INT:
        try:
            return int(text.replace("_", ""), 0)
        except ValueError:
            return text
    if node.tag == _FLOAT:
        try:
            return float(text.replace("_", ""))
        except ValueError:
            return text
    return text


def _first_keys(node: yaml.Node) -> dict[str, yaml.Node]:
    """Return a mapping node's text keys and their nodes, the first of each (``mapping`` reported the rest)."""
    found: dict[str, yaml.Node] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag == _STR:
                found.setdefault(str(key_node.value), key_node)
    return found


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _place(path: str, node: yaml.Node) -> Place:
    return Place(path, node.start_mark.line + 1, node.start_mark.column + 1)


def _at(path: str, message: str, node: yaml.Node | None) -> Problem:
    if node is None:
        return Problem(path, message)
    return Problem(path, message, node.start_mark.line + 1, node.start_mark.column + 1)


def _from_place(place: Place, message: str) -> Problem:
    return Problem(place.path, message, place.line, place.column)


def _sentence(message: str) -> str:
    """Return an engine message in the client's style: lower-case first letter, no closing period."""
    message = message.rstrip(".")
    return message[:1].lower() + message[1:]
