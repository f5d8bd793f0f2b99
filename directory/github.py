"""Ask GitHub which licence a listed repository has (``GET /repos/{owner}/{repo}``), for check 22.

Pure: no Django, no settings. :func:`repository_of` reads a github.com repository URL;
:class:`GitHubClient` asks the REST API and answers a :class:`LicenceAnswer`: done (with the SPDX
id GitHub reported, None for no licence), failed, or rate-limited (the caller stops asking until
the limit resets).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

import httpx

from probes.jsonrpc import JsonTooDeep, read_json

# GitHub's own rules: an owner is letters, digits and single hyphens; a repository name letters,
# digits, '.', '_' and '-'.
OWNER = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$")
REPO = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
MAX_BODY = 1024 * 1024


class AnswerStatus(StrEnum):
    DONE = "done"
    FAILED = "failed"
    RATE_LIMITED = "rate_limited"


@dataclass(frozen=True, slots=True)
class LicenceAnswer:
    status: AnswerStatus
    spdx_id: str | None = None
    reason: str = ""


def repository_of(url: str | None) -> tuple[str, str] | None:
    """Return (owner, repo) of a github.com repository URL, else None (``.git`` and deeper paths ignored)."""
    if not url:
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if (parts.hostname or "").removeprefix("www.") != "github.com":
        return None
    segments = [segment for segment in parts.path.split("/") if segment]
    if len(segments) < 2:
        return None
    owner, repo = segments[0], segments[1].removesuffix(".git")
    if not OWNER.match(owner) or not REPO.match(repo) or repo in (".", ".."):
        return None
    return owner, repo


def _rate_limited(response: httpx.Response) -> bool:
    # GitHub answers a spent limit with 403 (or 429) and X-RateLimit-Remaining: 0; a secondary
    # limit with 403 or 429 and Retry-After.
    if response.status_code == 429:
        return True
    return response.status_code == 403 and (
        response.headers.get("X-RateLimit-Remaining") == "0" or "Retry-After" in response.headers
    )


def _capped(response: httpx.Response) -> bytes | None:
    """Return the answer's body, or None once it passes MAX_BODY (read no further)."""
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


@dataclass
class GitHubClient:
    """Ask GitHub's REST API about repositories, one request at a time, as a named client."""

    base_url: str
    user_agent: str
    token: str | None = None
    timeout: float = 10.0
    transport: httpx.BaseTransport | None = None

    def licence(self, owner: str, repo: str) -> LicenceAnswer:
        """Return the licence GitHub reports for ``owner/repo``."""
        headers = {
            "User-Agent": self.user_agent,
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
        }
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            with (
                httpx.Client(
                    base_url=self.base_url.rstrip("/"),
                    headers=headers,
                    timeout=self.timeout,
                    transport=self.transport,
                    follow_redirects=False,
                ) as client,
                client.stream("GET", f"/repos/{owner}/{repo}") as response,
            ):
                if _rate_limited(response):
                    return LicenceAnswer(
                        AnswerStatus.RATE_LIMITED, reason=f"GitHub answered HTTP {response.status_code}"
                    )
                if response.status_code != 200:
                    return LicenceAnswer(
                        AnswerStatus.FAILED, reason=f"GitHub answered HTTP {response.status_code}"
                    )
                content = _capped(response)
        except httpx.HTTPError as error:
            return LicenceAnswer(
                AnswerStatus.FAILED, reason=f"GitHub could not be reached: {type(error).__name__}"
            )
        if content is None:
            return LicenceAnswer(AnswerStatus.FAILED, reason="GitHub's answer is too large")
        try:
            body: Any = read_json(content)
        except JsonTooDeep:
            return LicenceAnswer(AnswerStatus.FAILED, reason="GitHub's answer nests too deep")
        except ValueError:
            return LicenceAnswer(AnswerStatus.FAILED, reason="GitHub's answer is not JSON")
        if not isinstance(body, dict):
            return LicenceAnswer(AnswerStatus.FAILED, reason="GitHub's answer is not an object")
        licence = body.get("license")
        if licence is None:
            return LicenceAnswer(AnswerStatus.DONE, spdx_id=None)
        if not isinstance(licence, dict):
            return LicenceAnswer(AnswerStatus.FAILED, reason="GitHub's licence is not an object")
        spdx_id = licence.get("spdx_id")
        if spdx_id is None:
            return LicenceAnswer(AnswerStatus.DONE, spdx_id=None)
        if not isinstance(spdx_id, str) or not spdx_id or len(spdx_id) > 100:
            return LicenceAnswer(AnswerStatus.FAILED, reason="GitHub's licence has no readable spdx_id")
        return LicenceAnswer(AnswerStatus.DONE, spdx_id=spdx_id)
