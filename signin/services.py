"""Write what sign-in owns: a registered client."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from oauth2_provider.generators import generate_client_secret
from oauth2_provider.models import get_application_model

from signin.registration import ClientRequest


@dataclass(frozen=True, slots=True)
class RegisteredClient:
    """Say what a registration created; ``client_secret`` is the clear secret, shown once (None for a public client)."""

    application: Any
    client_secret: str | None


def client_register(*, client: ClientRequest) -> RegisteredClient:
    """Create the OAuth client an assistant registered; only a hash of a confidential client's secret is kept."""
    application_model = get_application_model()
    secret = None if client.is_public else generate_client_secret()
    application = application_model(
        name=client.client_name,
        redirect_uris=" ".join(client.redirect_uris),
        client_type=application_model.CLIENT_PUBLIC
        if client.is_public
        else application_model.CLIENT_CONFIDENTIAL,
        authorization_grant_type=application_model.GRANT_AUTHORIZATION_CODE,
        client_secret=secret or "",
        registration_source=application_model.RegistrationSource.DCR,
        # Every assistant asks each user: an assistant is never trusted ahead of its user's consent.
        skip_authorization=False,
    )
    application.save()
    return RegisteredClient(application=application, client_secret=secret)
