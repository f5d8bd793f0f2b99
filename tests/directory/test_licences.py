"""GitHub's licence lookup of listed repositories (check 22), against a loopback GitHub."""

from __future__ import annotations

import copy
from datetime import timedelta

import pytest

from directory.github import AnswerStatus, GitHubClient, LicenceAnswer, repository_of
from directory.models import Listing, RepositoryLicence
from directory.selectors import licence_lookup, listing_scorecard_evidence
from directory.services import licences_look_up, registry_sync
from monitors.scorecard import LookupStatus, Verdict, scorecard
from tests.conftest import NOW
from tests.directory.support import Answer, page


def repo(spdx_id: str | None, *, licence: bool = True) -> Answer:
    body = copy.deepcopy(page("github-repo"))
    if not licence:
        body["license"] = None
    else:
        body["license"]["spdx_id"] = spdx_id
    return Answer.json(body)


@pytest.mark.parametrize(
    ("url", "repository"),
    [
        ("https://github.com/example/weather-mcp", ("example", "weather-mcp")),
        ("https://www.github.com/Octocat/notes-mcp.git", ("Octocat", "notes-mcp")),
        (
            "https://github.com/modelcontextprotocol/servers/tree/main/src/filesystem",
            ("modelcontextprotocol", "servers"),
        ),
        ("https://github.com/example", None),
        ("https://gitlab.com/example/weather-mcp", None),
        ("https://github.com/-bad/x", None),
        ("https://github.com/example/..", None),
        ("", None),
        (None, None),
    ],
)
def test_a_github_repository_is_read_from_its_url(url, repository):
    assert repository_of(url) == repository


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (repo("MIT"), LicenceAnswer(AnswerStatus.DONE, "MIT")),
        (repo("NOASSERTION"), LicenceAnswer(AnswerStatus.DONE, "NOASSERTION")),
        (repo(None), LicenceAnswer(AnswerStatus.DONE, None)),
        (repo(None, licence=False), LicenceAnswer(AnswerStatus.DONE, None)),
        (
            Answer(404, b'{"message": "Not Found"}'),
            LicenceAnswer(AnswerStatus.FAILED, None, "GitHub answered HTTP 404"),
        ),
        (
            Answer(403, b"{}", (("X-RateLimit-Remaining", "0"),)),
            LicenceAnswer(AnswerStatus.RATE_LIMITED, None, "GitHub answered HTTP 403"),
        ),
        (
            Answer(403, b"{}", (("Retry-After", "60"),)),
            LicenceAnswer(AnswerStatus.RATE_LIMITED, None, "GitHub answered HTTP 403"),
        ),
        (Answer(429, b"{}"), LicenceAnswer(AnswerStatus.RATE_LIMITED, None, "GitHub answered HTTP 429")),
        (
            Answer(403, b'{"message": "Forbidden"}'),
            LicenceAnswer(AnswerStatus.FAILED, None, "GitHub answered HTTP 403"),
        ),
        (Answer(200, b"<html>"), LicenceAnswer(AnswerStatus.FAILED, None, "GitHub's answer is not JSON")),
        (
            Answer(200, b"[" * 200_000 + b"]" * 200_000),
            LicenceAnswer(AnswerStatus.FAILED, None, "GitHub's answer nests too deep"),
        ),
        (
            Answer(200, b'{"license": null, "pad": "' + b"x" * (2 * 1024 * 1024) + b'"}'),
            LicenceAnswer(AnswerStatus.FAILED, None, "GitHub's answer is too large"),
        ),
        (Answer.json([]), LicenceAnswer(AnswerStatus.FAILED, None, "GitHub's answer is not an object")),
        (
            Answer.json({"license": "MIT"}),
            LicenceAnswer(AnswerStatus.FAILED, None, "GitHub's licence is not an object"),
        ),
        (
            Answer.json({"license": {"spdx_id": 3}}),
            LicenceAnswer(AnswerStatus.FAILED, None, "GitHub's licence has no readable spdx_id"),
        ),
    ],
)
def test_githubs_answer_is_read(github, github_client, answer, expected):
    github.serve(answer)

    assert github_client.licence("example", "weather-mcp") == expected
    assert github.requests[0].path == "/repos/example/weather-mcp"


def test_the_lookup_names_itself_and_sends_the_token(github):
    github.serve(repo("MIT"))
    client = GitHubClient(base_url=github.url, user_agent="Uptimy-test", token="ghp_test")

    client.licence("example", "weather-mcp")

    assert (github.requests[0].user_agent, github.requests[0].authorization) == (
        "Uptimy-test",
        "Bearer ghp_test",
    )


