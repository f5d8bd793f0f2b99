"""The rules of keys and sign-ins, by plain values (monitors.access_rules): expiry, the unused flag, devices."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitors.access_rules import (
    USER_AGENT_MAX,
    api_key_expired,
    api_key_expiry_refusal,
    api_key_unused,
    clean_user_agent,
    client_address,
    user_agent_summary,
)

AT = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("expires_at", "refused"),
    [
        (None, None),
        (AT + timedelta(seconds=1), None),
        (AT + timedelta(days=1), None),
        (AT + timedelta(days=730), None),
        (AT, "The expiry must be in the future."),
        (AT - timedelta(days=1), "The expiry must be in the future."),
        (AT + timedelta(days=730, seconds=1), "A key lives at most 730 days; choose an earlier expiry."),
        (datetime(2026, 7, 1), "Give the expiry with a time zone (e.g. 2027-01-31T00:00:00Z)."),
    ],
)
def test_a_new_key_s_expiry_is_in_the_future_and_within_two_years(expires_at, refused):
    assert api_key_expiry_refusal(expires_at, now=AT) == refused


@pytest.mark.parametrize(
    ("expires_at", "expired"),
    [
        (None, False),
        (AT + timedelta(seconds=1), False),
        (AT, True),
        (AT - timedelta(days=3), True),
    ],
)
def test_a_key_is_refused_from_its_expiry_on(expires_at, expired):
    assert api_key_expired(expires_at, now=AT) is expired


@pytest.mark.parametrize(
    ("last_used_ago", "created_ago", "flagged"),
    [
        (None, timedelta(days=89, hours=23), False),  # never used, but new enough
        (None, timedelta(days=90), True),  # never used for 90 days
        (timedelta(days=1), timedelta(days=400), False),  # old, but in use
        (timedelta(days=89), timedelta(days=400), False),
        (timedelta(days=90), timedelta(days=400), True),  # last used 90 days ago
        (timedelta(days=200), timedelta(days=400), True),
    ],
)
def test_a_key_unused_for_90_days_is_flagged(last_used_ago, created_ago, flagged):
    last_used_at = AT - last_used_ago if last_used_ago else None

    assert api_key_unused(last_used_at=last_used_at, created_at=AT - created_ago, now=AT) is flagged


FIREFOX_LINUX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
CHROME_WINDOWS = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
EDGE_WINDOWS = CHROME_WINDOWS + " Edg/131.0.0.0"
SAFARI_IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.5 Mobile/15E148 Safari/604.1"
)
SAFARI_MAC = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15"
CHROME_ANDROID = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36"


@pytest.mark.parametrize(
    ("user_agent", "summary"),
    [
        (FIREFOX_LINUX, "Firefox on Linux"),
        (CHROME_WINDOWS, "Chrome on Windows"),
        (EDGE_WINDOWS, "Edge on Windows"),
        (SAFARI_IPHONE, "Safari on iPhone"),
        (SAFARI_MAC, "Safari on macOS"),
        (CHROME_ANDROID, "Chrome on Android"),
        ("curl/8.5.0", "curl"),
        ("python-httpx/0.28.1", "Python"),
        ("Mozilla/5.0 (X11; Linux x86_64)", "A browser on Linux"),
        ("", "Unknown browser"),
        ("<script>alert(1)</script>", "Unknown browser"),
    ],
)
def test_a_user_agent_is_summarised_as_browser_on_system(user_agent, summary):
    assert user_agent_summary(user_agent) == summary


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("curl/8.5.0", "curl/8.5.0"),
        ("a\x00b\nc\u202ed\ud800e", "a b c d e"),  # NUL, newline, a bidi override, a lone surrogate
        ("  spaced   out  ", "spaced out"),
        ("x" * 5000, "x" * USER_AGENT_MAX),
    ],
)
def test_a_user_agent_is_stored_without_control_characters_and_capped(given, kept):
    assert clean_user_agent(given) == kept


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("203.0.113.9", "203.0.113.9"),
        ("2001:DB8::1", "2001:db8::1"),
        ("", None),
        (None, None),
        ("unix:/run/gunicorn.sock", None),
        ("203.0.113.9, 10.0.0.1", None),
    ],
)
def test_a_client_address_is_kept_only_when_it_is_an_ip_address(given, kept):
    assert client_address(given) == kept
