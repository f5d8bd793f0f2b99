"""Celery tasks of sign-in: thin, each calls the toolkit or a service. Task names are stable."""

from __future__ import annotations

from celery import shared_task
from oauth2_provider.models import clear_expired


@shared_task(name="signin.clear_expired_tokens", ignore_result=True, expires=600)
def clear_expired_tokens() -> None:
    """Delete expired access tokens, used or expired refresh tokens and codes (their organization rows go with them)."""
    clear_expired()
