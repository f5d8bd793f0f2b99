"""Turn service errors into 400 answers keyed by field, like DRF's own validation errors."""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from monitors.errors import ConfigInvalid, FieldsInvalid, ServiceError
from monitors.secrets import SecretUnreadable


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ConfigInvalid | FieldsInvalid):
        return Response(
            {key: [message] for key, message in exc.errors.items()}, status=status.HTTP_400_BAD_REQUEST
        )
    if isinstance(exc, ServiceError):
        return Response({exc.field: [exc.message]}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, SecretUnreadable):
        # The stored headers were encrypted with a key that is no longer configured: an
        # operator problem, not the caller's; say so without any detail of the secret.
        return Response(
            {
                "detail": "Stored header values can't be decrypted; an operator must restore UPTIMY_SECRETS_KEY."
            },
            status=status.HTTP_409_CONFLICT,
        )
    return drf_exception_handler(exc, context)
