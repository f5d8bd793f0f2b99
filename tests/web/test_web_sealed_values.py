"""A header value sealed into the healthcheck form opens only where it was typed (web.sealed_values).

The seal is what stands between a value typed in one organization's form and a check that
sends it elsewhere: hostile input here is a hidden field an attacker copies, edits or keeps.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.http import QueryDict

from monitors.secrets import MASK
from tests.clock import frozen_at
from tests.conftest import NOW
from web import healthcheck_form as hc_form
from web.sealed_values import MAX_AGE_SECONDS, SealBroken, origin_of, seal, unseal

ORG, OTHER_ORG = "org-1", "org-2"
ORIGIN = "https://mcp.example.com:443"


def test_a_sealed_value_opens_for_its_organization_and_origin():
    token = seal("Bearer k-1", organization_id=ORG, origin=ORIGIN)

    assert "k-1" not in token
    assert unseal(token, organization_id=ORG, origin=ORIGIN) == "Bearer k-1"


@pytest.mark.parametrize(
    ("organization", "origin"),
    [
        (OTHER_ORG, ORIGIN),
        (ORG, "https://attacker.example:443"),
        (ORG, "http://mcp.example.com:80"),
        (ORG, ""),
    ],
    ids=["another organization", "another host", "another scheme", "no origin"],
)
def test_a_sealed_value_does_not_open_elsewhere(organization, origin):
    token = seal("Bearer k-1", organization_id=ORG, origin=ORIGIN)

    with pytest.raises(SealBroken):
        unseal(token, organization_id=organization, origin=origin)


@pytest.mark.parametrize(
    "token",
    ["", "garbage", "gAAAAA" + "A" * 80, "\x00", "\ud800"],
    ids=["empty", "garbage", "fernet-shaped", "nul", "lone surrogate"],
)
def test_a_forged_seal_does_not_open(token):
    with pytest.raises(SealBroken):
        unseal(token, organization_id=ORG, origin=ORIGIN)


def test_a_tampered_seal_does_not_open():
    token = seal("Bearer k-1", organization_id=ORG, origin=ORIGIN)
    middle = len(token) // 2
    tampered = token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1 :]

    with pytest.raises(SealBroken):
        unseal(tampered, organization_id=ORG, origin=ORIGIN)


def test_a_seal_older_than_its_age_does_not_open():
    with frozen_at(NOW):
        token = seal("Bearer k-1", organization_id=ORG, origin=ORIGIN)
    with frozen_at(NOW + timedelta(seconds=MAX_AGE_SECONDS - 1)):
        assert unseal(token, organization_id=ORG, origin=ORIGIN) == "Bearer k-1"
    with frozen_at(NOW + timedelta(seconds=MAX_AGE_SECONDS + 61)), pytest.raises(SealBroken):
        unseal(token, organization_id=ORG, origin=ORIGIN)


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://MCP.example.com/mcp", "https://mcp.example.com:443"),
        ("https://mcp.example.com:443/x", "https://mcp.example.com:443"),
        ("http://mcp.example.com/mcp", "http://mcp.example.com:80"),
        ("https://mcp.example.com:8443/mcp", "https://mcp.example.com:8443"),
        ("not a url", ""),
        ("https://mcp.example.com:99999/", ""),
    ],
)
def test_the_origin_a_seal_is_bound_to(url, origin):
    assert origin_of(url) == origin


def posted(**fields: str) -> QueryDict:
    data = QueryDict(mutable=True)
    data.update({"type": "mcp", "name": "Keyed", **fields})
    return data


def test_a_form_posted_with_another_organization_s_seal_asks_for_the_value_again():
    token = seal("Bearer k-1", organization_id=OTHER_ORG, origin=ORIGIN)
    form = hc_form.posted_form(
        posted(
            uri="https://mcp.example.com/mcp",
            header_name_0="Authorization",
            header_value_0=MASK,
            header_sealed_0=token,
        ),
        organization_id=ORG,
    )

    assert form.headers == [("Authorization", "")]
    assert form.errors["headers"] == [
        "Authorization: Type the value again: the form was left open too long or its URL's origin changed."
    ]


def test_a_form_shown_again_holds_the_typed_value_only_sealed():
    form = hc_form.posted_form(
        posted(uri="https://mcp.example.com/mcp", header_name_0="Authorization", header_value_0="Bearer k-1"),
        organization_id=ORG,
    )

    (row, *spares) = hc_form.header_rows(form, organization_id=ORG)

    assert (row.name, row.shown) == ("Authorization", MASK)
    assert unseal(row.sealed, organization_id=ORG, origin=ORIGIN) == "Bearer k-1"
    assert all((spare.shown, spare.sealed) == ("", "") for spare in spares)
