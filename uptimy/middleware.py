"""Site-wide request guards that no single app owns."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

from probes.text import text_fault


class QueryTextGuard:
    """Answer 400, naming the parameter, to a query string holding a NUL (or a lone surrogate).

    Filters hand query values to the database, and PostgreSQL refuses a NUL in any string
    parameter: ``?search=%00`` was a 500 on every list, the admin's search included. Django
    decodes query strings with replacement, so a surrogate can't arrive here; it is refused too,
    should that ever change. Request bodies are checked by the API's parser
    (monitors.api.parsers).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.META.get("QUERY_STRING"):
            errors: dict[str, list[str]] = {}
            for key, values in request.GET.lists():
                fault = text_fault(key)
                if fault is not None:
                    errors.setdefault("query", []).append(f"A parameter name holds {fault}.")
                    continue
                faults = [found for value in values if (found := text_fault(value)) is not None]
                if faults:
                    errors[key[:100]] = [f"Must not contain {faults[0]}."]
            if errors:
                return JsonResponse(errors, status=400)
        return self.get_response(request)
