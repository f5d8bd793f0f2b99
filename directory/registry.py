"""Read the Official MCP Registry's server list: fetch pages politely, validate every entry.

Pure: no Django, no settings, no ORM. :class:`RegistryClient` fetches ``/v0.1/servers`` one
request at a time (cursor pagination), honours 429 with ``Retry-After`` (capped, through an
injected sleeper) and hands over :class:`Page` values; :func:`parse_page` turns one page's JSON
into :class:`ServerEntry` values and :class:`Rejected` reasons. A malformed page raises
:class:`RegistryError`; a malformed entry is rejected alone, so one bad listing never stops a
sync. The response shape is the registry's OpenAPI (``ServerList`` / ``ServerResponse``,
official metadata under ``_meta["io.modelcontextprotocol.registry/official"]``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

import httpx

from probes.jsonrpc import MAX_JSON_DEPTH, JsonTooDeep, read_json

OFFICIAL_META = "io.modelcontextprotocol.registry/official"
SERVERS_PATH = "/v0.1/servers"
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")
# The registry's own pattern for a remote URL: an http(s) URL or one starting with a {variable}.
REMOTE_URL_PATTERN = re.compile(r"^(https?://[^\s]+|\{[a-zA-Z_][a-zA-Z0-9_]*\}[^\s]*)$")
TEMPLATE_VARIABLE = re.compile(r"\{[a-zA-Z_][a-zA-Z0-9_]*\}")
NAME_MAX = 200
VERSION_MAX = 255
# The schema says 100 for a description and 500 for a status message; older entries may be
# longer, so these are the most we keep, not what we reject.
DESCRIPTION_MAX = 1_000
MESSAGE_MAX = 500
URL_MAX = 2_000
SOURCE_MAX = 100
PAGE_LIMIT = 100
MAX_PAGE_BYTES = 8 * 1024 * 1024
MAX_PAGES = 10_000
RETRY_AFTER_CAP = 60.0
RETRY_AFTER_DEFAULT = 5.0
MAX_RATE_LIMITED = 5


class RegistryError(Exception):
    """A page could not be fetched or read: the sync stops, what was stored stays."""


class ListingStatus(StrEnum):
    ACTIVE = "active"
    DEPRECATED = "deprecated"
    DELETED = "deleted"


class Transport(StrEnum):
    STREAMABLE_HTTP = "streamable-http"
    SSE = "sse"


@dataclass(frozen=True, slots=True)
class Remote:
    """One remote endpoint of a listing: its transport, URL (maybe a template) and declared headers."""

    transport: Transport
    url: str
    headers_required: bool
    header_names: tuple[str, ...] = ()

    @property
    def templated(self) -> bool:
        """Return whether the URL holds ``{variables}`` a client must fill in before connecting."""
        return TEMPLATE_VARIABLE.search(self.url) is not None


@dataclass(frozen=True, slots=True)
class Package:
    """One installable package of a listing (how a local-only server is run)."""

    registry_type: str
    identifier: str
    version: str | None
    transport: str | None


@dataclass(frozen=True, slots=True)
class ServerEntry:
    """One (name, version) of the registry, validated: what a listing row stores."""

    name: str
    version: str
    description: str
    title: str | None
    website_url: str | None
    repository_url: str | None
    repository_source: str | None
    remotes: tuple[Remote, ...]
    packages: tuple[Package, ...]
    status: ListingStatus
    status_message: str | None
    published_at: datetime | None
    # None: the registry sent none (its schema makes every official field optional).
    updated_at: datetime | None
    is_latest: bool | None
    raw: Mapping[str, Any]
    # What the schema allows but the directory does not show (a link that is no http(s) URL), and why.
    left_out: tuple[str, ...] = ()

    @property
    def local_only(self) -> bool:
        return not self.remotes


@dataclass(frozen=True, slots=True)
class Rejected:
    """An entry left out of a page, with why (its name when it had a readable one)."""

    index: int
    name: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class Page:
    entries: tuple[ServerEntry, ...]
    rejected: tuple[Rejected, ...]
    next_cursor: str | None


class InvalidEntry(ValueError):
    """Why one entry cannot be read: the message names the field."""


# --- parsing ------------------------------------------------------------------------------------


def parse_page(payload: Any) -> Page:
    """Return the page's valid entries and rejected ones; raise RegistryError when the page itself is malformed."""
    if not isinstance(payload, dict):
        raise RegistryError("The page is not a JSON object")
    servers = payload.get("servers")
    if not isinstance(servers, list):
        raise RegistryError('The page has no "servers" list')
    metadata = payload.get("metadata", {})
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise RegistryError('The page\'s "metadata" is not an object')
    cursor = metadata.get("nextCursor")
    if cursor is not None and not isinstance(cursor, str):
        raise RegistryError('The page\'s "metadata.nextCursor" is not a string')
    entries: list[ServerEntry] = []
    rejected: list[Rejected] = []
    for index, item in enumerate(servers):
        try:
            entries.append(parse_entry(item))
        except InvalidEntry as error:
            rejected.append(Rejected(index, _name_of(item), str(error)))
    return Page(tuple(entries), tuple(rejected), cursor or None)


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(key) or _holds_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_holds_nul(item) for item in value)
    return False


