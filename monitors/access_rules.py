"""Judge credentials and sign-ins by plain values: a key's expiry, an unused key, a browser's name.

Pure: no Django, no settings. The services, the API's authentication, the MCP endpoint and the
web pages read these, so each rule and its sentence exist once.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from datetime import datetime, timedelta

# A key that outlives its purpose is a liability; two years is the longest a person must plan for.
API_KEY_MAX_LIFETIME = timedelta(days=730)
# The flag on a key nobody has used in this long (or, never used, created this long ago).
API_KEY_UNUSED_AFTER = timedelta(days=90)
UNUSED_FLAG = "Unused for 90 days: revoke it?"
# A User-Agent is the client's text: kept to this many characters once cleaned.
USER_AGENT_MAX = 300


def api_key_expiry_refusal(expires_at: datetime | None, *, now: datetime) -> str | None:
    """Return why ``expires_at`` can't be a new key's expiry, or None when it can (None: never expires)."""
    if expires_at is None:
        return None
    if expires_at.tzinfo is None:
        return "Give the expiry with a time zone (e.g. 2027-01-31T00:00:00Z)."
    if expires_at <= now:
        return "The expiry must be in the future."
    if expires_at - now > API_KEY_MAX_LIFETIME:
        return f"A key lives at most {API_KEY_MAX_LIFETIME.days} days; choose an earlier expiry."
    return None


def api_key_expired(expires_at: datetime | None, *, now: datetime) -> bool:
    """Return whether a key with this expiry is refused at ``now`` (the expiry instant itself included)."""
    return expires_at is not None and now >= expires_at


def api_key_expired_message(expires_at: datetime) -> str:
    """Return the 401's sentence for an expired key."""
    return f"This API key expired at {expires_at.strftime('%Y-%m-%d %H:%M')} UTC; create a new one."


def api_key_unused(*, last_used_at: datetime | None, created_at: datetime, now: datetime) -> bool:
    """Return whether a key is flagged as unused: not used for 90 days, or never and created 90 days ago."""
    since = last_used_at or created_at
    return now - since >= API_KEY_UNUSED_AFTER


def client_address(value: object) -> str | None:
    """Return ``value`` as a normalised IP address, or None when it isn't one (a Unix socket, a proxy's name)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return str(ipaddress.ip_address(value.strip()))
    except ValueError:
        return None


def clean_user_agent(value: str) -> str:
    """Return a User-Agent fit to store and show: control and format characters dropped, capped."""
    kept = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in value[: USER_AGENT_MAX * 4])
    return " ".join(kept.split())[:USER_AGENT_MAX]


# Order matters: Edge and Opera say "Chrome" too, Chrome says "Safari" too.
_BROWSERS = (
    ("Edge", re.compile(r"\bEdg(?:e|A|iOS)?/")),
    ("Opera", re.compile(r"\bOPR/|\bOpera\b")),
    ("Firefox", re.compile(r"\bFirefox/|\bFxiOS/")),
    ("Chrome", re.compile(r"\bChrome/|\bCriOS/|\bChromium/")),
    ("Safari", re.compile(r"\bSafari/")),
    ("curl", re.compile(r"^curl/")),
    ("HTTPie", re.compile(r"^HTTPie/")),
    ("Python", re.compile(r"^python-|^Python-urllib/")),
)
_SYSTEMS = (
    ("iPhone", re.compile(r"\biPhone\b")),
    ("iPad", re.compile(r"\biPad\b")),
    ("Android", re.compile(r"\bAndroid\b")),
    ("ChromeOS", re.compile(r"\bCrOS\b")),
    ("Windows", re.compile(r"\bWindows\b")),
    ("macOS", re.compile(r"\bMacintosh\b|\bMac OS X\b")),
    ("Linux", re.compile(r"\bLinux\b|\bX11\b")),
)


def user_agent_summary(user_agent: str) -> str:
    """Return "Browser on System" for a User-Agent, as far as it tells ("Unknown browser" when it doesn't)."""
    browser = next((name for name, pattern in _BROWSERS if pattern.search(user_agent)), None)
    system = next((name for name, pattern in _SYSTEMS if pattern.search(user_agent)), None)
    if browser and system:
        return f"{browser} on {system}"
    if browser:
        return browser
    if system:
        return f"A browser on {system}"
    return "Unknown browser"
