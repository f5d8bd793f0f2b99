"""Parse the renderers' SVGs back, and the hostile names every renderer must survive."""

from __future__ import annotations

import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"

HOSTILE_NAMES = [
    '<script>alert("x")</script>',
    "\"'><svg onload=alert(1)>",
    "a\x00b\x07c\x1fd",
    "&amp; &lt; ]]> <!-- -->",
    "lone \ud800 surrogate",
    "x" * 10_000,
    "名前 😀 \ufffe\uffff",
]


def parse(svg: str) -> ET.Element:
    """Return the document's root element; raise if it is not well-formed XML."""
    return ET.fromstring(svg)


def texts(root: ET.Element) -> list[str]:
    """Return every text node and attribute value of the document, as parsed."""
    found = []
    for element in root.iter():
        found.extend(element.attrib.values())
        if element.text:
            found.append(element.text)
    return found


def assert_inert(root: ET.Element) -> None:
    """Assert that the document holds only SVG drawing elements: no script, no event handler, no foreign element."""
    for element in root.iter():
        assert element.tag.startswith(SVG), element.tag
        assert element.tag != f"{SVG}script"
        assert not any(name.lower().startswith("on") for name in element.attrib), element.attrib