def _name_of(item: Any) -> str | None:
    server = item.get("server") if isinstance(item, dict) else None
    name = server.get("name") if isinstance(server, dict) else None
    return name[:NAME_MAX] if isinstance(name, str) else None


def parse_entry(item: Any) -> ServerEntry:
    """Return one ``ServerResponse`` as a ServerEntry; raise InvalidEntry naming the first bad field."""
    if not isinstance(item, dict):
        raise InvalidEntry("The entry is not an object")
    # PostgreSQL stores no NUL character, in text or in jsonb: refused here, not by the database.
    if _holds_nul(item):
        raise InvalidEntry("The entry holds a NUL character")
    server = item.get("server")
    if not isinstance(server, dict):
        raise InvalidEntry('"server" is not an object')
    name = _required_str(server, "name", NAME_MAX)
    if len(name) < 3 or not NAME_PATTERN.match(name):
        raise InvalidEntry(f'"name" {name!r} is not namespace/name')
    version = _required_str(server, "version", VERSION_MAX)
    if not version.strip():
        raise InvalidEntry('"version" is empty')
    description = server.get("description")
    if not isinstance(description, str):
        raise InvalidEntry('"description" is not a string')
    left_out: list[str] = []
    repository_url, repository_source = _repository(server.get("repository"), left_out)
    # The schema requires only "server": the official metadata and each of its fields may be
    # missing. A missing status is active (nothing marked it otherwise), a missing isLatest is
    # unknown (the sync decides), a missing updatedAt is kept missing (check 21 fails it).
    meta = item.get("_meta")
    if meta is not None and not isinstance(meta, dict):
        raise InvalidEntry('"_meta" is not an object')
    official = (meta or {}).get(OFFICIAL_META)
    if official is None:
        official = {}
    if not isinstance(official, dict):
        raise InvalidEntry(f'"_meta.{OFFICIAL_META}" is not an object')
    status_text = official.get("status")
    if status_text is None:
        status = ListingStatus.ACTIVE
    else:
        if not isinstance(status_text, str):
            raise InvalidEntry('"status" is not a string')
        try:
            status = ListingStatus(status_text)
        except ValueError:
            raise InvalidEntry(
                f'"status" {status_text[:20]!r} is not active, deprecated or deleted'
            ) from None
    is_latest = official.get("isLatest")
    if is_latest is not None and not isinstance(is_latest, bool):
        raise InvalidEntry('"isLatest" is not a boolean')
    updated_at = _timestamp(official.get("updatedAt"), "updatedAt")
    message = _optional_str(official, "statusMessage", MESSAGE_MAX * 4)
    return ServerEntry(
        name=name,
        version=version,
        description=description[:DESCRIPTION_MAX],
        title=_optional_str(server, "title", DESCRIPTION_MAX),
        website_url=_shown_url(server.get("websiteUrl"), "websiteUrl", left_out),
        repository_url=repository_url,
        repository_source=repository_source,
        remotes=_remotes(server.get("remotes")),
        packages=_packages(server.get("packages")),
        status=status,
        status_message=message[:MESSAGE_MAX] if message else None,
        published_at=_timestamp(official.get("publishedAt"), "publishedAt"),
        updated_at=updated_at,
        is_latest=is_latest,
        raw=item,
        left_out=tuple(left_out),
    )


def _required_str(data: Mapping[str, Any], key: str, max_length: int, *, where: str = "server") -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise InvalidEntry(f'"{key}" is missing or not a string')
    if len(value) > max_length:
        raise InvalidEntry(f'"{key}" is longer than {max_length} characters')
    return value


