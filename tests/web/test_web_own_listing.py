"""The healthcheck page's listing: shown in the Scorecard section, entered on its own page with the API's rules."""

from __future__ import annotations

import re

import pytest

from monitors.models import HealthcheckListing

pytestmark = pytest.mark.django_db

FORM = {
    "namespace": "io.github.acme/docs",
    "website_url": "https://acme.example",
    "repository_url": "https://github.com/acme/docs-mcp",
    "pricing_url": "https://acme.example/pricing",
    "quote": "Free tier: 1,000 calls a month",
}


def listing_url(healthcheck) -> str:
    return f"/app/healthchecks/{healthcheck.public_id}/listing/"


def test_the_scorecard_section_offers_to_add_a_listing(owner, org, make_check):
    healthcheck = make_check(org)

    page = owner.get(f"/app/healthchecks/{healthcheck.public_id}/").content.decode()

    assert "No listing: the publisher checks are not measured and check 12 fails." in page
    assert f'href="{listing_url(healthcheck)}">Add a listing…</a>' in page


def test_saving_the_form_stores_the_listing_and_shows_it_on_the_page(owner, org, make_check):
    healthcheck = make_check(org)

    answer = owner.post(listing_url(healthcheck), FORM)

    assert answer.status_code == 302
    stored = HealthcheckListing.objects.get(healthcheck=healthcheck)
    assert (stored.namespace, stored.quote) == (FORM["namespace"], FORM["quote"])
    page = owner.get(answer["Location"]).content.decode()
    assert '<code>io.github.acme/docs</code> <span class="muted">(entered by hand)</span>' in page
    assert "“Free tier: 1,000 calls a month” on https://acme.example/pricing" in page
    assert "not found yet" in page
    assert "Listed by hand, not in the Official MCP Registry" in page


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"namespace": "docs"}, "namespace", "Must be a reverse-DNS namespace"),
        ({"pricing_url": "ftp://acme.example/p"}, "pricing_url", "Must be an http(s) URL with a host"),
        ({"quote": "Start your free trial"}, "quote", "A free trial is not free access"),
        ({"quote": "x" * 501}, "quote", "Ensure this field has no more than 500 characters."),
    ],
)
def test_a_refused_field_shows_its_message_next_to_it_and_keeps_what_was_typed(
    owner, org, make_check, changes, field, message
):
    healthcheck = make_check(org)

    answer = owner.post(listing_url(healthcheck), {**FORM, **changes})

    assert answer.status_code == 400
    page = answer.content.decode()
    assert f'<ul class="errorlist" id="{field}-errors"><li>{message}' in page
    field_tag = re.search(rf'<(?:input|textarea)[^>]* name="{field}"[^>]*>', page)
    assert field_tag is not None
    assert 'aria-invalid="true"' in field_tag.group(0)
    assert f"{field}-errors" in field_tag.group(0)
    assert not HealthcheckListing.objects.exists()
    assert changes[field] in page


def test_the_form_can_remove_the_listing(owner, org, make_check):
    healthcheck = make_check(org)
    owner.post(listing_url(healthcheck), FORM)

    answer = owner.post(listing_url(healthcheck), {"action": "clear"})

    assert answer.status_code == 302
    assert not HealthcheckListing.objects.exists()


def test_a_viewer_sees_the_listing_but_may_not_change_it(viewer, owner, org, make_check):
    healthcheck = make_check(org)
    owner.post(listing_url(healthcheck), FORM)

    page = viewer.get(listing_url(healthcheck)).content.decode()
    answer = viewer.post(listing_url(healthcheck), {**FORM, "namespace": "com.acme/other"})

    assert '<form method="post" class="card" novalidate>' not in page
    assert answer.status_code == 403
    assert HealthcheckListing.objects.get().namespace == FORM["namespace"]


def test_another_organization_s_check_has_no_listing_page(make_member, other_org, org, make_check):
    healthcheck = make_check(org)
    stranger = make_member(other_org)

    assert stranger.get(listing_url(healthcheck)).status_code == 404
    assert stranger.post(listing_url(healthcheck), FORM).status_code == 404


def test_a_check_of_another_type_has_no_listing_page(owner, org, make_check):
    healthcheck = make_check(org, type_name="http", uri="https://acme.example/")

    assert owner.get(listing_url(healthcheck)).status_code == 404


def test_every_refused_field_shows_its_message_at_once(owner, org, make_check):
    healthcheck = make_check(org)

    answer = owner.post(
        listing_url(healthcheck), {**FORM, "namespace": "docs", "quote": "Start your free trial"}
    )

    page = answer.content.decode()
    assert '<ul class="errorlist" id="namespace-errors">' in page
    assert '<ul class="errorlist" id="quote-errors">' in page


def test_the_form_refuses_a_pricing_page_at_a_private_address(owner, org, make_check, settings):
    # The form saves through the API's service, so the address guard's words are the field's message.
    settings.UPTIMY_ALLOW_PRIVATE_TARGETS = False
    healthcheck = make_check(org)

    answer = owner.post(listing_url(healthcheck), FORM | {"pricing_url": "http://10.0.0.5/pricing"})

    assert answer.status_code == 400
    assert "10.0.0.5 is a private address" in answer.content.decode()
    assert not HealthcheckListing.objects.filter(healthcheck=healthcheck).exists()
