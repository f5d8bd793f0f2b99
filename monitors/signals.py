"""Signals monitors sends for the apps above it, which it may not import."""

from __future__ import annotations

from django.dispatch import Signal

# Sent by `manage.py serve` once the demo organization exists, with ``organization_slug`` and
# ``base_url`` (where serve answers). A receiver makes its app's demo part (a status page) and
# returns a line for serve to print, or None.
demo_ready = Signal()