def _optional_str(data: Mapping[str, Any], key: str, max_length: int) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidEntry(f'"{key}" is not a string')
    return value[:max_length] or None


def _optional_url(value: Any, field: str) -> str | None:
    """Return an http(s) URL with a host; None for a missing or empty one (the registry sends "" at times)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidEntry(f'"{field}" is not a string')
    if len(value) > URL_MAX:
        raise InvalidEntry(f'"{field}" is longer than {URL_MAX} characters')
    try:
        parts = urlsplit(value)
    except ValueError:
        raise InvalidEntry(f'"{field}" is not a URL') from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidEntry(f'"{field}" is not an http(s) URL')
    return value


def _shown_url(value: Any, field: str, left_out: list[str]) -> str | None:
    """Return a link the directory can show; one the schema allows (any URI) but that is no http(s) URL is left out, and said."""
    try:
        return _optional_url(value, field)
    except InvalidEntry as error:
        if isinstance(value, str) and len(value) <= URL_MAX:
            left_out.append(f"{error}: left out")
            return None
        raise


def _repository(value: Any, left_out: list[str]) -> tuple[str | None, str | None]:
    if value is None:
        return None, None
    if not isinstance(value, dict):
        raise InvalidEntry('"repository" is not an object')
    url = _shown_url(value.get("url"), "repository.url", left_out)
    source = value.get("source")
    if source is not None and not isinstance(source, str):
        raise InvalidEntry('"repository.source" is not a string')
    if source and len(source) > SOURCE_MAX:
        raise InvalidEntry(f'"repository.source" is longer than {SOURCE_MAX} characters')
    return url, (source or None) if url else None


def _remotes(value: Any) -> tuple[Remote, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InvalidEntry('"remotes" is not a list')
    remotes = []
    for position, remote in enumerate(value):
        where = f"remotes[{position}]"
        if not isinstance(remote, dict):
            raise InvalidEntry(f'"{where}" is not an object')
        kind = remote.get("type")
        try:
            transport = Transport(str(kind))
        except ValueError:
            raise InvalidEntry(f'"{where}.type" {kind!r} is not streamable-http or sse') from None
        url = remote.get("url")
        if not isinstance(url, str) or len(url) > URL_MAX or not REMOTE_URL_PATTERN.match(url):
            raise InvalidEntry(f'"{where}.url" is not an http(s) URL or a URL template')
        names, required = _headers(remote.get("headers"), where)
        remotes.append(Remote(transport, url, required, names))
    return tuple(remotes)


def _headers(value: Any, where: str) -> tuple[tuple[str, ...], bool]:
    if value is None:
        return (), False
    if not isinstance(value, list):
        raise InvalidEntry(f'"{where}.headers" is not a list')
    names, required = [], False
    for position, header in enumerate(value):
        if not isinstance(header, dict) or not isinstance(header.get("name"), str) or not header["name"]:
            raise InvalidEntry(f'"{where}.headers[{position}]" has no name')
        flag = header.get("isRequired", False)
        if not isinstance(flag, bool):
            raise InvalidEntry(f'"{where}.headers[{position}].isRequired" is not a boolean')
        names.append(header["name"])
        required = required or flag
    return tuple(names), required


def _packages(value: Any) -> tuple[Package, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InvalidEntry('"packages" is not a list')
    packages = []
    for position, package in enumerate(value):
        where = f"packages[{position}]"
        if not isinstance(package, dict):
            raise InvalidEntry(f'"{where}" is not an object')
        registry_type, identifier = package.get("registryType"), package.get("identifier")
        if not isinstance(registry_type, str) or not registry_type:
            raise InvalidEntry(f'"{where}.registryType" is missing or not a string')
        if not isinstance(identifier, str) or not identifier:
            raise InvalidEntry(f'"{where}.identifier" is missing or not a string')
        version = package.get("version")
        if version is not None and not isinstance(version, str):
            raise InvalidEntry(f'"{where}.version" is not a string')
        transport = package.get("transport")
        kind = transport.get("type") if isinstance(transport, dict) else None
        packages.append(Package(registry_type, identifier, version, kind if isinstance(kind, str) else None))
    return tuple(packages)


def _timestamp(value: Any, field: str) -> datetime | None:
    """Return an RFC 3339 timestamp as an aware datetime (UTC when it names no offset)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidEntry(f'"{field}" is not a string')
    try:
        # Go writes nanoseconds; Python reads at most microseconds.
        text = re.sub(r"(\.\d{6})\d+", r"\1", value.strip()).replace("Z", "+00:00").replace("z", "+00:00")
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidEntry(f'"{field}" {value[:40]!r} is not an RFC 3339 timestamp') from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def retry_after_seconds(value: str | None, *, now: datetime, cap: float = RETRY_AFTER_CAP) -> float:
    """Return how long a 429's ``Retry-After`` asks to wait (seconds or an HTTP date), within [0, cap]."""
    if not value:
        return min(RETRY_AFTER_DEFAULT, cap)
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return min(RETRY_AFTER_DEFAULT, cap)
        seconds = (when - now).total_seconds()
    if seconds != seconds:  # NaN
        return min(RETRY_AFTER_DEFAULT, cap)
    return max(0.0, min(seconds, cap))


