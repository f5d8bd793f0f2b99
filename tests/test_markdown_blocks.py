"""The fence parser the README test and the docs examples test share (tests/markdown_blocks.py)."""

from __future__ import annotations

import pytest

from tests.markdown_blocks import Block, fence_at, marked_blocks, next_fence

PAGE = """intro
<!-- mark -->
```sh
echo one
echo two
```

```json
{"a": 1}
```
<!-- mark -->
```
bare
```
"""


@pytest.mark.parametrize(
    ("text", "start", "expected"),
    [
        ("```sh\necho hi\n```", 0, Block("sh", ("echo hi",), 0, 2)),
        ("```  json  \n{}\n```", 0, Block("json", ("{}",), 0, 2)),
        ("```\n```", 0, Block("", (), 0, 1)),
        (
            "text\n```console\n$ make run\n\nout\n```\nafter",
            1,
            Block("console", ("$ make run", "", "out"), 1, 5),
        ),
        # The next fence closes the block: nested fences are not read.
        ("```md\n````\n```", 0, Block("md", (), 0, 1)),
    ],
)
def test_a_fence_is_read_as_its_info_string_lines_and_bounds(text: str, start: int, expected: Block) -> None:
    assert fence_at(text.splitlines(), start, "page.md") == expected


@pytest.mark.parametrize(
    ("text", "start", "error"),
    [
        ("<!-- mark -->\nno fence", 1, r"page\.md:1: the marker is not followed by a fenced block"),
        ("<!-- mark -->", 1, r"page\.md:1: the marker is not followed by a fenced block"),
        ("<!-- mark -->\n```sh\nopen", 1, r"page\.md:2: the marked block is never closed"),
    ],
)
def test_a_missing_or_unclosed_fence_is_an_error_naming_the_line(text: str, start: int, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        fence_at(text.splitlines(), start, "page.md")


def test_the_marked_blocks_of_a_page_and_the_block_after_one() -> None:
    lines = PAGE.splitlines()

    found = marked_blocks(lines, lambda line: line == "<!-- mark -->", "page.md")

    assert [(index, block.info, block.body) for index, block in found] == [
        (1, "sh", "echo one\necho two"),
        (10, "", "bare"),
    ]
    assert next_fence(lines, found[0][1].end, "page.md").body == '{"a": 1}'
