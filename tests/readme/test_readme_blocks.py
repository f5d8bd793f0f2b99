"""The README commands test (run_readme.py, a CI stage of its own) reads the README and judges each step.

Running the commands takes minutes in a fresh clone, so .ci/run does that; these tests pin, in
the suite, that the README still marks a block for every command the harness holds to the
README's word, and that the harness tells a working command from a broken one.
"""

from __future__ import annotations

import pytest
from run_readme import (
    CHECKS,
    README,
    Ran,
    Step,
    check_api_create,
    check_mcpcheck,
    header_values,
    missing_checks,
    readme_steps,
)

MARKER = "<!-- checked by tests/readme/run_readme.py: CI runs this block -->"
ENV = {"PATH": "/usr/bin", "HOME": "/root"}


def test_the_readme_marks_a_block_for_make_run_and_for_every_checked_command():
    steps = readme_steps(README.read_text(encoding="utf-8"))

    assert missing_checks(steps) == []
    assert [step.title for step in steps if step.serves] == [
        "make run    # creates .venv, installs, migrates, serves http://127.0.0.1:8000 (PORT=… to change)"
    ]


def test_a_block_is_split_at_make_run_into_the_server_and_the_scripts_around_it():
    readme = f"intro\n{MARKER}\n```sh\necho before\nmake run   # serves\nmake test\n# a comment\n```\n"

    steps = readme_steps(readme)

    assert steps == [
        Step(4, "echo before\n"),
        Step(5, "make run   # serves", serves=True),
        Step(6, "make test\n# a comment\n"),
    ]


def test_unmarked_blocks_are_not_run():
    readme = f"```sh\nrm -rf /\n```\n{MARKER}\n```sh\nmake test\n```\n"

    assert readme_steps(readme) == [Step(6, "make test\n")]


def test_a_marker_without_a_block_under_it_is_an_error():
    with pytest.raises(ValueError, match=r"README\.md:1: the marker is not followed by a fenced block"):
        readme_steps(f"{MARKER}\nsome prose\n")


def test_a_readme_without_one_of_the_checked_commands_has_drifted():
    steps = readme_steps(f"{MARKER}\n```sh\nmake run\nmake test\n```\n")

    assert missing_checks(steps) == [
        f"no marked README block runs `{check.command}` any more" for check in CHECKS[1:]
    ]


def test_the_header_values_a_step_sends_are_found_with_and_without_their_scheme():
    step = Step(
        1,
        'mcpcheck URL --header "X-Key: k-123456" \\\n  -d \'{"headers": {"Authorization": "Bearer t-98765"}}\'',
    )

    assert header_values(step) == ["Bearer t-98765", "k-123456", "t-98765"]


MCPCHECK = Step(1, ".venv/bin/python manage.py mcpcheck https://mcp.example.com/mcp --json")


@pytest.mark.parametrize(
    ("ran", "problems"),
    [
        (Ran(1, '{"status": "down", "kind": "dns"}', "", 1.0), []),
        (Ran(0, '{"status": "up"}', "", 1.0), []),
        (Ran(0, '{"status": "down"}', "", 1.0), ["exited 0 with status 'down'"]),
        # Issue 9's finding: outside make, settings refused to start without keys.
        (
            Ran(1, "", "django.core.exceptions.ImproperlyConfigured: Set SECRET_KEY", 1.0),
            [
                "exited 1 without the check's outcome as JSON: 'django.core.exceptions.ImproperlyConfigured: Set SECRET_KEY'"
            ],
        ),
    ],
)
def test_mcpcheck_works_when_it_prints_an_outcome_and_exits_as_the_readme_says(ran, problems):
    assert check_mcpcheck(MCPCHECK, ran, ENV) == problems


CREATED = '{"id": "3b5d", "config": {"uri": "https://mcp.example.com/mcp", "headers": {"Authorization": "********"}}}'


@pytest.mark.parametrize(
    ("ran", "works"),
    [
        (Ran(0, CREATED, "", 1.0), True),
        (Ran(0, CREATED.replace("********", "Bearer your-key"), "", 1.0), False),
        (Ran(0, '{"detail": "Invalid API key."}', "", 1.0), False),
        (Ran(0, "", "", 1.0), False),
        (Ran(1, "", "Traceback", 1.0), False),
    ],
)
def test_the_api_call_works_when_it_creates_a_healthcheck_with_masked_headers(ran, works):
    assert (check_api_create(Step(1, "curl"), ran, ENV) == []) is works
