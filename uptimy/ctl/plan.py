"""Compare a file's monitors with the organization's and list what applying the file changes.

Pure: plain values in (the file's :class:`Monitor` entries, the API's healthcheck objects), a
:class:`Plan` out. Fields a monitor entry leaves out are left as they are; ``config`` is compared
whole, with the check type's defaults filled in by its parser on both sides. Header values can't
be compared: the API answers them masked. Their names are compared, and the values are sent
whenever the config is, or for every monitor when ``send_headers`` asks.

A monitor's listing is its own resource: compared whole (a key the file's ``listing:`` leaves out
is empty) when the entry writes ``listing:``, and, like any field, left as it is when the entry
leaves ``listing`` out; ``listing: null`` removes it. The stored listing is the one the API's
healthcheck carries (its ``listing``, null when it has none).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from uptimy.ctl import fields as F
from uptimy.ctl.spec import MASK, Monitor, Problem


@dataclass(frozen=True, slots=True)
class Change:
    """One field that changes, as shown: header values are never shown, only masked."""

    field: str
    before: Any
    after: Any


# What applying does to a listing: PUT the file's, or DELETE the stored one.
ListingAction = Literal["put", "delete"]


@dataclass
class Create:
    monitor: Monitor

    @property
    def listing(self) -> ListingAction | None:
        return "put" if self.monitor.listing is not None else None


@dataclass
class Update:
    monitor: Monitor
    current: dict[str, Any]
    changes: list[Change]
    send: list[str]  # the API fields the PATCH carries (none: no PATCH)
    listing: ListingAction | None = None

    @property
    def id(self) -> str:
        return str(self.current["id"])


@dataclass
class Delete:
    current: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.current["id"])

    @property
    def name(self) -> str:
        return str(self.current["name"])


@dataclass
class Plan:
    creates: list[Create] = field(default_factory=list)
    updates: list[Update] = field(default_factory=list)
    deletes: list[Delete] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    # Monitors of the organization the file doesn't name, left alone without --prune.
    unmanaged: list[str] = field(default_factory=list)
    # Header references whose variables are unset where no stored value can stand in: the plan
    # shows what would change, but applying it needs them (a CI plan may run without secrets).
    missing_secrets: list[Problem] = field(default_factory=list)

    @property
    def has_changes(self) -> bool:
        return bool(self.creates or self.updates or self.deletes)


class PlanRefused(Exception):
    """Carry what keeps a plan from being made (an ambiguous name, an unknown key, a secret missing)."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("; ".join(p.message for p in problems))


def make_plan(
    monitors: list[Monitor],
    current: list[dict[str, Any]],
    *,
    prune: bool = False,
    send_headers: bool = False,
) -> Plan:
    """Return what applying ``monitors`` to the organization's ``current`` healthchecks changes."""
    plan = Plan()
    problems: list[Problem] = []
    by_id = {str(hc["id"]): hc for hc in current}
    by_name: dict[str, list[dict[str, Any]]] = {}
    for hc in current:
        by_name.setdefault(hc["name"], []).append(hc)
    matched: set[str] = set()
    for monitor in monitors:
        found = _match(monitor, by_id, by_name, problems)
        if found is None:
            if not any(p.path == monitor.path or p.path.startswith(f"{monitor.path}.") for p in problems):
                _refuse_unresolved(monitor, plan.missing_secrets, creating=True)
                plan.creates.append(Create(monitor))
            continue
        if str(found["id"]) in matched:
            place = monitor.place("name")
            problems.append(
                Problem(place.path, "matches a monitor another entry matches too", place.line, place.column)
            )
            continue
        matched.add(str(found["id"]))
        _refuse_unresolved(monitor, plan.missing_secrets, creating=False, current=found)
        changes, send = compare(monitor, found, send_headers=send_headers)
        listing_changes, listing = compare_listing(monitor, found.get(F.LISTING))
        changes += listing_changes
        if changes:
            plan.updates.append(Update(monitor, found, changes, send, listing))
        else:
            plan.unchanged.append(monitor.name)
    rest = [hc for hc in current if str(hc["id"]) not in matched]
    if prune:
        plan.deletes = [Delete(hc) for hc in rest]
    else:
        plan.unmanaged = [hc["name"] for hc in rest]
    if problems:
        raise PlanRefused(problems)
    return plan


