"""The REST API under /api/v1/: routes, views, serializers and the HTTP-facing policy around them.

Everything a request meets lives here (authentication by API key, scopes, rate limits,
pagination, filters, the error shape); views parse, call one service or selector, and shape
the answer. Routes are declared once, in ``monitors.api.urls``.
"""
