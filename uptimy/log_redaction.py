"""Keep live one-time tokens out of every log line: a logging filter that redacts the paths and URLs in a record.

``RedactSecretUrls`` rewrites a record's message with ``uptimy.redaction.redact_text`` before any
handler writes it. It sits on the handlers of Django's logging (settings.LOGGING: ``django.request``'s
"Not Found: /path", ``django.server``'s request lines) and, through ``uptimy.gunicorn_conf``'s logger
class, on gunicorn's access and error handlers, which uvicorn's worker hands to ``uvicorn.access`` and
``uvicorn.error``: the request line, path, query and referer of every access-log line.
"""

from __future__ import annotations

import logging

from uptimy.redaction import redact_text


class RedactSecretUrls(logging.Filter):
    """Replace the secret parts of every path and URL in a record's message; never drop a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True  # a malformed record: logging's own handler reports it as it would have
        redacted = redact_text(message)
        if redacted != message:
            # The message is kept formatted: its arguments held the secret.
            record.msg, record.args = redacted, None
        return True


def redact_handlers(*loggers: logging.Logger) -> None:
    """Put one ``RedactSecretUrls`` on every handler of ``loggers`` that has none yet."""
    for logger in loggers:
        for handler in logger.handlers:
            if not any(isinstance(kept, RedactSecretUrls) for kept in handler.filters):
                handler.addFilter(RedactSecretUrls())
