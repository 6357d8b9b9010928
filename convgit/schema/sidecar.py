"""The records of a session's sidecar, ``<sid>.files.jsonl``: their field table, the check of
the kinds whose damage makes the sidecar unreadable, and one builder per kind."""

from __future__ import annotations

from typing import Any

from convgit.schema.fields import STR, STR_OR_NULL, FieldSpec, fields_error, now

SIDECAR_FIELDS: dict[str, dict[str, FieldSpec]] = {
    # snapshots on or off for this session from here on
    "sidecar": {"enabled": ((bool,), True), "ts": (STR, True)},
    # the files after ``entry``: ``replaces`` names the entry's previous snapshot commit
    "snapshot": {
        "entry": (STR, True),
        "commit": (STR, True),
        "tree": (STR, True),
        "ts": (STR, True),
        "files": ((int,), True),
        "skipped": ((list,), True),
        "replaces": (STR, False),
    },
    # a snapshot that could not be taken for ``entry`` (``status`` names it until the next one)
    "snapshot_failed": {"entry": (STR, True), "error": (STR, True), "ts": (STR, True)},
    # a restore about to change files: ``before`` is the saved state of the files it changes
    "restore": {
        "entry": (STR, True),
        "before": (STR, True),
        "paths": ((list, type(None)), True),
        "changed": ((dict,), True),
        "ts": (STR, True),
        "saved": (STR_OR_NULL, False),
        "commit": (STR, False),
        "escaped": ((bool,), False),
        "files": ((list,), False),
        "skipped": ((list,), False),
        "undo": ((bool,), False),
    },
    # the restore that saved ``before`` finished; a restore without one was interrupted
    "restored": {"before": (STR, True), "ts": (STR, True)},
}
# The required fields of these kinds are checked: damage there makes the sidecar unreadable (an
# undo could pick a wrong state). Other kinds and optional fields are read leniently: a wrong
# field counts as not written.
SIDECAR_CHECKED = frozenset({"snapshot", "restore"})
_SIDECAR_REQUIRED = {
    kind: {name: spec for name, spec in SIDECAR_FIELDS[kind].items() if spec[1]}
    for kind in SIDECAR_CHECKED
}


def kind_error_sidecar(record: dict[str, Any]) -> str | None:
    """What is wrong with a sidecar record of a kind in ``SIDECAR_CHECKED``, or None."""
    kind = record.get("type")
    spec = _SIDECAR_REQUIRED.get(kind) if type(kind) is str else None
    return None if spec is None else fields_error(record, spec)


def sidecar_switch(enabled: bool) -> dict[str, Any]:
    """Snapshots on or off from here on."""
    return {"type": "sidecar", "enabled": enabled, "ts": now()}


def snapshot(
    entry: str,
    commit: str,
    tree_id: str,
    files: int,
    skipped: list[dict[str, str]],
    *,
    ts: str | None = None,
    replaces: str | None = None,
) -> dict[str, Any]:
    """The files after ``entry``: ``commit`` (whose tree is ``tree_id``) of ``files`` files,
    leaving out ``skipped`` ({"path", "reason"}); ``replaces``: the entry's previous snapshot."""
    record: dict[str, Any] = {
        "type": "snapshot",
        "entry": entry,
        "commit": commit,
        "tree": tree_id,
        "ts": now() if ts is None else ts,
        "files": files,
        "skipped": skipped,
    }
    if replaces is not None:
        record["replaces"] = replaces
    return record


def snapshot_failed(entry: str, error: str) -> dict[str, Any]:
    return {"type": "snapshot_failed", "entry": entry, "error": error, "ts": now()}


def restored(before: str) -> dict[str, Any]:
    """The restore that saved the state ``before`` finished."""
    return {"type": "restored", "before": before, "ts": now()}
