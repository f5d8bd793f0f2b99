"""Read a name's TXT records with c-ares, bounded in time: the custom-domain check's resolver."""

from __future__ import annotations

import threading

import pycares

TIMEOUT_SECONDS = 5.0
# A TXT answer is the customer's DNS: bound what one lookup may hand back.
MAX_RECORDS = 50
MAX_RECORD_CHARS = 1024


def txt_records(name: str) -> list[str]:
    """Return the TXT strings published at ``name``; an empty list when there are none or DNS fails."""
    done = threading.Event()
    found: list[str] = []

    def settle(result: pycares.DNSResult | None, error: int | None) -> None:
        if error is None and result is not None:
            for answer in result.answer[:MAX_RECORDS]:
                if isinstance(answer.data, pycares.TXTRecordData):
                    found.append(answer.data.data.decode("utf-8", "replace")[:MAX_RECORD_CHARS])
        done.set()

    try:
        channel = pycares.Channel(timeout=TIMEOUT_SECONDS, tries=1)
        channel.query(name, pycares.QUERY_TYPE_TXT, callback=settle)
    except (pycares.AresError, UnicodeError, ValueError):
        return []
    done.wait(TIMEOUT_SECONDS * 2)
    return list(found)
