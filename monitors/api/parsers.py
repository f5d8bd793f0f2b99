"""Parse API request bodies, refusing once, for every field, what no field can hold.

Registered as the only parser (REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]), so each view, each
serializer and each service behind them gets bodies whose strings are storable and whose
nesting is shallow: a NUL or a lone surrogate anywhere, in a value or a key, is a 400 naming
the field; a body nested deeper than MAX_DEPTH is a 400 saying so, whatever its depth (the
standard parser raised RecursionError, a 500, past about a thousand levels).
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser
from rest_framework.settings import api_settings
from rest_framework.utils import json

from probes.text import text_fault

MAX_DEPTH = 64
TOO_DEEP = f"The body is nested too deeply: at most {MAX_DEPTH} levels of objects and arrays."
MAX_ERRORS = 20


class CheckedJSONParser(JSONParser):
    """Parse JSON as DRF does, then refuse NUL, lone surrogates and deep nesting, naming where."""

    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        context = parser_context or {}
        encoding = context.get("encoding", settings.DEFAULT_CHARSET)
        # DRF reads request.body, so Django's DATA_UPLOAD_MAX_MEMORY_SIZE has bounded this already.
        raw = stream.read()
        try:
            text = codecs.decode(raw, encoding)
        except (ValueError, TypeError, LookupError):
            # Not text in its charset; or a charset that is no text encoding (charset=rot13).
            raise ParseError(f"The body is not valid {encoding} text.") from None
        try:
            parse_constant = json.strict_constant if api_settings.STRICT_JSON else None
            data = json.loads(text, parse_constant=parse_constant)
        except RecursionError:
            raise ParseError(TOO_DEEP) from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        errors = body_errors(data)
        if errors:
            raise ValidationError(errors)
        return data


def body_errors(data: Any) -> dict[str, list[str]]:
    """Return, by dotted field path, the strings of ``data`` no field may hold; raise ParseError if too deep.

    Iterative, so no depth can exhaust the stack; keys are checked like values, and a bad key is
    reported at its parent's path (the key itself can't be shown: it is what can't be encoded).
    """
    errors: dict[str, list[str]] = {}
    stack: list[tuple[Any, str, int]] = [(data, "", 1)]
    while stack and len(errors) < MAX_ERRORS:
        value, path, depth = stack.pop()
        if isinstance(value, dict):
            if depth > MAX_DEPTH:
                raise ParseError(TOO_DEEP)
            for key, item in value.items():
                fault = text_fault(key)
                if fault is not None:
                    errors.setdefault(path or api_settings.NON_FIELD_ERRORS_KEY, []).append(
                        f"A key holds {fault}."
                    )
                    continue
                stack.append((item, f"{path}.{key[:100]}" if path else key[:100], depth + 1))
        elif isinstance(value, list):
            if depth > MAX_DEPTH:
                raise ParseError(TOO_DEEP)
            stack.extend(
                (item, f"{path}.{index}" if path else str(index), depth + 1)
                for index, item in enumerate(value)
            )
        elif isinstance(value, str):
            fault = text_fault(value)
            if fault is not None:
                errors.setdefault(path or api_settings.NON_FIELD_ERRORS_KEY, []).append(
                    f"Must not contain {fault}."
                )
    return errors
