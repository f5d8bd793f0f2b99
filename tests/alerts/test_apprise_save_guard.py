"""An Apprise channel's address is checked on save, as a webhook's is: the host its plugin will connect to."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

URL = "/api/v1/channels/"
SLACK = "slack://T1ABCDEFG/B1ABCDEFG/abcdefghijklmnopqrstuvwx"
NATIVE_SLACK = "https://hooks.slack.com/services/T1ABCDEFG/B1ABCDEFG/abcdefghijklmnopqrstuvwx"


@pytest.fixture
def api(make_client, org, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = False
    return make_client(org)


def save(api, kind: str, config: dict):
    return api.post(URL, {"name": f"{kind} channel", "kind": kind, "config": config}, format="json")


def refusal(response) -> str:
    assert response.status_code == 400, response.content
    return response.json()["config.url"][0]


@pytest.mark.parametrize("url", [SLACK, NATIVE_SLACK, f"{SLACK}?footer=no"])
@pytest.mark.parametrize("address", ["10.0.0.5", "127.0.0.1", "169.254.169.254"])
def test_a_fixed_host_service_resolving_to_a_private_address_is_refused_as_a_webhook_is(
    api, dns, url, address
):
    dns.answers["hooks.slack.com"] = address
    webhook = refusal(save(api, "webhook", {"url": "https://hooks.slack.com/services/x"}))

    assert refusal(save(api, "apprise", {"url": url})) == webhook
    assert webhook.startswith(f"hooks.slack.com resolves to {address}")


@pytest.mark.parametrize("scheme", ["json", "ntfy", "gotify", "mmost", "matrix"])
def test_a_custom_host_at_a_private_address_is_refused_as_a_webhook_is(api, dns, scheme):
    dns.answers["chat.internal.example"] = "192.168.1.20"
    webhook = refusal(save(api, "webhook", {"url": "http://chat.internal.example/hook"}))
    url = {
        "json": "json://chat.internal.example/hook",
        "ntfy": "ntfy://chat.internal.example/alerts",
        "gotify": "gotify://chat.internal.example/abcdefghijklmno",
        "mmost": "mmost://chat.internal.example/abcdefghijklmnopqrstuvwxyz",
        "matrix": "matrix://user:pass@chat.internal.example/#room",
    }[scheme]

    assert refusal(save(api, "apprise", {"url": url})) == webhook


def test_a_literal_loopback_address_is_refused_with_the_webhook_s_words(api):
    webhook = refusal(save(api, "webhook", {"url": "http://127.0.0.1:9/hook"}))

    assert refusal(save(api, "apprise", {"url": "json://127.0.0.1:9/hook"})) == webhook


@pytest.mark.parametrize("url", [SLACK, NATIVE_SLACK])
def test_a_service_at_a_public_address_is_saved(api, dns, url):
    dns.answers["hooks.slack.com"] = "93.184.215.14"

    response = save(api, "apprise", {"url": url})

    assert response.status_code == 201, response.content


def test_private_addresses_are_saved_where_they_are_allowed(api, settings):
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = True

    assert save(api, "apprise", {"url": "json://127.0.0.1:9/hook"}).status_code == 201


def test_a_change_to_a_private_address_is_refused(api, dns):
    dns.answers["hooks.slack.com"] = "93.184.215.14"
    dns.answers["chat.internal.example"] = "10.1.2.3"
    added = save(api, "apprise", {"url": SLACK}).json()

    response = api.patch(
        f"{URL}{added['id']}/", {"config": {"url": "json://chat.internal.example/hook"}}, format="json"
    )

    assert "10.1.2.3, a private address" in refusal(response)
