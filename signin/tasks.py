"""Celery tasks of sign-in: thin, each calls the toolkit or a service. Task names are stable."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone
from oauth2_provider.models import clear_expired

from signin.services import code_redemptions_clear


@shared_task(name="signin.clear_expired_tokens", ignore_result=True, expires=600)
def clear_expired_tokens() -> None:
    """Delete expired access tokens, used or expired refresh tokens and codes (their organization rows go with them).

    And the exchanged codes whose tokens have all expired.
    """
    clear_expired()
    code_redemptions_clear(now=timezone.now())