# --- fetching -----------------------------------------------------------------------------------


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


@dataclass
class RegistryClient:
    """Fetch the registry's pages one request at a time, as a polite, named client.

    ``sleep`` and ``clock`` are injected so tests never wait: the client sleeps only for a
    429's ``Retry-After``, capped at ``retry_after_cap`` seconds, at most ``max_rate_limited``
    times per page before giving up with a RegistryError.
    """

    base_url: str
    user_agent: str
    timeout: float = 30.0
    page_limit: int = PAGE_LIMIT
    retry_after_cap: float = RETRY_AFTER_CAP
    max_rate_limited: int = MAX_RATE_LIMITED
    max_page_bytes: int = MAX_PAGE_BYTES
    max_pages: int = MAX_PAGES
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    transport: httpx.BaseTransport | None = None

    def pages(self, *, updated_since: datetime | None = None) -> Iterator[Page]:
        """Yield every page: the latest version of each server, or every version updated since a moment.

        A full listing asks ``version=latest``; both ask ``include_deleted=true`` so a deletion
        is seen (the registry always includes them with ``updated_since``).
        """
        params: dict[str, str] = {"limit": str(self.page_limit), "include_deleted": "true"}
        if updated_since is None:
            params["version"] = "latest"
        else:
            params["updated_since"] = rfc3339(updated_since)
        seen: set[str] = set()
        with httpx.Client(
            base_url=self.base_url.rstrip("/"),
            headers={"User-Agent": self.user_agent, "Accept": "application/json"},
            timeout=self.timeout,
            transport=self.transport,
            follow_redirects=False,
        ) as client:
            cursor: str | None = None
            for _ in range(self.max_pages):
                query = {**params, "cursor": cursor} if cursor else params
                page = parse_page(self._get(client, query))
                yield page
                cursor = page.next_cursor
                if cursor is None:
                    return
                if cursor in seen:
                    raise RegistryError(f"The registry repeated the cursor {cursor[:80]!r}")
                seen.add(cursor)
            raise RegistryError(f"More than {self.max_pages} pages: stopped")

    def _get(self, client: httpx.Client, params: Mapping[str, str]) -> Any:
        for waits in range(self.max_rate_limited + 1):
            try:
                with client.stream("GET", SERVERS_PATH, params=params) as response:
                    if response.status_code == 429:
                        if waits == self.max_rate_limited:
                            break
                        wait = retry_after_seconds(
                            response.headers.get("Retry-After"), now=self.clock(), cap=self.retry_after_cap
                        )
                        self.sleep(wait)
                        continue
                    if response.status_code != 200:
                        raise RegistryError(f"The registry answered HTTP {response.status_code}")
                    body = self._read(response)
            except httpx.HTTPError as error:
                raise RegistryError(f"The registry could not be reached: {error}") from error
            try:
                return read_json(body)
            except JsonTooDeep:
                raise RegistryError(f"The page nests deeper than {MAX_JSON_DEPTH} levels") from None
            except ValueError:
                raise RegistryError("The page is not JSON") from None
        raise RegistryError(f"Still rate-limited (HTTP 429) after {self.max_rate_limited} waits")

    def _read(self, response: httpx.Response) -> bytes:
        chunks, size = [], 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > self.max_page_bytes:
                raise RegistryError(f"The page is larger than {self.max_page_bytes} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
