"""What a shell's completion needs from a store, at a glance: a session's entry ids and labels,
and the sessions' display names, found in the lines' bytes. Nothing is parsed into a tree and
nothing is checked (a TAB must answer at once, on a session of any size): a line that is not
what it seems is passed over, and what is offered is only ever a suggestion the command then
checks as it checks any argument."""

from __future__ import annotations

import re
from pathlib import Path

from convgit.base import codec
from convgit.store.location import StoreLocation

_LABEL = re.compile(rb'"type"\s*:\s*"label"')
_NAME = re.compile(rb'"type"\s*:\s*"(?:name|session)"')


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def labels(location: StoreLocation, sid: str) -> list[str]:
    """The labels session ``sid`` has now (a label names one entry: given to another, it
    left the one it was on; taken off, it is gone)."""
    labelled: dict[str, str | None] = {}
    for line in _lines_with(_LABEL, _read(location.session_path(sid))):
        record = _record(line)
        target, label = record.get("target"), record.get("label")
        if isinstance(target, str) and (label is None or isinstance(label, str)):
            if isinstance(label, str):
                labelled = {t: n for t, n in labelled.items() if n != label}
            labelled[target] = label
    return sorted({n for n in labelled.values() if n})


def ids_starting(location: StoreLocation, sid: str, prefix: str) -> list[str]:
    """The ids in session ``sid``'s file that begin with ``prefix`` (one pass of a pattern
    over its bytes: no line is parsed)."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", prefix):
        return []
    pattern = re.compile(rb'"id"\s*:\s*"(' + re.escape(prefix.encode()) + rb'[A-Za-z0-9_-]*)"')
    found = {m.decode() for m in pattern.findall(_read(location.session_path(sid)))}
    return sorted(found - {sid})  # the header's id is the session's


def names(location: StoreLocation) -> dict[str, str]:
    """Each session's display name (the newest), for the sessions that have one."""
    found: dict[str, str] = {}
    for sid in location.session_ids():
        for line in _lines_with(_NAME, _read(location.session_path(sid))):
            name = _record(line).get("name")
            if isinstance(name, str) and name.strip():
                found[sid] = name
    return found


def _lines_with(pattern: re.Pattern[bytes], data: bytes) -> list[bytes]:
    """The lines of ``data`` in which ``pattern`` is found, each once, in order."""
    found: list[bytes] = []
    end = -1
    for match in pattern.finditer(data):
        if match.start() < end:
            continue  # a second match on a line already taken
        start = data.rfind(b"\n", 0, match.start()) + 1
        end = data.find(b"\n", match.end())
        end = len(data) if end == -1 else end
        found.append(data[start:end])
    return found


def _record(line: bytes) -> dict[str, object]:
    try:
        value = codec.decode(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
