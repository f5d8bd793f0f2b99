"""grant_for: the one place a bearer credential becomes an organization and scopes."""

from __future__ import annotations

import pytest
from django.utils import timezone

from mcpserver.auth import Grant, grant_for
from monitors.models import ApiKey
from monitors.services import api_key_create, api_key_revoke

pytestmark = pytest.mark.django_db
RESOURCE = "http://127.0.0.1:8000/mcp"


@pytest.mark.parametrize(
    ("scope", "scopes"),
    [(ApiKey.Scope.READ_WRITE, {"read", "write"}), (ApiKey.Scope.READ, {"read"})],
)
def test_an_api_key_grants_its_organization_with_its_scopes(org, scope, scopes):
    _, raw = api_key_create(organization=org, scope=scope)

    grant = grant_for(f"Bearer {raw}", resource=RESOURCE)

    assert grant == Grant(organization_id=org.id, scopes=frozenset(scopes), user_id=None, via="key")


def test_the_scheme_is_case_insensitive(org):
    _, raw = api_key_create(organization=org)

    assert grant_for(f"bearer  {raw} ", resource=RESOURCE) is not None


@pytest.mark.parametrize(
    "header",
    [None, "", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Bearer upt_not-a-key", "Bearer some-oauth-token"],
)
def test_no_or_an_unknown_credential_grants_nothing(db, header):
    assert grant_for(header, resource=RESOURCE) is None


def test_a_revoked_key_grants_nothing(org):
    api_key, raw = api_key_create(organization=org)
    api_key_revoke(api_key=api_key, now=timezone.now())

    assert grant_for(f"Bearer {raw}", resource=RESOURCE) is None
