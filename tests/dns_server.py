"""A real DNS server on loopback for the DNS record check's tests: dnslib's, over UDP and TCP.

:class:`Zone` answers from records written as zone-file lines ("example.test. 60 IN A
192.0.2.1"), which a test may change while the server runs (a wrong answer after a right one).
Names can answer an rcode instead (NXDOMAIN, SERVFAIL), set the AD bit, or be too large for
UDP, so the client must ask again over TCP. :func:`silent_udp` is a socket that reads queries
and never answers: the check's timeout.
"""

from __future__ import annotations

import errno
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from dnslib import QTYPE, RCODE, RR, DNSRecord
from dnslib.server import BaseResolver, DNSLogger, DNSServer


@dataclass
class Zone(BaseResolver):
    """Answer each query from ``records``; ``rcodes``, ``ad`` and ``truncate`` change how."""

    records: list[str] = field(default_factory=list)
    # Names (lower-case, with the final dot) answered with this rcode and no records.
    rcodes: dict[str, str] = field(default_factory=dict)
    # Names whose answers carry the AD bit (a validating resolver's "I checked the signatures").
    ad: set[str] = field(default_factory=set)
    # Names answered over UDP with TC set and no records: only TCP gets the answer.
    truncate: set[str] = field(default_factory=set)
    asked: list[tuple[str, str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def resolve(self, request: DNSRecord, handler: Any) -> DNSRecord:
        qname = str(request.q.qname).lower()
        qtype = QTYPE[request.q.qtype]
        with self.lock:
            self.asked.append((handler.protocol, qname, qtype))
            lines = list(self.records)
        reply = request.reply()
        reply.header.ra = 1
        # dnslib's reply copies the query's flags, and the check's query sets AD (RFC 6840 §5.7).
        reply.header.ad = 1 if qname in self.ad else 0
        if qname in self.rcodes:
            reply.header.rcode = getattr(RCODE, self.rcodes[qname])
            return reply
        if qname in self.truncate and handler.protocol == "udp":
            reply.header.tc = 1
            return reply
        records = [rr for line in lines for rr in RR.fromZone(line)]
        wanted = [qname]
        while wanted:  # an A query of an alias gets the CNAME and the target's records, as resolvers answer
            name = wanted.pop()
            for rr in records:
                if str(rr.rname).lower() != name:
                    continue
                if QTYPE[rr.rtype] == qtype:
                    reply.add_answer(rr)
                elif QTYPE[rr.rtype] == "CNAME" and len(reply.rr) < 10:
                    reply.add_answer(rr)
                    wanted.append(str(rr.rdata.label).lower())
        return reply


class _Quiet(DNSLogger):
    def __init__(self) -> None:
        super().__init__(log="-request,-reply,-truncated,-error,-recv,-send,-data", prefix=False)


def _udp_and_tcp(zone: Zone) -> tuple[DNSServer, DNSServer]:
    """Return a UDP and a TCP server of ``zone`` on the same free loopback port.

    The kernel picks a UDP port that is free; the same number may be taken for TCP (by another
    suite on the machine), so a clash picks again instead of failing the test.
    """
    for _attempt in range(50):
        udp = DNSServer(zone, address="127.0.0.1", port=0, logger=_Quiet())
        try:
            tcp = DNSServer(
                zone, address="127.0.0.1", port=udp.server.server_address[1], tcp=True, logger=_Quiet()
            )
        except OSError as exc:
            udp.server.server_close()
            if exc.errno != errno.EADDRINUSE:
                raise
            continue
        return udp, tcp
    raise OSError(errno.EADDRINUSE, "no loopback port free for both UDP and TCP in 50 tries")


@contextmanager
def dns_server(zone: Zone) -> Iterator[str]:
    """Serve ``zone`` on a loopback port over UDP and TCP; yield "127.0.0.1:port"."""
    udp, tcp = _udp_and_tcp(zone)
    port = udp.server.server_address[1]
    for server in (udp, tcp):
        # A short poll: shutdown() waits for the loop to notice, twice per test.
        thread = threading.Thread(
            target=server.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        thread.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        for server in (udp, tcp):
            server.server.shutdown()
            server.server.server_close()


@contextmanager
def silent_udp() -> Iterator[str]:
    """Yield "127.0.0.1:port" of a UDP socket that takes queries and never answers them."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"127.0.0.1:{sock.getsockname()[1]}"
