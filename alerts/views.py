"""The acknowledge link's page: GET shows a button, POST acknowledges (no login; the token is the key).

A GET never acknowledges: mail scanners and link previews open every link in a message. The
token alone acknowledges; when the person clicking is signed in to the web app as a member of
the incident's organization, the acknowledgement names them, as the web app's own button does.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.html import format_html
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from alerts import selectors, services
from alerts.links import LinkExpired, LinkInvalid, incident_of_token
from alerts.models import Incident

_PAGE = "<!doctype html><html><head><meta charset='utf-8'><title>{}</title></head><body><h1>{}</h1>{}</body></html>"


@csrf_exempt  # no session is involved: the signed token in the URL is the only credential
@require_http_methods(["GET", "POST"])
def acknowledge_link(request: HttpRequest, token: str) -> HttpResponse:
    try:
        public_id = incident_of_token(token)
    except LinkExpired as exc:
        return _page("Link expired", str(exc), status=410)
    except LinkInvalid as exc:
        return _page("Link not valid", str(exc), status=404)
    incident = Incident.objects.filter(public_id=public_id).first()
    if incident is None:
        return _page("Incident not found", "This incident no longer exists.", status=404)
    if request.method == "GET":
        if incident.acknowledged_at is not None:
            return _page("Already acknowledged", _acknowledged_words(incident))
        member = selectors.member_name(user=request.user, organization_id=incident.organization_id)
        form = format_html(
            "<p>{} is {} since {}.</p>{}<form method='post'><button type='submit'>Acknowledge</button></form>",
            incident.healthcheck_name,
            "resolved" if incident.resolved_at else incident.severity,
            incident.opened_at.isoformat(),
            format_html("<p>Signed in as {}: the acknowledgement names you.</p>", member) if member else "",
        )
        return _page("Acknowledge incident", form, raw=True)
    member = selectors.member_name(user=request.user, organization_id=incident.organization_id)
    by = f"{member} (acknowledge link)" if member else "acknowledge link"
    try:
        incident = services.incident_acknowledge(incident=incident, by=by, now=timezone.now())
    except services.IncidentResolved as exc:
        return _page("Already resolved", exc.message, status=409)
    return _page("Acknowledged", _acknowledged_words(incident))


def _acknowledged_words(incident: Incident) -> str:
    assert incident.acknowledged_at is not None
    return f"Acknowledged at {incident.acknowledged_at.isoformat()} by {incident.acknowledged_by}."


def _page(title: str, body: str, *, status: int = 200, raw: bool = False) -> HttpResponse:
    shown = body if raw else format_html("<p>{}</p>", body)
    return HttpResponse(format_html(_PAGE, title, title, shown), status=status)
