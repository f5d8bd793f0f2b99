"""Run checks: one at a time, or a batch on one event loop, capped, each outcome as its check ends.

This is the engine's front door for the worker tasks, the ``mcpcheck`` command and the
benchmark. Remote behaviour never raises out of :func:`run_check`; it comes back as a DOWN
outcome with a kind and a sentence. A bug does raise there, and :func:`stream_batch` (which
:func:`run_batch` collects) turns it into a DOWN outcome for that one check so the rest of the
batch still reports.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import ssl
import traceback
from collections.abc import AsyncGenerator, Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

import httpx

from probes import __version__, certificates
from probes.checks import CheckConfig, kind_of_config
from probes.connection import Connection
from probes.mcp.tools import storable_tool
from probes.redact import Redactor, redacting, redactor_for
from probes.text import is_storable, storable
from probes.types import FailureKind, ProbeOutcome, ServerInfo, Status

logger = logging.getLogger(__name__)

USER_AGENT = f"Uptimy/{__version__} (+https://uptimy.example; monitor; sends only initialize and tools/list)"


def user_agent(region: str | None = None) -> str:
    """Return the checks' User-Agent; with ``region``, naming the region they run from.

    A server's logs, its firewall and its CDN can then tell Uptimy's regions apart (to allow
    them, or to see which one an outage hit). Only letters, digits and ``-`` of the region's
    slug are kept, so the header stays one valid token whatever a region is called.
    """
    if not region:
        return USER_AGENT
    slug = "".join(char for char in region if char.isascii() and (char.isalnum() or char == "-"))
    return USER_AGENT.replace("; monitor;", f"; monitor; region {slug or 'unnamed'};", 1)


T = TypeVar("T")
K = TypeVar("K")


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """Return the process-wide client SSL context (certifi roots, as httpx builds it), built once."""
    context = httpx.create_ssl_context()
    context.set_alpn_protocols(["http/1.1"])
    return context


@dataclass(frozen=True)
class ProbeEnv:
    """Hold what the caller decides for every check: the address guard, the User-Agent, TLS trust,
    and the DNS servers (empty: the system's, from resolv.conf; "ip" or "ip:port" each)."""

    allow_private: bool = False
    user_agent: str = USER_AGENT
    ssl_context: ssl.SSLContext | None = None
    nameservers: tuple[str, ...] = ()


async def run_check(config: CheckConfig, env: ProbeEnv) -> ProbeOutcome:
    """Return the outcome of one check; remote failures are outcomes, never exceptions."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + config.timeout
    conn = Connection(
        allow_private=env.allow_private,
        user_agent=env.user_agent,
        ssl_context=env.ssl_context or default_ssl_context(),
        nameservers=env.nameservers,
        deadline=deadline,
    )
    run = kind_of_config(config).run
    if run is None:
        raise ValueError(f"{kind_of_config(config).name} checks are passive: nothing probes them")
    with redacting(redactor_for(config.headers)) as redactor:
        try:
            outcome = await run(config, conn, deadline=deadline)
        finally:
            await conn.aclose()
        outcome = with_certificate(outcome, conn, warn_days=getattr(config, "certificate_warn_days", 0))
    return finish_outcome(outcome, redactor)


def with_certificate(outcome: ProbeOutcome, conn: Connection, *, warn_days: int = 0) -> ProbeOutcome:
    """Return ``outcome`` with the leaf certificate of the check's first verified handshake in
    ``details["certificate"]`` (every HTTPS check: HTTP, MCP), unless its type put one there.

    An UP outcome whose certificate expires within ``warn_days`` (a config's
    ``certificate_warn_days``; 0: never) becomes DEGRADED saying the days left. Every other
    certificate problem failed the handshake already, so the outcome is down with its TLS words;
    a DOWN outcome stays what it is.
    """
    peer = conn.peer_certificate
    if peer is None or "certificate" in outcome.details:
        return outcome
    der, name = peer
    parsed = certificates.parse(der)
    if parsed is None:
        return outcome
    now = certificates.utc_now()
    described = certificates.describe(parsed, now=now, server_name=name)
    outcome = replace(outcome, details={**outcome.details, "certificate": described})
    if outcome.status is Status.UP and (
        warning := certificates.expiry_warning(parsed, now=now, warn_days=warn_days)
    ):
        outcome = replace(outcome, status=warning.status, kind=warning.kind, reason=warning.reason)
    return outcome


@dataclass(frozen=True, slots=True)
class Finished(Generic[K]):
    """One check of a batch that ended: its key, its outcome, and when it ended (UTC)."""

    key: K
    outcome: ProbeOutcome
    at: datetime


def utc_now() -> datetime:
    """Return the time now, in UTC: when a check ended, unless the caller gives a clock."""
    return datetime.now(UTC)


async def stream_batch(
    items: Sequence[tuple[K, CheckConfig]],
    env: ProbeEnv,
    *,
    max_in_flight: int = 200,
    per_host: int = 20,
    clock: Callable[[], datetime] = utc_now,
) -> AsyncGenerator[Finished[K], None]:
    """Yield every item's outcome as its check ends, running at most ``max_in_flight`` checks at once.

    A host gets at most ``per_host`` concurrent checks, so one customer's many monitors on
    one server neither look like an attack nor starve the rest of the batch. The per-host
    slot is taken before the global one: a check waiting on its host holds no global slot.
    Each outcome is stamped by ``clock`` as its check ends, so a caller that is busy with an
    earlier one (recording it) still learns when this one finished. Closing the iterator
    early (or cancelling its consumer) cancels the checks still running.
    """
    in_flight = asyncio.Semaphore(max_in_flight)
    hosts: dict[str, asyncio.Semaphore] = {}

    async def one(key: K, config: CheckConfig) -> Finished[K]:
        host = hosts.setdefault(config.host, asyncio.Semaphore(per_host))
        async with host, in_flight:
            try:
                outcome = await run_check(config, env)
            except Exception as exc:
                outcome = crashed_outcome(config, exc)
        return Finished(key, outcome, clock())

    # Each task queues itself as it ends: one wake-up per check, where asyncio.wait over the
    # pending set would re-register every pending task on every wake-up (O(n²) in a batch).
    ended: asyncio.Queue[asyncio.Task[Finished[K]]] = asyncio.Queue()
    tasks = [asyncio.create_task(one(key, config)) for key, config in items]
    for task in tasks:
        task.add_done_callback(ended.put_nowait)
    try:
        for _ in tasks:
            yield (await ended.get()).result()
    finally:
        for task in tasks:
            task.cancel()  # only those still running: cancelling a done task does nothing
        # Wait for the cancelled checks to close their connections before the loop goes away.
        await asyncio.gather(*tasks, return_exceptions=True)


async def run_batch(
    items: Sequence[tuple[K, CheckConfig]],
    env: ProbeEnv,
    *,
    max_in_flight: int = 200,
    per_host: int = 20,
) -> list[tuple[K, ProbeOutcome]]:
    """Return every item's outcome, in input order, once the batch's slowest check has ended.

    The caps are :func:`stream_batch`'s; a caller that can use each outcome as it comes uses that.
    """
    outcomes: dict[int, ProbeOutcome] = {}
    indexed = [(index, config) for index, (_, config) in enumerate(items)]
    stream = stream_batch(indexed, env, max_in_flight=max_in_flight, per_host=per_host)
    async with contextlib.aclosing(stream):
        async for finished in stream:
            outcomes[finished.key] = finished.outcome
    return [(key, outcomes[index]) for index, (key, _) in enumerate(items)]


def run_sync(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``factory`` makes to its end from synchronous code, on a fresh event loop.

    The loop runs on a thread of its own when the caller's thread already runs one (a view under
    ASGI's thread-sensitive executor may): asyncio.run refuses to nest.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(factory())).result()


def run_check_sync(config: CheckConfig, env: ProbeEnv) -> ProbeOutcome:
    """Run one check on a fresh event loop (for commands and scripts)."""

    async def main() -> ProbeOutcome:
        outcome = await run_check(config, env)
        # Let aborted transports deliver connection_lost before the loop closes.
        await asyncio.sleep(0)
        return outcome

    return asyncio.run(main())


def crashed_outcome(config: CheckConfig, exc: BaseException) -> ProbeOutcome:
    """Return a DOWN outcome for a check that raised (a bug), and log it without secrets."""
    details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    logger.error(
        "check of %s crashed with %s:\n%s",
        config.target,
        type(exc).__name__,
        redactor_for(config.headers)(details),
    )
    return ProbeOutcome(
        status=Status.DOWN,
        kind=FailureKind.PROTOCOL,
        reason=f"The check failed inside Uptimy ({type(exc).__name__}); this is our bug, not the server's",
    )


def outcome_to_json(outcome: ProbeOutcome) -> dict[str, Any]:
    """Return the ``mcpcheck --json`` shape of ``outcome`` (it never holds a header value)."""
    timings = outcome.timings
    return {
        "status": outcome.status.value,
        "kind": outcome.kind.value if outcome.kind is not None else None,
        "reason": outcome.reason,
        "server": {"name": outcome.server.name, "version": outcome.server.version}
        if outcome.server
        else None,
        "protocol": outcome.protocol,
        "access": outcome.access.value if outcome.access is not None else None,
        "signin_server": outcome.signin_server,
        "signin_discovery": outcome.signin_discovery.value if outcome.signin_discovery is not None else None,
        "tools": outcome.tool_count,
        "tool_names": list(outcome.tool_names),
        "missing_tools": list(outcome.missing_tools),
        "transport": outcome.transport.value if outcome.transport is not None else None,
        "details": dict(outcome.details),
        "timings": {
            "dns_ms": timings.dns_ms,
            "tcp_ms": timings.tcp_ms,
            "tls_ms": timings.tls_ms,
            "ttfb_ms": timings.ttfb_ms,
            "total_ms": timings.total_ms,
        },
    }


def finish_outcome(outcome: ProbeOutcome, redactor: Redactor) -> ProbeOutcome:
    """Return ``outcome`` with every text a server could have written redacted and made storable.

    The secrets go first (a server may echo them anywhere), then NUL and lone surrogates, so
    that no consumer (recording, ``mcpcheck``'s output, a JSON dump) meets text it can't handle.
    Nearly every outcome needs neither, with headers or without: one scan of the texts joined
    says so (a secret in any of them is in the join), and the outcome is returned as it is
    instead of being rebuilt on every check.
    """
    texts = "".join(_texts_of(outcome))
    if is_storable(texts) and not redactor.finds(texts):
        return outcome

    def clean(text: str) -> str:
        return storable(redactor(text))

    server = outcome.server
    if server is not None:
        server = ServerInfo(name=clean(server.name), version=clean(server.version))
    return replace(
        outcome,
        reason=clean(outcome.reason),
        warnings=tuple(clean(warning) for warning in outcome.warnings),
        server=server,
        protocol=clean(outcome.protocol) if outcome.protocol else outcome.protocol,
        signin_server=clean(outcome.signin_server) if outcome.signin_server else outcome.signin_server,
        tools=tuple(storable_tool(tool, clean) for tool in outcome.tools),
        missing_tools=tuple(clean(name) for name in outcome.missing_tools),
        details=_cleaned(outcome.details, clean),
    )


def _cleaned(value: Any, clean: Callable[[str], str]) -> Any:
    """Return a JSON value with each text in it (keys included) passed through ``clean``."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, Mapping):
        return {clean(str(key)): _cleaned(item, clean) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_cleaned(item, clean) for item in value]
    return value


def _detail_texts(value: Any) -> Iterator[str]:
    """Yield every text in a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _detail_texts(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _detail_texts(item)


def _texts_of(outcome: ProbeOutcome) -> list[str]:
    """Return every text of ``outcome`` a server could have written."""
    texts = [outcome.reason, *outcome.warnings, outcome.protocol or "", outcome.signin_server or ""]
    if outcome.server is not None:
        texts += (outcome.server.name, outcome.server.version)
    texts += outcome.missing_tools
    texts += _detail_texts(outcome.details)
    for tool in outcome.tools:
        texts.append(tool.name)
        texts += tool.required_inputs
        texts += (tool.description or "", tool.input_schema or "")
    return texts
