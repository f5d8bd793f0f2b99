"""The rules of two-factor sign-in, pure: TOTP codes (RFC 6238, through pyotp), drift, recovery codes.

Plain values in, plain values out: the services (monitors.services.two_factor) store what these
return and apply the one rule that needs the database, that a time step is used once.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

import pyotp

DIGITS = 6
STEP_SECONDS = 30
# One step either way: an authenticator whose clock is up to 30 s off, or a code typed as its
# step ends, still signs in; more would widen what a guessed or seen code is good for.
DRIFT_STEPS = 1
RECOVERY_CODE_COUNT = 10
# No 0/o, 1/l/i: a code is read off paper. 10 characters of 31: about 50 bits, too many to guess
# within the sign-in rate limit, so a plain SHA-256 is storage enough (as for API keys).
RECOVERY_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"
RECOVERY_LENGTH = 10
_SEPARATORS = re.compile(r"[\s-]+")


@dataclass(frozen=True, slots=True)
class Code:
    """Say what a typed second factor looks like: a TOTP code (``digits``) or a recovery code."""

    text: str

    @property
    def is_totp(self) -> bool:
        return len(self.text) == DIGITS and self.text.isdigit()


def typed(text: str) -> Code:
    """Return what someone typed as a code, without the spaces and dashes they may add, lowercased."""
    return Code(_SEPARATORS.sub("", text or "").lower())


def new_secret() -> str:
    """Return a new base32 TOTP secret (160 bits, RFC 4226's recommended length)."""
    return pyotp.random_base32(length=32)


def provisioning_uri(secret: str, *, account: str, issuer: str) -> str:
    """Return the otpauth:// URI an authenticator app reads from the enrolment QR code."""
    return pyotp.TOTP(secret, digits=DIGITS, interval=STEP_SECONDS).provisioning_uri(
        name=account, issuer_name=issuer
    )


def grouped(secret: str) -> str:
    """Return the secret in groups of four, as a person types it into an authenticator by hand."""
    return " ".join(secret[i : i + 4] for i in range(0, len(secret), 4))


def step_at(timestamp: float) -> int:
    """Return the RFC 6238 time step (T) of a Unix ``timestamp``."""
    return int(timestamp // STEP_SECONDS)


def matching_step(secret: str, code: str, *, timestamp: float, after: int | None = None) -> int | None:
    """Return the time step whose code ``code`` is, within the drift around ``timestamp``; None when none is.

    With ``after`` (the last step used), only a later step counts: a code is good once.
    """
    if not (len(code) == DIGITS and code.isdigit()):
        return None
    totp = pyotp.TOTP(secret, digits=DIGITS, interval=STEP_SECONDS)
    now = step_at(timestamp)
    for step in range(now - DRIFT_STEPS, now + DRIFT_STEPS + 1):
        if after is not None and step <= after:
            continue
        if hmac.compare_digest(totp.generate_otp(step), code):
            return step
    return None


def new_recovery_codes() -> list[str]:
    """Return a fresh set of recovery codes, each ``xxxxx-xxxxx``, to be shown once."""
    return [_recovery_code() for _ in range(RECOVERY_CODE_COUNT)]


def _recovery_code() -> str:
    text = "".join(secrets.choice(RECOVERY_ALPHABET) for _ in range(RECOVERY_LENGTH))
    return f"{text[:5]}-{text[5:]}"


def recovery_hash(code: str) -> str:
    """Return the stored form of a recovery code: SHA-256 of the code as typed, normalised."""
    return hashlib.sha256(typed(code).text.encode()).hexdigest()
