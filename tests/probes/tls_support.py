"""Certificates made in the test (a CA, an intermediate, leaves of every kind) and TLS servers on loopback.

Every date is relative to one instant, ``Pki.now``: the machine's real time in whole seconds
(OpenSSL, which verifies the handshake, reads the real clock, shifted run or not), and the
tests give the check that same instant as its clock (``probes.certificates.utc_now``), so the
days left are exact whatever the day.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import ssl
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.clock import real_now

DAY = dt.timedelta(days=1)
HOST = "tls.test"

Key = ec.EllipticCurvePrivateKey


@dataclass(frozen=True)
class Issued:
    cert: x509.Certificate
    key: Key


def _general_name(name: str) -> x509.GeneralName:
    """Return a SAN entry: an IP address for an address literal (an HTTPS URL to 127.0.0.1), else a DNS name."""
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


@dataclass
class Pki:
    """A root CA and an intermediate, and leaves for ``HOST`` dated around ``now``."""

    now: dt.datetime = field(default_factory=lambda: real_now().replace(microsecond=0))
    root: Issued = field(init=False)
    intermediate: Issued = field(init=False)

    def __post_init__(self) -> None:
        self.root = self._issue("Uptimy Test Root CA", None, ca=True)
        self.intermediate = self._issue("Uptimy Test Intermediate CA", self.root, ca=True)

    def _issue(
        self,
        common_name: str,
        issuer: Issued | None,
        *,
        ca: bool = False,
        names: tuple[str, ...] = (),
        not_before: dt.timedelta = -30 * DAY,
        not_after: dt.timedelta = 365 * DAY,
    ) -> Issued:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name))
            .issuer_name(issuer.cert.subject if issuer else _name(common_name))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self.now + not_before)
            .not_valid_after(self.now + not_after)
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if names:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([_general_name(name) for name in names]), critical=False
            )
        return Issued(builder.sign(issuer.key if issuer else key, hashes.SHA256()), key)

    def leaf(
        self,
        *,
        names: tuple[str, ...] = (HOST,),
        not_before: dt.timedelta = -DAY,
        not_after: dt.timedelta = 90 * DAY,
        by_intermediate: bool = False,
        self_signed: bool = False,
    ) -> Issued:
        issuer = None if self_signed else (self.intermediate if by_intermediate else self.root)
        return self._issue(
            names[0], issuer, ca=self_signed, names=names, not_before=not_before, not_after=not_after
        )

    def client(self) -> ssl.SSLContext:
        """Return a client context that trusts the root only."""
        return ssl.create_default_context(cadata=_pem(self.root.cert).decode())


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def server_context(leaf: Issued, *chain: Issued) -> ssl.SSLContext:
    """Return a server context sending ``leaf`` followed by ``chain``."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    with tempfile.TemporaryDirectory() as folder:
        cert_path, key_path = Path(folder) / "cert.pem", Path(folder) / "key.pem"
        cert_path.write_bytes(b"".join(_pem(item.cert) for item in (leaf, *chain)))
        key_path.write_bytes(
            leaf.key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        context.load_cert_chain(cert_path, key_path)
    return context


def scenarios(pki: Pki) -> dict[str, ssl.SSLContext]:
    """Return a server context for each kind of certificate the tests serve."""
    return {
        "valid": server_context(pki.leaf()),
        "expiring": server_context(pki.leaf(not_after=3 * DAY)),
        "expired": server_context(pki.leaf(not_before=-30 * DAY, not_after=-3 * DAY)),
        "not_yet_valid": server_context(pki.leaf(not_before=2 * DAY)),
        "wrong_name": server_context(pki.leaf(names=("other.test",))),
        "self_signed": server_context(pki.leaf(self_signed=True)),
        "incomplete_chain": server_context(pki.leaf(by_intermediate=True)),
        "full_chain": server_context(pki.leaf(by_intermediate=True), pki.intermediate),
    }


@asynccontextmanager
async def tls_server(context: ssl.SSLContext) -> AsyncIterator[int]:
    """Serve TLS from the first byte on 127.0.0.1 (the handshake and nothing more); yield the port."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()
        writer.close()

    server = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=context)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()


Dialog = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[bool]]


async def imap_dialog(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    writer.write(b"* OK [CAPABILITY IMAP4rev1 STARTTLS] ready\r\n")
    line = await reader.readline()
    tag = line.split(b" ", 1)[0]
    writer.write(b"* a note before the answer\r\n" + tag + b" OK Begin TLS negotiation now\r\n")
    return line.upper().endswith(b"STARTTLS\r\n")


async def pop3_dialog(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    writer.write(b"+OK POP3 ready\r\n")
    line = await reader.readline()
    writer.write(b"+OK Begin TLS negotiation\r\n")
    return line == b"STLS\r\n"


@asynccontextmanager
async def starttls_server(context: ssl.SSLContext, dialog: Dialog) -> AsyncIterator[int]:
    """Serve a plain-text dialog that ends in STARTTLS, then the TLS handshake; yield the port."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if await dialog(reader, writer):
                await writer.drain()
                await writer.start_tls(context)
                await reader.read()
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
