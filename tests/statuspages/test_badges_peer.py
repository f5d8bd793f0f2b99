"""The badges against shields.io's own renderer: badge-maker (npm, a test peer) draws the same label and message.

Geometry and text must agree exactly: the SVG's width, each half's rect, each text's centre and
length, the accessible name; and each character's width must be the one badge-maker measures. badge-maker 6 draws its text shadow with a blur filter our flat
badge leaves out; the shapes and sizes are what a README reader sees.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from monitors.badge_widths import text_width
from monitors.badges import Badge, Color, badge_svg
from tests.conftest import PEERS_SWITCH, unavailable
from tests.peers.peer_support import NODE22, PEERS_DIR
from tests.statuspages.svg_support import SVG, parse

BADGE_MAKER = PEERS_DIR / "node_modules" / "badge-maker" / "package.json"

# Every printable ASCII character, the badges' own words, and the ellipsis a long name is cut with.
CASES = [
    ("status", "operational", Color.BRIGHTGREEN),
    ("status", "degraded performance", Color.YELLOW),
    ("status", "partial outage", Color.ORANGE),
    ("status", "under maintenance", Color.BLUE),
    ("uptime 30d", "99.99%", Color.GREEN),
    ("uptime 7d", "no data", Color.LIGHTGREY),
    ("response time", "1234 ms", Color.YELLOWGREEN),
    ("".join(chr(c) for c in range(33, 80)), "".join(chr(c) for c in range(80, 127)), Color.RED),
    ("Payments API (EU)…", "x", Color.BRIGHTGREEN),
]

RENDER = """
import { makeBadge } from 'badge-maker'
let input = ''
for await (const chunk of process.stdin) input += chunk
const out = JSON.parse(input).map(([label, message, color]) => makeBadge({ label, message, color, style: 'flat' }))
process.stdout.write(JSON.stringify(out))
"""

# badge-maker measures with anafanafo, its own dependency: the width of each character alone.
MEASURE = """
import { createRequire } from 'module'
const anafanafo = createRequire(process.cwd() + '/')('anafanafo')
let input = ''
for await (const chunk of process.stdin) input += chunk
process.stdout.write(JSON.stringify(JSON.parse(input).map((c) => anafanafo(c, { font: '11px Verdana' }))))
"""
CHARACTERS = [chr(c) for c in range(32, 127)] + ["…"]


def node(script: str, payload: object) -> list[Any]:
    if not (NODE22.exists() and BADGE_MAKER.exists()):
        unavailable("badge-maker is not installed: run tests/peers/install (needs npm)", switch=PEERS_SWITCH)
    result = subprocess.run(
        [str(NODE22), "--input-type=module", "-e", script],
        input=json.dumps(payload),
        cwd=PEERS_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return list(json.loads(result.stdout))


def badge_maker(cases: list[tuple[str, str, Color]]) -> list[str]:
    return node(RENDER, [[label, message, color.value] for label, message, color in cases])


def geometry(svg: str) -> dict[str, object]:
    root = parse(svg)
    background = root.find(f"{SVG}g[@clip-path]")
    rects = [(r.get("x"), r.get("width"), r.get("fill")) for r in background.iter(f"{SVG}rect")]
    # The text itself (y=140), not its shadow (y=150), wherever each renderer nests it.
    shown = [
        (t.text, float(t.get("x")), t.get("textLength"))
        for t in root.iter(f"{SVG}text")
        if t.get("y") == "140"
    ]
    return {
        "width": root.get("width"),
        "height": root.get("height"),
        "aria-label": root.get("aria-label"),
        "title": root.find(f"{SVG}title").text,
        "rects": rects,
        "texts": shown,
    }


@pytest.fixture(scope="module")
def theirs() -> list[str]:
    return badge_maker(CASES)


@pytest.mark.parametrize("index", range(len(CASES)))
def test_our_badge_matches_badge_maker(theirs, index):
    label, message, color = CASES[index]

    assert geometry(badge_svg(Badge(label, message, color))) == geometry(theirs[index])


def test_each_character_is_as_wide_as_badge_maker_measures_it():
    theirs = node(MEASURE, CHARACTERS)

    assert {c: text_width(c) for c in CHARACTERS} == dict(zip(CHARACTERS, theirs, strict=True))
