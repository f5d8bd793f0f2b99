"""Rate-limit API calls per key (not per IP: many customers share NAT gateways and CI runners)."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache import cache as default_cache
from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.filebased import FileBasedCache
from rest_framework.throttling import SimpleRateThrottle

from monitors.models import ApiKey

if TYPE_CHECKING:
    # For annotations only: DRF imports this class while rest_framework.views is still loading.
    from rest_framework.request import Request
    from rest_framework.views import APIView


class ApiKeyRateThrottle(SimpleRateThrottle):
    """Allow ``UPTIMY_API_RATE`` calls per key, counted atomically in the shared cache.

    DRF's own throttle reads a key's call history, appends and writes it back: calls made at
    once read the same history and all pass (700 parallel calls went through a 600/min limit).
    Here each window is a counter raised by the cache's atomic add and incr (Redis), or under
    a file lock (the var dir's file cache, one machine's processes); a sliding-window estimate,
    the previous window weighted by how much of it is still within the last period, keeps a
    burst at a window's edge from passing twice the rate. Refused calls don't count.
    """

    scope = "api_key"

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        if not isinstance(request.auth, ApiKey):
            return None
        # The public id, not the row id: a file cache in a var dir may outlive (or be shared by
        # a test run with) the database whose row ids would name another key there.
        return self.cache_format % {"scope": self.scope, "ident": request.auth.public_id.hex}

    def allow_request(self, request: Request, view: APIView) -> bool:
        limit, duration = self.parse_rate(self.rate)
        if limit is None or duration is None:
            return True
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        # DRF's cache is a proxy of the default cache; the lock needs to know the backend.
        cache = caches[DEFAULT_CACHE_ALIAS] if self.cache is default_cache else self.cache
        window, into = divmod(self.timer(), duration)
        current, previous = f"{key}:{int(window)}", f"{key}:{int(window) - 1}"
        with _serialized(cache):
            if cache.add(current, 0, timeout=2 * duration):
                # A new window: the one before the previous is of no more use.
                cache.delete(f"{key}:{int(window) - 2}")
            try:
                count = cache.incr(current)
            except ValueError:  # expired between add and incr
                cache.set(current, 1, timeout=2 * duration)
                count = 1
            before = cache.get(previous, 0)
            estimate = count + before * (1 - into / duration)
            if estimate > limit:
                cache.decr(current)
                self.wait_seconds = duration - into
                return False
        return True

    def wait(self) -> float | None:
        return getattr(self, "wait_seconds", None)


@contextlib.contextmanager
def _serialized(cache: BaseCache) -> Iterator[None]:
    """Hold a lock across processes around a read-modify-write of a file cache; nothing else needs one."""
    if not isinstance(cache, FileBasedCache):
        yield
        return
    # The stub leaves out the cache's directory, which FileBasedCache keeps as _dir.
    directory: str = cache._dir  # type: ignore[attr-defined]
    os.makedirs(directory, mode=0o700, exist_ok=True)
    with open(os.path.join(directory, "throttle.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class AnonymousRateThrottle(ApiKeyRateThrottle):
    """Allow ``UPTIMY_ANON_API_RATE`` calls per client address to the public endpoints (no key), counted as above."""

    scope = "anonymous"
    # Its own class attribute: a test that swaps the key throttle's rates leaves this one's alone.
    THROTTLE_RATES = dict(SimpleRateThrottle.THROTTLE_RATES)

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        # DRF's get_ident: REMOTE_ADDR, or X-Forwarded-For under NUM_PROXIES.
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
