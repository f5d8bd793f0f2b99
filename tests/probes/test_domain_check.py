"""Check the domain check (type 6): the bootstrap, the RDAP answer, the rules, and a real RDAP server."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import time_machine

from probes import rdap
from probes.checks.domain import DomainConfig, clear_cache, judge, parse_domain_config
from probes.config import ConfigError
from probes.runner import ProbeEnv, run_check_sync
from probes.types import FailureKind, Status

RECORDED = json.loads((Path(__file__).parent / "data" / "rdap_domain_example.json").read_text())
EXPIRES = datetime(2027, 8, 13, 4, tzinfo=UTC)
ENV = ProbeEnv(allow_private=True)


def test_the_shipped_bootstrap_names_the_registries_of_big_tlds():
    shipped = rdap.parse_bootstrap(rdap.SHIPPED_BOOTSTRAP.read_bytes())

    assert shipped.bases_for("example.com") == ("https://rdap.verisign.com/com/v1/",)
    assert shipped.bases_for("Example.ORG.") == ("https://rdap.publicinterestregistry.org/rdap/",)
    assert shipped.bases_for("example.invalid") == ()


def test_the_longest_suffix_wins_and_https_comes_first():
    document = {
        "services": [
            [["uk"], ["https://rdap.nominet.example/uk"]],
            [["co.uk"], ["http://plain.example/", "https://co.example/"]],
        ]
    }
    found = rdap.parse_bootstrap(json.dumps(document).encode())

    assert found.bases_for("shop.co.uk") == ("https://co.example/", "http://plain.example/")
    assert found.bases_for("example.uk") == ("https://rdap.nominet.example/uk/",)


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        (b"not json", "not JSON"),
        (b"[]", 'no "services" list'),
        (b'{"services": [["com"]]}', "services[0] is not a pair of lists"),
        (b'{"services": []}', "no service"),
        (b" " * (3 * 1024 * 1024), "larger than 2 MiB"),
        (b'{"services": ' + b"[" * 5000 + b"]" * 5000 + b"}", "more than 64 levels deep"),
    ],
)
def test_a_bootstrap_that_is_not_rfc_9224_is_refused_saying_why(document, problem):
    with pytest.raises(rdap.BootstrapInvalid, match=re.escape(problem)):
        rdap.parse_bootstrap(document)


def test_a_recorded_answer_gives_its_expiry_registrar_and_statuses():
    registration = rdap.registration_of(RECORDED)

    assert registration.expires_at == EXPIRES
    assert registration.registrar == "RESERVED-Internet Assigned Numbers Authority"
    assert registration.statuses[0] == "client delete prohibited"


@pytest.mark.parametrize("answer", [{"objectClassName": "entity"}, [], "domain", {"ldhName": "example.test"}])
def test_an_answer_that_is_no_domain_object_is_refused(answer):
    with pytest.raises(ValueError, match="not an RDAP domain object"):
        rdap.registration_of(answer)


@pytest.mark.parametrize(
    ("now", "status", "kind", "reason"),
    [
        (EXPIRES - timedelta(days=200), Status.UP, None, ""),
        (EXPIRES - timedelta(days=30, hours=1), Status.UP, None, ""),
        (
            EXPIRES - timedelta(days=29, hours=1),
            Status.DEGRADED,
            FailureKind.DOMAIN_EXPIRING,
            "The registration of example.test expires in 29 days (2027-08-13)",
        ),
        (
            EXPIRES - timedelta(hours=2),
            Status.DEGRADED,
            FailureKind.DOMAIN_EXPIRING,
            "The registration of example.test expires in 0 days (2027-08-13)",
        ),
        (
            EXPIRES + timedelta(hours=2),
            Status.DOWN,
            FailureKind.DOMAIN_EXPIRED,
            "The registration of example.test expired today (2027-08-13)",
        ),
        (
            EXPIRES + timedelta(days=3, hours=2),
            Status.DOWN,
            FailureKind.DOMAIN_EXPIRED,
            "The registration of example.test expired 3 days ago (2027-08-13)",
        ),
    ],
)
def test_the_rules(now, status, kind, reason):
    assert judge(DomainConfig("example.test"), EXPIRES, now=now) == (status, kind, reason)


def test_no_expiry_is_never_down():
    assert judge(DomainConfig("example.test"), None, now=EXPIRES)[0] is Status.UP


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({}, "domain"),
        ({"domain": "192.0.2.1"}, "domain"),
        ({"domain": "com"}, "domain"),
        ({"domain": "bad domain"}, "domain"),
        ({"domain": "example.com", "warnDays": 400}, "warnDays"),
        ({"domain": "example.com", "warnDays": -1}, "warnDays"),
        ({"domain": "example.com", "uri": "https://example.com/"}, "uri"),
    ],
)
def test_a_bad_config_names_its_field(raw, field):
    with pytest.raises(ConfigError) as error:
        parse_domain_config(raw)

    assert field in error.value.errors


def test_an_international_domain_is_kept_as_its_ascii_name():
    assert parse_domain_config({"domain": "Bücher.Example"}).domain == "xn--bcher-kva.example"


# --- against a real RDAP server on loopback -------------------------------------------------------


class Registry(BaseHTTPRequestHandler):
    answers: dict[str, tuple[int, bytes, dict[str, str]]] = {}
    asked: list[str] = []

    def do_GET(self) -> None:
        self.asked.append(self.path)
        status, body, headers = self.answers.get(self.path, (404, b'{"errorCode": 404}', {}))
        self.send_response(status)
        self.send_header("Content-Type", "application/rdap+json")
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def registry() -> Iterator[type[Registry]]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    Registry.answers, Registry.asked = {}, []
    base = f"http://127.0.0.1:{httpd.server_address[1]}/rdap/"
    rdap.use_bootstrap(rdap.Bootstrap("test", {"test": (base,)}))
    clear_cache()
    yield Registry
    rdap.use_bootstrap(None)
    clear_cache()
    httpd.shutdown()
    httpd.server_close()


class RawJson(str):
    """A body sent as it is, not encoded as JSON."""


def answer(registry: type[Registry], path: str, body: object, status: int = 200, **headers: str) -> None:
    encoded = body.encode() if isinstance(body, RawJson) else json.dumps(body).encode()
    registry.answers[path] = (status, encoded, headers)


def run(domain: str = "example.test", **config: object):
    return run_check_sync(parse_domain_config({"domain": domain, **config}), ENV)


@time_machine.travel(EXPIRES - timedelta(days=20), tick=False)
def test_a_registration_expiring_within_the_warning_is_degraded_with_the_days_left(registry):
    answer(registry, "/rdap/domain/example.test", RECORDED)

    outcome = run()

    assert (outcome.status, outcome.kind) == (Status.DEGRADED, FailureKind.DOMAIN_EXPIRING)
    assert outcome.reason == "The registration of example.test expires in 20 days (2027-08-13)"
    assert outcome.details["days_left"] == 20
    assert outcome.details["registrar"] == "RESERVED-Internet Assigned Numbers Authority"


@time_machine.travel(EXPIRES + timedelta(days=3, hours=1), tick=False)
def test_an_expired_registration_is_down(registry):
    answer(registry, "/rdap/domain/example.test", RECORDED)

    assert run().kind is FailureKind.DOMAIN_EXPIRED


@time_machine.travel(EXPIRES - timedelta(days=200), tick=False)
def test_a_registry_that_publishes_no_expiry_is_up_saying_it_was_not_checked(registry):
    events = [event for event in RECORDED["events"] if event["eventAction"] != "expiration"]
    answer(registry, "/rdap/domain/example.test", {**RECORDED, "events": events})

    outcome = run()

    assert outcome.status is Status.UP
    assert outcome.warnings == ("The registry publishes no expiry date for example.test; it was not checked",)


def test_an_unregistered_domain_is_down(registry):
    outcome = run("gone.test")

    assert (outcome.status, outcome.kind, outcome.http_status) == (
        Status.DOWN,
        FailureKind.DOMAIN_EXPIRED,
        404,
    )


@pytest.mark.parametrize(
    "status_and_body",
    [(500, {"errorCode": 500}), (200, "x" * (2 * 1024 * 1024)), (200, ["not", "a", "domain"])],
)
def test_a_registry_that_fails_is_never_down(registry, status_and_body):
    status, body = status_and_body
    answer(registry, "/rdap/domain/example.test", body, status=status)

    outcome = run()

    assert outcome.status is Status.UP
    assert outcome.warnings[0].endswith("the expiry was not checked")


@time_machine.travel(EXPIRES - timedelta(days=200), tick=False)
def test_a_redirect_is_followed_and_an_answer_is_asked_once_while_fresh(registry):
    answer(registry, "/rdap/domain/example.test", {}, status=301, Location="/rdap/moved/example.test")
    answer(registry, "/rdap/moved/example.test", RECORDED)

    first, second = run(), run()

    assert (first.status, second.status) == (Status.UP, Status.UP)
    assert registry.asked == ["/rdap/domain/example.test", "/rdap/moved/example.test"]


def test_a_registry_on_a_private_address_is_refused_by_the_guard(registry):
    outcome = run_check_sync(parse_domain_config({"domain": "example.test"}), ProbeEnv(allow_private=False))

    assert (outcome.status, outcome.kind) == (Status.DOWN, FailureKind.BLOCKED_ADDRESS)


def test_a_tld_without_rdap_is_up_saying_it_was_not_checked(registry):
    outcome = run("example.nordap")

    assert outcome.status is Status.UP
    assert "publishes no RDAP service" in outcome.warnings[0]
