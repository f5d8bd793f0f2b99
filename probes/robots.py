"""Read a robots.txt the way every Uptimy fetcher does: one parser, one agent token, one size cap.

Pure, no network: the rules of a robots.txt text (Protego, Scrapy's RFC 9309 parser: ``*`` and
``$`` in paths, longest match wins, fractional Crawl-delay, none of which Python's
``urllib.robotparser`` reads), what Uptimy may fetch under them, and the Crawl-delay it applies.
Who fetches the file, and what a missing or failing one means, is each caller's policy
(directory probing: ``directory/robots.py``; the free-tier quote's page: ``monitors/pagefetch.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import httpx
from protego import Protego

# Google reads the first 500 KiB of a robots.txt and ignores the rest; so does Uptimy.
MAX_ROBOTS_BYTES = 500 * 1024
# The longest Crawl-delay Uptimy honours between two probes of one host.
MAX_CRAWL_DELAY = 2.0
# The token a robots.txt names Uptimy by (its User-Agent's product name).
ROBOTS_AGENT = "Uptimy"


@dataclass(frozen=True, slots=True)
class RobotsRules:
    """One origin's robots.txt as Uptimy reads it; no text (no file, or no usable answer) allows everything.

    ``answered``: False when the host gave no usable answer (a 5xx, a timeout, a refused
    address): kept a shorter while, so a passing fault does not stand for a day.
    """

    text: str = ""
    answered: bool = True
    _parser: Protego = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_parser", Protego.parse(self.text))

    def allows(self, url: str) -> bool:
        """Return whether Uptimy may request ``url`` (its path and query) under these rules."""
        return bool(self._parser.can_fetch(url, ROBOTS_AGENT))

    @property
    def crawl_delay(self) -> float | None:
        """Return the Crawl-delay for Uptimy (its own group, else ``*``), as written; None when none is."""
        delay = self._parser.crawl_delay(ROBOTS_AGENT)
        return float(delay) if delay is not None else None

    @property
    def delay(self) -> float:
        """Return the wait Uptimy applies between two probes of the host: the Crawl-delay, at most 2 s."""
        return applied_delay(self.crawl_delay)


def applied_delay(crawl_delay: float | None) -> float:
    """Return the delay applied for a Crawl-delay: none for none or a nonsense value, capped at 2 s."""
    if crawl_delay is None or not math.isfinite(crawl_delay) or crawl_delay <= 0:
        return 0.0
    return min(crawl_delay, MAX_CRAWL_DELAY)


def robots_url(url: str) -> str:
    """Return the robots.txt address of ``url``'s origin."""
    return str(httpx.URL(url).copy_with(path="/robots.txt", query=None, fragment=None))
