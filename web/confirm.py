"""Ask before a delete: one confirmation page for every settings object the web app can delete."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from web.access import Seat


def confirm_delete(
    request: HttpRequest,
    seat: Seat,
    *,
    name: str,
    consequence: str,
    delete: Callable[[], object],
    done: str,
    done_url: str,
    back_url: str,
) -> HttpResponse:
    """Show what deleting ``name`` does (GET); on POST call ``delete``, say ``done`` and go to ``done_url``."""
    if request.method == "POST":
        delete()
        messages.success(request, done)
        return redirect(done_url)
    context = {"seat": seat, "name": name, "consequence": consequence, "back": back_url}
    return render(request, "web/settings/confirm_delete.html", context)
