"""The records of a quarantine file: a line moved out of a session or sidecar file by a writer
or ``repair``, kept exactly."""

from __future__ import annotations

from typing import Any

from convgit.schema.fields import STR, FieldSpec, now

QUARANTINE_FIELDS: dict[str, FieldSpec] = {
    "ts": (STR, True),
    "reason": (STR, True),
    "line": ((int,), False),
    "text": (STR, False),
    "base64": (STR, False),
}


def quarantined(line: int | None, raw: bytes, reason: str) -> dict[str, Any]:
    """A line moved aside, kept exactly: as text when it is UTF-8, else as base64."""
    record: dict[str, Any] = {"type": "quarantined", "ts": now(), "reason": reason}
    if line is not None:
        record["line"] = line
    try:
        record["text"] = raw.decode("utf-8")
    except UnicodeDecodeError:
        import base64  # here: only a line that is not UTF-8 needs it

        record["base64"] = base64.b64encode(raw).decode()
    return record
