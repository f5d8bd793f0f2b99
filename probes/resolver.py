"""Resolve host names for checks without a thread per lookup: c-ares (pycares) answers a future.

``loop.getaddrinfo`` runs libc's blocking resolver in the event loop's default thread pool,
which has min(32, CPUs + 4) threads (six on a 2-core worker). A dozen names whose DNS never
answers hold every one of them for libc's own timeouts (5 s per try and server, more with
search domains), the healthy checks of the same batch queue behind them and time out, and
``asyncio.run`` waits for those threads before it returns: a 2 s check, a 17 s exit. c-ares
sends the queries itself from one native thread per channel and answers through a callback,
so a lookup is a future like any other: as many at once as there are checks in flight, given
up with its check's deadline, and nothing left to wait for when the process ends.

Like libc it reads /etc/hosts and resolv.conf (servers, search domains, ndots) and answers
``localhost`` itself (RFC 6761). IP literals never get here: the connection checks them first.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
from collections.abc import Callable
from typing import Any

import pycares

# c-ares's own budget for one query, set here rather than read from resolv.conf (whose
# "options timeout:30 attempts:5" would keep abandoned queries for minutes): the first try
# waits at least this long for an answer (a cold recursive lookup takes up to a second or
# two); c-ares then retries, with shorter waits once it knows the server answers fast, and
# gives up (a ``dns`` failure) after this many tries, 3 to 15 s. The check's deadline still
# ends the wait first when it is shorter; these only bound how long a query its check gave
# up on lingers in the channel, a few hundred bytes each. Both are c-ares's own defaults.
DNS_TRY_TIMEOUT = 2.0
DNS_TRIES = 3

# The sentences for the failures a check meets; anything else keeps c-ares's own words.
_ERROR_WORDS = {
    pycares.errno.ARES_ENOTFOUND: "the name does not exist",
    pycares.errno.ARES_ENODATA: "the name has no address records",
    pycares.errno.ARES_ETIMEOUT: "the DNS servers did not answer",
    pycares.errno.ARES_ECONNREFUSED: "the DNS servers could not be reached",
    pycares.errno.ARES_ESERVFAIL: "the DNS server failed to answer (SERVFAIL)",
    pycares.errno.ARES_EREFUSED: "the DNS server refused the query",
    pycares.errno.ARES_EBADNAME: "not a valid host name",
}

Nameservers = tuple[str, ...]

# One channel per set of servers for the whole process, shared by every event loop and thread
# (a worker runs batches on several threads, each with its own loop): pycares channels are
# thread-safe, and their callbacks reach each lookup's own loop through call_soon_threadsafe.
_channels: dict[Nameservers, pycares.Channel] = {}
_channels_lock = threading.Lock()


def _forget_channels() -> None:
    # A forked child (Celery's prefork pool) inherits the channels but not c-ares's thread
    # that serves them: its lookups would never be answered. It opens its own on first use.
    _channels.clear()


os.register_at_fork(after_in_child=_forget_channels)


def _channel(nameservers: Nameservers) -> pycares.Channel:
    channel = _channels.get(nameservers)
    if channel is not None:
        return channel
    with _channels_lock:
        channel = _channels.get(nameservers)
        if channel is None:
            channel = pycares.Channel(
                timeout=DNS_TRY_TIMEOUT, tries=DNS_TRIES, servers=list(nameservers) or None
            )
            _channels[nameservers] = channel
    return channel


async def resolve(host: str, port: int, nameservers: Nameservers = ()) -> list[str]:
    """Return the addresses ``host`` resolves to for TCP, in c-ares's preference order (RFC 6724).

    ``nameservers`` ("192.0.2.53" or "192.0.2.53:5353") replaces resolv.conf's servers; tests
    point it at a loopback server. Raises :class:`socket.gaierror` with a sentence when the
    lookup fails; a lookup that never ends is ended by the caller's deadline.
    """
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[list[str]] = loop.create_future()

    def settle(result: Any, error: int | None) -> None:
        if answer.done():
            return  # the check gave up (its deadline) before the answer came
        if error is not None:
            words = _ERROR_WORDS.get(error) or pycares.errno.strerror(error)
            answer.set_exception(socket.gaierror(error, words))
            return
        addresses: list[str] = []
        for node in result.nodes:
            address = node.addr[0]
            text = address.decode("ascii") if isinstance(address, bytes) else str(address)
            if text not in addresses:
                addresses.append(text)
        answer.set_result(addresses)

    try:
        channel = _channel(nameservers)
    except pycares.AresError as exc:
        # Out of inotify watches or file descriptors: a failed lookup, not a crash of the check.
        raise socket.gaierror(-1, f"the resolver could not start ({exc})") from None
    try:
        channel.getaddrinfo(
            host,
            port,
            family=socket.AF_UNSPEC,
            type=socket.SOCK_STREAM,
            callback=_on_loop(loop, settle),
        )
    except (pycares.AresError, UnicodeError, ValueError):
        raise socket.gaierror(pycares.errno.ARES_EBADNAME, "not a valid host name") from None
    return await answer


def _on_loop(
    loop: asyncio.AbstractEventLoop, settle: Callable[[Any, int | None], None]
) -> Callable[[Any, int | None], None]:
    """Return a c-ares callback that runs ``settle`` on ``loop`` (c-ares calls from its own thread)."""

    def callback(result: Any, error: int | None) -> None:
        # RuntimeError: the loop is closed, and nobody waits for this answer any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, result, error)

    return callback
