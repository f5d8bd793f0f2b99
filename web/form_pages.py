"""Show a form's page and save what it posts: one way for every settings form of the web app.

A form's page shows the values typed (or stored) and the API's errors for them; its POST goes
through the API's serializer and the same service (:func:`web.api_errors.saved`), then either
shows the page again with the errors (400) or says what was done and redirects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar, cast

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from rest_framework.serializers import Serializer

from web.access import Seat
from web.api_errors import saved

T = TypeVar("T")

Errors = dict[str, list[str]]


class ApiForm(Protocol):
    """A form module that turns what a browser posts into the API's request body."""

    def typed(self, data: QueryDict, /) -> dict[str, Any]: ...

    def api_body(self, values: dict[str, Any], /) -> dict[str, Any]: ...


def form_page(
    request: HttpRequest,
    template: str,
    seat: Seat,
    *,
    values: Any,
    errors: Errors | None,
    status: int = 200,
    **context: Any,
) -> HttpResponse:
    """Render ``template`` with the seat, the form's values and their errors (none: an empty mapping)."""
    shown = {"seat": seat, "values": values, "errors": errors or {}, **context}
    return render(request, template, shown, status=status)


def form_saved(
    request: HttpRequest,
    serializer: Serializer[Any],
    save: Callable[[], T],
    *,
    again: Callable[[Errors], HttpResponse],
    done: str | Callable[[T], str],
    to: str,
    **to_kwargs: Any,
) -> HttpResponse:
    """Save through ``serializer`` and ``save``; on errors return ``again(errors)``, else say ``done`` and go ``to``."""
    result, errors = saved(serializer, save)
    if errors:
        return again(errors)
    messages.success(request, done if isinstance(done, str) else done(cast(T, result)))
    response: HttpResponse = redirect(to, **to_kwargs)
    return response


def form_view(
    request: HttpRequest,
    form: ApiForm,
    serializer_class: Callable[..., Serializer[Any]],
    *,
    page: Callable[..., HttpResponse],
    save: Callable[[Any], T],
    done: str | Callable[[T], str],
    to: str,
) -> HttpResponse:
    """Show ``page()`` (GET); save a POST as the API does: ``form``'s body through ``serializer_class`` to ``save``.

    ``save`` is given the valid serializer; the page is shown again with the values typed and the
    errors (``page(values, errors, status=400)``), or :func:`form_saved` says ``done`` and goes ``to``.
    """
    if request.method != "POST":
        return page()
    values = form.typed(request.POST)
    serializer = serializer_class(data=form.api_body(values))
    return form_saved(
        request,
        serializer,
        lambda: save(serializer),
        again=lambda errors: page(values, errors, status=400),
        done=done,
        to=to,
    )
