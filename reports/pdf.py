"""Draw a report as HTML and as PDF from one Django template, so the two never disagree."""

from __future__ import annotations

import os
from typing import Any

from django.template.loader import render_to_string

TEMPLATE = "reports/report.html"


def report_html(data: dict[str, Any]) -> str:
    """Return the report's HTML page, drawn from its JSON data (reports.render.report.report_data)."""
    return render_to_string(TEMPLATE, {"data": data})


def report_pdf(data: dict[str, Any]) -> bytes:
    """Return the report as a PDF, laid out by WeasyPrint from the same HTML.

    No base URL: the template is self-contained (inline CSS, no images), so WeasyPrint fetches
    nothing. The same data gives the same bytes: no creation date, a fixed identifier.
    """
    # Imported here: WeasyPrint loads pango through cffi, which a process that never draws a PDF
    # (the probe workers) should not pay for.
    from weasyprint import HTML

    # Without HarfBuzz-Subset, WeasyPrint subsets fonts with fontTools, which stamps each font's
    # "modified" time with the clock unless SOURCE_DATE_EPOCH (reproducible builds) says otherwise:
    # the one thing that made two PDFs of the same report differ. Left alone where already set.
    os.environ.setdefault("SOURCE_DATE_EPOCH", "0")
    pdf = HTML(string=report_html(data)).write_pdf()
    if not isinstance(pdf, bytes):  # write_pdf returns the bytes when given no target
        raise TypeError("WeasyPrint returned no PDF")
    return pdf