def _match(
    monitor: Monitor,
    by_id: dict[str, dict[str, Any]],
    by_name: dict[str, list[dict[str, Any]]],
    problems: list[Problem],
) -> dict[str, Any] | None:
    if monitor.key is not None:
        found = by_id.get(monitor.key.strip().lower())
        if found is None:
            place = monitor.place("key")
            problems.append(
                Problem(
                    f"{monitor.path}.key",
                    f"no monitor of the organization has the id {monitor.key!r}",
                    place.line,
                    place.column,
                )
            )
        return found
    same = by_name.get(monitor.name, [])
    if len(same) > 1:
        place = monitor.place("name")
        ids = ", ".join(str(hc["id"]) for hc in same)
        problems.append(
            Problem(
                place.path,
                f"{len(same)} monitors of the organization are named {monitor.name!r} ({ids}); "
                "add `key:` with the id of the one this entry is",
                place.line,
                place.column,
            )
        )
        return None
    return same[0] if same else None


def _refuse_unresolved(
    monitor: Monitor, problems: list[Problem], *, creating: bool, current: dict[str, Any] | None = None
) -> None:
    """Refuse a header whose variables are unset unless the monitor already stores a value for it."""
    stored = set() if current is None else {n.lower() for n in current["config"].get("headers", {})}
    for name, missing in monitor.unresolved.items():
        if creating or name.lower() not in stored:
            place = monitor.place(f"config.headers.{name}")
            problems.append(
                Problem(
                    place.path,
                    f"the environment variable {', '.join(missing)} is not set, and there is no stored value to keep",
                    place.line,
                    place.column,
                )
            )


def compare(
    monitor: Monitor, current: dict[str, Any], *, send_headers: bool
) -> tuple[list[Change], list[str]]:
    """Return the changes from ``current`` to ``monitor``, and the API fields a PATCH must send."""
    changes: list[Change] = []
    send: list[str] = []
    for api_field, wanted in monitor.fields.items():
        if api_field == "config":
            continue
        have = current.get("type_name") if api_field == "type" else current.get(api_field)
        same = sorted(have or []) == sorted(wanted) if api_field in F.SET_FIELDS else have == wanted
        if not same:
            changes.append(Change(api_field, have, wanted))
            send.append(api_field)
    config_changes = _config_changes(monitor, current["config"])
    type_changed = "type" in send
    if not config_changes and send_headers and monitor.fields["config"].get("headers"):
        config_changes = [
            Change(f"config.headers.{name}", MASK, f"{MASK} (sent again)")
            for name in monitor.fields["config"]["headers"]
            if monitor.header_values.get(name) != MASK
        ]
    if config_changes or type_changed:
        changes.extend(config_changes)
        send.append("config")
    return changes, send


def compare_listing(
    monitor: Monitor, have: dict[str, Any] | None
) -> tuple[list[Change], ListingAction | None]:
    """Return the changes from the stored listing ``have`` (None: none) to the file's, and what applying does.

    A listing added or removed is one change of ``listing`` (its fields that are set, shown whole);
    a changed one is a change per field (``listing.quote``).
    """
    if not monitor.writes_listing:
        return [], None
    wanted = monitor.listing
    stored = None if have is None else F.listing_values(have)
    if wanted is None:
        if stored is None:
            return [], None
        return [Change(F.LISTING, F.listing_entry(stored), None)], "delete"
    if stored is None:
        return [Change(F.LISTING, None, F.listing_entry(wanted))], "put"
    changes = [
        Change(f"{F.LISTING}.{name}", stored[name], wanted[name])
        for name in F.LISTING_FIELDS
        if stored[name] != wanted[name]
    ]
    return changes, "put" if changes else None


def _config_changes(monitor: Monitor, have: dict[str, Any]) -> list[Change]:
    wanted = monitor.fields["config"]
    changes: list[Change] = []
    for key in [*wanted, *(k for k in have if k not in wanted)]:
        if key == "headers":
            changes.extend(_header_changes(wanted.get("headers") or {}, have.get("headers") or {}))
        elif wanted.get(key) != have.get(key):
            changes.append(Change(f"config.{key}", have.get(key), wanted.get(key)))
    return changes


def _header_changes(wanted: dict[str, str], have: dict[str, str]) -> list[Change]:
    have_lower = {name.lower(): name for name in have}
    wanted_lower = {name.lower(): name for name in wanted}
    changes = [
        Change(f"config.headers.{name}", None, MASK) for name in wanted if name.lower() not in have_lower
    ]
    changes += [
        Change(f"config.headers.{name}", MASK, None) for name in have if name.lower() not in wanted_lower
    ]
    # A name whose case alone differs is a change the API stores.
    changes += [
        Change(f"config.headers.{name}", f"{have_lower[name.lower()]}: {MASK}", f"{name}: {MASK}")
        for name in wanted
        if name.lower() in have_lower and have_lower[name.lower()] != name
    ]
    return changes
