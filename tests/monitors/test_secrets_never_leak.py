"""No response body and no log line ever contains a stored header value."""

from __future__ import annotations

import logging

import pytest
from django.core.management import call_command

from monitors.models import Healthcheck

SECRET = "Bearer s3cr3t-value-never-shown"
URL = "/api/v1/healthchecks/"
CHECK = {
    "name": "Docs MCP",
    "type": "mcp",
    "config": {"uri": "https://mcp.example.com/mcp", "headers": {"Authorization": SECRET}},
}


def test_no_response_or_log_line_contains_a_header_value(client, other_client, caplog):
    caplog.set_level(logging.DEBUG)
    responses = []
    created = client.post(URL, CHECK, format="json")
    responses.append(created)
    item = f"{URL}{created.json()['id']}/"
    responses += [
        client.get(URL),
        client.get(item),
        client.get(URL, {"search": SECRET}),
        client.patch(item, {"name": "renamed"}, format="json"),
        client.patch(item, {"config": {"headers": {"Authorization": "********"}}}, format="json"),
        client.put(item, {**CHECK, "name": "put"}, format="json"),
        client.post(item + "pause/"),
        client.post(item + "resume/"),
        # Refused writes echo nothing of the value either.
        client.patch(item, {"config": {"headers": {"Authorization": SECRET + "\r\nX: y"}}}, format="json"),
        client.patch(item, {"config": {"headers": {"Bad Name": SECRET}}}, format="json"),
        client.patch(item, {"config": {"headers": {f"X-{i}": SECRET for i in range(60)}}}, format="json"),
        client.post(URL, {**CHECK, "interval": -1}, format="json"),
        other_client.get(item),
        client.get("/api/v1/schema/"),
    ]

    for response in responses:
        assert SECRET not in response.content.decode(), response.request["PATH_INFO"]
        assert "s3cr3t" not in response.content.decode()
    assert "s3cr3t" not in caplog.text


def test_the_stored_row_holds_no_plain_header_value(client):
    client.post(URL, CHECK, format="json")
    row = Healthcheck.objects.values().get()

    assert "s3cr3t" not in str(row)


def test_admin_pages_do_not_show_header_values(client, admin_client):
    check_id = Healthcheck.objects.get(pk=_create(client)).pk

    for page in ("/admin/monitors/healthcheck/", f"/admin/monitors/healthcheck/{check_id}/change/"):
        response = admin_client.get(page)
        assert response.status_code == 200
        assert "s3cr3t" not in response.content.decode()


def test_dumpdata_holds_no_plain_header_value(client, capsys):
    _create(client)

    call_command("dumpdata", "monitors.healthcheck")

    assert "s3cr3t" not in capsys.readouterr().out


def _create(client) -> int:
    public_id = client.post(URL, CHECK, format="json").json()["id"]
    return Healthcheck.objects.get(public_id=public_id).pk


@pytest.fixture
def admin_client(db, client):
    from django.contrib.auth import get_user_model
    from django.test import Client

    user = get_user_model().objects.create_superuser("root", "", "pw-for-tests-only")
    browser = Client()
    browser.force_login(user)
    return browser
