"""Talk to Uptimy's REST API (/api/v1/) with httpx: the only place the client makes requests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx

from uptimy.ctl import CTL_VERSION

HEALTHCHECKS = "/api/v1/healthchecks/"
PAGE_SIZE = 200
TIMEOUT = httpx.Timeout(30.0)
# A run now waits for every region, up to the check's timeout (at most 60 s) and the server's slack.
RUN_TIMEOUT = httpx.Timeout(120.0)


class ApiError(Exception):
    """Say what the API refused: the status and its answer (field -> messages for a 400)."""

    def __init__(self, status: int, body: object, *, method: str, path: str) -> None:
        self.status = status
        self.body = body
        super().__init__(f"{method} {path}: {status} {summary(body)}")

    def field_errors(self) -> dict[str, str]:
        """Return a 400's errors as API field path -> message ("config.minTools", "regions.0")."""
        if self.status != 400 or not isinstance(self.body, dict):
            return {}
        return dict(_flatten(self.body, ""))


class Unreachable(Exception):
    """Say that the API could not be reached (refused, timed out, not HTTP)."""


def summary(body: object) -> str:
    """Return an answer's gist in one line: its detail, or its field errors."""
    if isinstance(body, dict):
        if isinstance(body.get("detail"), str):
            return str(body["detail"])
        return "; ".join(f"{path}: {message}" for path, message in _flatten(body, ""))
    return str(body)[:200]


def _flatten(value: object, prefix: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _flatten(inner, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        yield prefix, " ".join(value)
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _flatten(inner, f"{prefix}.{i}")
    else:
        yield prefix, str(value)


class Api:
    """One API key on one Uptimy: the calls uptimyctl makes."""

    def __init__(self, base_url: str, key: str, *, transport: httpx.BaseTransport | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.base_url,
            headers={"Authorization": f"Bearer {key}", "User-Agent": f"uptimyctl/{CTL_VERSION}"},
            timeout=TIMEOUT,
            transport=transport,
            follow_redirects=False,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Api:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(
        self, method: str, path: str, *, json: object = None, timeout: httpx.Timeout | None = None
    ) -> Any:
        try:
            response = self._http.request(method, path, json=json, timeout=timeout or TIMEOUT)
        except httpx.HTTPError as exc:
            raise Unreachable(f"{self.base_url}: {exc.__class__.__name__}: {exc}") from None
        if response.status_code == 204:
            return None
        try:
            body = response.json()
        except ValueError:
            body = response.text
        if response.status_code >= 400:
            raise ApiError(response.status_code, body, method=method, path=path)
        return body

    def organization(self) -> dict[str, Any]:
        return dict(self.request("GET", "/api/v1/organization/"))

    def healthchecks(self) -> list[dict[str, Any]]:
        """Return every healthcheck of the key's organization, across pages."""
        found: list[dict[str, Any]] = []
        page = 1
        while True:
            body = self.request("GET", f"{HEALTHCHECKS}?page_size={PAGE_SIZE}&page={page}")
            found.extend(body["results"])
            if not body.get("next"):
                return found
            page += 1

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        return dict(self.request("POST", HEALTHCHECKS, json=body))

    def update(self, healthcheck_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return dict(self.request("PATCH", f"{HEALTHCHECKS}{healthcheck_id}/", json=body))

    def delete(self, healthcheck_id: str) -> None:
        self.request("DELETE", f"{HEALTHCHECKS}{healthcheck_id}/")

    def set_listing(self, healthcheck_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Replace the healthcheck's listing whole (PUT)."""
        return dict(self.request("PUT", f"{HEALTHCHECKS}{healthcheck_id}/listing/", json=body))

    def delete_listing(self, healthcheck_id: str) -> None:
        self.request("DELETE", f"{HEALTHCHECKS}{healthcheck_id}/listing/")

    def check_once(self, body: dict[str, Any]) -> dict[str, Any]:
        """Run a one-off check through the API (nothing is created or stored) and return its result."""
        return dict(self.request("POST", "/api/v1/checks/run/", json=body, timeout=RUN_TIMEOUT))

    def run(self, healthcheck_id: str) -> list[dict[str, Any]]:
        return list(self.request("POST", f"{HEALTHCHECKS}{healthcheck_id}/run/", timeout=RUN_TIMEOUT))