def test_an_unreachable_github_is_a_failed_lookup():
    client = GitHubClient(base_url="http://127.0.0.1:9", user_agent="t", timeout=2.0)

    assert client.licence("example", "x").status is AnswerStatus.FAILED


@pytest.fixture
def imported(db, registry, client):
    registry.serve(page("full-1"), page("full-2"))
    registry_sync(client=client, full=True, now=NOW)


LISTED = {
    "/repos/example/weather-mcp": repo("MIT"),
    "/repos/octocat/notes-mcp": repo("BUSL-1.1"),
    "/repos/modelcontextprotocol/servers": repo(None, licence=False),
    "/repos/someone/old-tool": repo("NOASSERTION"),
}


def test_every_listed_github_repository_is_looked_up_once(imported, github, github_client):
    github.routes.update(LISTED)

    report = licences_look_up(client=github_client, now=NOW)

    # The deleted listing's and the repository-less ones' are not asked; owners are asked lowercase.
    assert sorted(request.path for request in github.requests) == sorted(LISTED)
    assert (report.looked_up, report.failed, report.rate_limited) == (4, 0, False)


# Check 22 by hand: MIT is OSI-approved; BUSL-1.1 is on the SPDX list but not OSI-approved; no
# licence and NOASSERTION name none; a listing without a GitHub repository is never looked up.
@pytest.mark.parametrize(
    ("name", "verdict"),
    [
        ("com.example/weather", Verdict.PASSED),
        ("io.github.octocat/notes", Verdict.FAILED),
        ("io.modelcontextprotocol/filesystem", Verdict.FAILED),
        ("io.github.someone/old-tool", Verdict.FAILED),
        ("com.acme/tenant-mcp", Verdict.NOT_MEASURED),
    ],
)
def test_check_22_reads_the_lookup(imported, github, github_client, name, verdict):
    github.routes.update(LISTED)
    licences_look_up(client=github_client, now=NOW)
    listing = Listing.objects.get(name=name)

    (result,) = [r for r in scorecard(listing_scorecard_evidence(listing), now=NOW).results if r.number == 22]

    assert result.verdict is verdict


def test_the_lookup_records_the_spdx_lists_flag_and_version(imported, github, github_client):
    github.routes.update(LISTED)

    licences_look_up(client=github_client, now=NOW)

    lookup = licence_lookup(Listing.objects.get(name="com.example/weather"))
    assert (lookup.status, lookup.spdx_id, lookup.osi_approved, lookup.looked_up_at) == (
        LookupStatus.DONE,
        "MIT",
        True,
        NOW,
    )
    assert lookup.list_version


def test_a_rate_limit_ends_the_round_and_leaves_check_22_unmeasured(imported, github, github_client):
    github.serve(Answer(403, b"{}", (("X-RateLimit-Remaining", "0"),)))

    report = licences_look_up(client=github_client, now=NOW)

    assert report.rate_limited
    assert len(github.requests) == 1
    assert RepositoryLicence.objects.get().status == "rate_limited"
    weather = Listing.objects.get(name="com.example/weather")
    (result,) = [r for r in scorecard(listing_scorecard_evidence(weather), now=NOW).results if r.number == 22]
    assert (result.verdict, result.reason) == (Verdict.NOT_MEASURED, "The licence lookup was rate-limited")


def test_a_fresh_lookup_is_not_asked_again_within_a_week(imported, github, github_client):
    github.routes.update(LISTED)
    licences_look_up(client=github_client, now=NOW)
    asked = len(github.requests)

    licences_look_up(client=github_client, now=NOW + timedelta(days=7))
    assert len(github.requests) == asked

    licences_look_up(client=github_client, now=NOW + timedelta(days=7, seconds=1))
    assert len(github.requests) == asked + 4


def test_a_failed_relookup_keeps_the_earlier_answer(imported, github, github_client):
    github.routes.update(LISTED)
    licences_look_up(client=github_client, now=NOW)
    github.routes.clear()
    github.serve(*[Answer(500, b"")] * 4)

    report = licences_look_up(client=github_client, now=NOW + timedelta(days=8))

    assert report.failed == 4
    kept = RepositoryLicence.objects.get(owner="example", repo="weather-mcp")
    assert (kept.status, kept.spdx_id, kept.looked_up_at) == ("done", "MIT", NOW)


def test_the_limit_bounds_a_round(imported, github, github_client):
    github.routes.update(LISTED)

    licences_look_up(client=github_client, now=NOW, limit=2)

    assert len(github.requests) == 2
