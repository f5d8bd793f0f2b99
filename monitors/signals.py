"""Signals monitors sends for the apps above it, which it may not import."""

from __future__ import annotations

from django.dispatch import Signal

# Sent by `manage.py serve` once the demo organization exists, with ``organization_slug`` and
# ``base_url`` (where serve answers). A receiver makes its app's demo part (a status page) and
# returns a line for serve to print, or None.
demo_ready = Signal()

# Sent by `monitors.selectors.acknowledgements_of` with ``healthcheck_ids``, ``start``, ``end`` and
# ``until``. Acknowledgements are kept above monitors (alerts' incidents), which reports, a sibling
# of alerts, may not import: a receiver returns the ``monitors.uptime.Acknowledged`` incidents of
# those checks opened in ``[start, end)`` and acknowledged by ``until``.
acknowledgements_asked = Signal()

# Sent by `monitors.selectors.scorecard_evidence` with ``repository_url``: the repository a
# customer's own listing names. GitHub's licence lookups are the directory's (above monitors),
# which answers with the ``monitors.scorecard.LicenceLookup`` of that repository (scorecard
# check 22); no answer means the lookup has not been done.
licence_asked = Signal()
