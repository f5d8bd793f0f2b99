"""The pricing page fetcher (monitors/pagefetch.py) against a loopback HTTP server: polite, guarded, bounded."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from monitors.pagefetch import USER_AGENT, FetchFailed, Page, fetch_page

PRICING = b"<html><body><p>Free tier: 1,000 calls a month</p></body></html>"


@dataclass
class Site:
    """What the loopback site answers, by path: (status, headers, body); and what it was asked."""

    routes: dict[str, tuple[int, dict[str, str], bytes]] = field(default_factory=dict)
    asked: list[tuple[str, str]] = field(default_factory=list)
    hang: threading.Event | None = None
    port: int = 0

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            site.asked.append((self.path, self.headers.get("User-Agent", "")))
            if site.hang is not None and self.path != "/robots.txt":
                site.hang.wait(10)
                return
            status, headers, body = site.routes.get(self.path, (404, {}, b"not here"))
            self.send_response(status)
            for name, value in {"content-length": str(len(body)), **headers}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    return Handler


@pytest.fixture
def site() -> Iterator[Site]:
    served = Site()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(served))
    served.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        if served.hang is not None:
            served.hang.set()
        server.shutdown()
        server.server_close()


@pytest.fixture
def fetch() -> Callable[..., Page | FetchFailed]:
    def fetch(url: str, **options) -> Page | FetchFailed:
        return fetch_page(url, **{"timeout": 5.0, "allow_private": True, **options})

    return fetch


def html(body: bytes = PRICING) -> tuple[int, dict[str, str], bytes]:
    return 200, {"content-type": "text/html; charset=utf-8"}, body


def test_the_page_is_fetched_after_robots_txt_naming_uptimy(site, fetch):
    site.routes["/pricing"] = html()

    fetched = fetch(site.url("/pricing"))

    assert fetched == Page(site.url("/pricing"), 200, "text/html; charset=utf-8", PRICING)
    assert site.asked == [("/robots.txt", USER_AGENT), ("/pricing", USER_AGENT)]


def test_robots_txt_disallowing_uptimy_stops_the_fetch(site, fetch):
    site.routes["/robots.txt"] = (
        200,
        {"content-type": "text/plain"},
        b"User-agent: Uptimy\nDisallow: /pricing\n",
    )
    site.routes["/pricing"] = html()

    fetched = fetch(site.url("/pricing"))

    assert fetched == FetchFailed("127.0.0.1's robots.txt disallows Uptimy from fetching /pricing")
    assert [path for path, _ in site.asked] == ["/robots.txt"]


def test_robots_txt_disallowing_others_lets_uptimy_fetch(site, fetch):
    site.routes["/robots.txt"] = (
        200,
        {},
        b"User-agent: OtherBot\nDisallow: /\n\nUser-agent: *\nAllow: /pricing\nDisallow: /\n",
    )
    site.routes["/pricing"] = html()

    assert isinstance(fetch(site.url("/pricing")), Page)


def test_a_robots_txt_that_errors_means_disallow(site, fetch):
    site.routes["/robots.txt"] = (503, {}, b"down")
    site.routes["/pricing"] = html()

    assert fetch(site.url("/pricing")) == FetchFailed(
        "127.0.0.1's robots.txt disallows Uptimy from fetching /pricing"
    )


def test_a_redirect_on_the_same_host_is_followed(site, fetch):
    site.routes["/pricing"] = (301, {"location": "/plans"}, b"")
    site.routes["/plans"] = html()

    fetched = fetch(site.url("/pricing"))

    assert isinstance(fetched, Page)
    assert fetched.url == site.url("/plans")


def test_a_redirect_to_another_host_is_refused(site, fetch):
    site.routes["/pricing"] = (302, {"location": site.url("/plans", host="localhost")}, b"")

    assert fetch(site.url("/pricing")) == FetchFailed(
        "127.0.0.1 redirected to localhost, another host; Uptimy follows redirects on the same host only"
    )


def test_redirects_past_the_limit_are_refused(site, fetch):
    for hop in range(5):
        site.routes[f"/hop{hop}"] = (302, {"location": f"/hop{hop + 1}"}, b"")

    assert fetch(site.url("/hop0")) == FetchFailed("127.0.0.1 redirected more than 3 times")


def test_a_private_address_is_refused_by_the_address_guard(site, fetch):
    site.routes["/pricing"] = html()

    fetched = fetch(site.url("/pricing"), allow_private=False)

    assert isinstance(fetched, FetchFailed)
    assert fetched.reason == "127.0.0.1 is a loopback address; Uptimy only checks public addresses"
    assert site.asked == []


def test_a_page_that_never_answers_times_out(site, fetch):
    site.hang = threading.Event()

    fetched = fetch(site.url("/pricing"), timeout=0.5)

    assert fetched == FetchFailed("127.0.0.1 did not answer within 0.5 s")


def test_a_page_over_the_cap_is_refused(site, fetch):
    site.routes["/pricing"] = html(b"x" * 2048)

    fetched = fetch(site.url("/pricing"), max_bytes=1024)

    assert fetched == FetchFailed("The answer is larger than the 1024 bytes cap")


def test_an_error_answer_says_its_status(site, fetch):
    assert fetch(site.url("/missing")) == FetchFailed("127.0.0.1 answered HTTP 404")


@pytest.mark.parametrize("url", ["ftp://example.com/pricing", "not a url", "http:///nohost"])
def test_a_url_that_is_not_http_is_refused(fetch, url):
    assert isinstance(fetch(url), FetchFailed)


def test_a_robots_txt_redirected_on_the_same_site_is_read_there(site, fetch):
    site.routes["/robots.txt"] = (301, {"location": "/rules.txt"}, b"")
    site.routes["/rules.txt"] = (200, {}, b"User-agent: *\nDisallow: /pricing\n")
    site.routes["/pricing"] = html()

    assert fetch(site.url("/pricing")) == FetchFailed(
        "127.0.0.1's robots.txt disallows Uptimy from fetching /pricing"
    )
