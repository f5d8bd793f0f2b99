"""Match a registry server name in a path: ``namespace/name``, dots allowed, exactly one slash (as the registry requires)."""

from __future__ import annotations

from django.urls import register_converter


class ServerNameConverter:
    """Match ``namespace/name``: the page's and the API's routes both read a server name with it."""

    # Loose on purpose: any name with one slash reaches the view, which answers an unknown one with a sentence.
    regex = r"[^/]+/[^/]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(ServerNameConverter, "server")
