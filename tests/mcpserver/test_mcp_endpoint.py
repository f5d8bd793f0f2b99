"""Where /mcp says it is (the 401's resource metadata) and which browser origins it takes."""

from __future__ import annotations

import pytest

from mcpserver.endpoint import _allowed_origin, resource_metadata_url
from signin.discovery import public_base_for


@pytest.mark.parametrize(
    ("public_url", "scheme", "host", "base"),
    [
        # Reached at its public host (behind a TLS proxy the request itself says http): the setting.
        ("https://uptimy.example.com", "http", "uptimy.example.com", "https://uptimy.example.com"),
        ("https://uptimy.example.com/", "http", "UPTIMY.example.com:443", "https://uptimy.example.com"),
        # Reached at another allowed host (loopback, a second name): the request's own.
        ("https://uptimy.example.com", "http", "127.0.0.1:8123", "http://127.0.0.1:8123"),
        ("http://127.0.0.1:8000", "http", "localhost:8000", "http://localhost:8000"),
    ],
)
def test_the_public_base_is_uptimy_public_url_on_its_host_else_the_requests(
    settings, public_url, scheme, host, base
):
    settings.UPTIMY_PUBLIC_URL = public_url

    assert public_base_for(scheme, host) == base


def test_the_resource_metadata_is_at_the_path_aware_well_known_address():
    assert (
        resource_metadata_url("https://u.example")
        == "https://u.example/.well-known/oauth-protected-resource/mcp"
    )


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://localhost:6274", True),
        ("http://127.0.0.1", True),
        ("https://uptimy.example.com", True),
        ("http://evil.example", False),
        ("null", False),
        ("http://[::1", False),
    ],
)
def test_a_browser_origin_is_taken_only_from_an_allowed_host(settings, origin, allowed):
    settings.ALLOWED_HOSTS = ["localhost", "127.0.0.1", "uptimy.example.com"]

    assert _allowed_origin(origin) is allowed
