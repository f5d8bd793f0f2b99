"""The HTTP check (type 1): expected status, keyword, redirects, and the shared guard (respx)."""

from __future__ import annotations

import pytest
from probe_support import run

from probes.checks.http import HttpConfig, StatusRange
from probes.types import FailureKind, Status

SITE = "https://www.example.com/health"


def http(**kwargs) -> HttpConfig:
    return HttpConfig(uri=kwargs.pop("uri", SITE), **kwargs)


def test_expected_status_is_up(mock):
    mock.get(SITE).respond(200, text="ok")
    outcome = run(http())
    assert outcome.status is Status.UP
    assert outcome.http_status == 200
    assert outcome.timings.total_ms is not None


def test_unexpected_status_names_it_the_expectation_and_the_message(mock):
    mock.get(SITE).respond(503, text="maintenance until 10:00")
    outcome = run(http(expected_status=(StatusRange(200, 299), StatusRange(301, 301))))
    assert outcome.kind is FailureKind.HTTP_STATUS
    assert outcome.reason == "HTTP 503 (expected 2xx, 301): maintenance until 10:00"


def test_method_headers_and_body_are_sent(mock):
    route = mock.post(SITE).respond(201)
    run(http(method="POST", body='{"a": 1}', headers=(("X-Token", "t-1234"),)))
    request = route.calls.last.request
    assert request.content == b'{"a": 1}'
    assert request.headers["x-token"] == "t-1234"


@pytest.mark.parametrize(
    ("body", "absent", "status"),
    [
        ("all systems operational", False, Status.UP),
        ("degraded", False, Status.DOWN),
        ("fine", True, Status.UP),
        ("an error", True, Status.DOWN),
    ],
)
def test_keyword_present_or_absent(mock, body, absent, status):
    mock.get(SITE).respond(200, text=body)
    outcome = run(http(keyword="operational" if not absent else "error", keyword_absent=absent))
    assert outcome.status is status
    if status is Status.DOWN:
        assert outcome.kind is FailureKind.KEYWORD


def test_keyword_in_a_body_over_the_cap_is_too_large(mock):
    mock.get(SITE).respond(200, content=b"a" * (5 * 1024 * 1024 + 1))
    assert run(http(keyword="b")).kind is FailureKind.TOO_LARGE


def test_a_body_over_the_cap_without_a_keyword_is_up_with_a_warning(mock):
    async def chunks():
        for _ in range(100):
            yield b"a" * 65536

    mock.get(SITE).respond(200, content=chunks())
    outcome = run(http())
    assert outcome.status is Status.UP
    assert outcome.warnings


def test_redirects_are_followed_across_hosts(mock):
    mock.get(SITE).respond(301, headers={"location": "https://status.example.org/"})
    mock.get("https://status.example.org/").respond(200)
    assert run(http()).status is Status.UP


def test_redirects_are_not_followed_when_switched_off(mock):
    mock.get(SITE).respond(301, headers={"location": "https://status.example.org/"})
    outcome = run(http(follow_redirects=False))
    assert outcome.kind is FailureKind.HTTP_STATUS
    assert outcome.http_status == 301


def test_a_303_turns_a_post_into_a_get(mock):
    mock.post(SITE).respond(303, headers={"location": "/done"})
    done = mock.get("https://www.example.com/done").respond(200)
    assert run(http(method="POST", body="x")).status is Status.UP
    assert done.called


def test_https_to_http_redirect_is_refused(mock):
    mock.get(SITE).respond(302, headers={"location": "http://www.example.com/health"})
    outcome = run(http())
    assert outcome.kind is FailureKind.REDIRECT_REFUSED
    assert "http://www.example.com/health" in outcome.reason


def test_more_than_five_redirects_are_refused(mock):
    for hop in range(7):
        mock.get(f"https://www.example.com/{hop}").respond(302, headers={"location": f"/{hop + 1}"})
    mock.get(SITE).respond(302, headers={"location": "/0"})
    outcome = run(http())
    assert outcome.kind is FailureKind.REDIRECT_REFUSED
    assert "more than 5 redirects" in outcome.reason


def test_a_redirect_to_a_private_address_is_blocked(mock):
    mock.get(SITE).respond(302, headers={"location": "https://192.168.1.1/admin"})
    outcome = run(http())
    assert outcome.kind is FailureKind.BLOCKED_ADDRESS
    assert "192.168.1.1 is a private address" in outcome.reason


def test_a_private_target_is_blocked_before_any_request(mock):
    outcome = run(http(uri="http://10.0.0.1/"))
    assert outcome.kind is FailureKind.BLOCKED_ADDRESS
    assert not mock.calls


def test_head_checks_read_no_body(mock):
    mock.head(SITE).respond(200)
    assert run(http(method="HEAD", keyword="x")).status is Status.UP


KEYED = (("Authorization", "Bearer sk-live-4f9a8b7c6d5e"), ("X-Api-Key", "key-0123456789"))


@pytest.mark.parametrize(
    ("start", "location"),
    [
        (SITE, "https://status.example.org/"),
        (SITE, "https://www.example.com:8443/up"),
        ("http://www.example.com/health", "https://www.example.com/up"),
    ],
    ids=["another host", "another port", "another scheme"],
)
def test_a_redirect_to_another_origin_is_followed_without_the_checks_headers(mock, start, location):
    mock.get(start).respond(301, headers={"location": location})
    elsewhere = mock.get(location).respond(200)

    outcome = run(http(uri=start, headers=KEYED))

    assert outcome.status is Status.UP
    sent = elsewhere.calls.last.request.headers
    assert "authorization" not in sent
    assert "x-api-key" not in sent
    assert "without this check's headers" in outcome.warnings[0]


def test_a_redirect_within_the_origin_keeps_the_checks_headers(mock):
    mock.get(SITE).respond(301, headers={"location": "/healthz"})
    same = mock.get("https://www.example.com/healthz").respond(200)

    outcome = run(http(headers=KEYED))

    assert outcome.status is Status.UP
    assert same.calls.last.request.headers["x-api-key"] == "key-0123456789"
    assert outcome.warnings == ()
