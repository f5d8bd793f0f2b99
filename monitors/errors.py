"""Errors that services raise for the interface layer to turn into answers."""

from __future__ import annotations


class ServiceError(Exception):
    """Refuse a write for a reason the caller can fix; ``field`` names what to fix."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


class ConfigInvalid(ServiceError):
    """Carry every config problem at once, keyed ``config.<path>``."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        super().__init__("config", "; ".join(f"{k}: {v}" for k, v in errors.items()))


class FieldsInvalid(ServiceError):
    """Carry every refused field of one write at once, keyed by field name, so a form shows them all."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        field, message = next(iter(errors.items()))
        super().__init__(field, message)
