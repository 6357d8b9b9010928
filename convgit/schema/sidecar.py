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
        "rules": (STR, False),
    },
    # a snapshot that could not be taken for ``entry`` (``status`` names it until the next one)
    "snapshot_failed": {"entry": (STR, True), "error": (STR, True), "ts": (STR, True)},
    # a turn's snapshot skipped for ``entry``: ``changed`` new or changed files, over the cap
    # ``[snapshots] max_files_per_turn`` was then; the entry has no snapshot (restore says so)
    "snapshot_skipped": {
        "entry": (STR, True),
        "changed": ((int,), True),
        "cap": ((int,), True),
        "ts": (STR, True),
    },
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
        "rebuilt": ((bool,), False),
        # the model is told where it left the files when the conversation next moves on
        "tell": ((bool,), False),
    },
    # the restore that saved ``before`` finished; a restore without one was interrupted
    "restored": {"before": (STR, True), "ts": (STR, True)},
    # the restores up to the one that saved ``before`` need no note: the files were back where
    # they were when the conversation moved on (``convgit.session.restore_notes``)
    "told": {"before": (STR, True), "ts": (STR, True)},
    # ``convgit gc`` re-parented the snapshot commits it kept: old commit -> new (same tree)
    "rebased": {"commits": ((dict,), True), "ts": (STR, True)},
    # ``convgit gc`` let a commit go: ``what`` is "snapshot" (``entry``'s), "replaced" (one a
    # newer snapshot of ``entry`` replaced) or "saved" (a saved state; ``entry`` is "")
    "pruned": {
        "entry": (STR, True),
        "commit": (STR, True),
        "what": (STR, True),
        "ts": (STR, True),
    },
}
# The required fields of these kinds are checked: damage there makes the sidecar unreadable (an
# undo could pick a wrong state). Other kinds and optional fields are read leniently: a wrong
# field counts as not written.
SIDECAR_CHECKED = frozenset({"snapshot", "restore"})
_REQUIRED = {
    kind: {name: spec for name, spec in fields.items() if spec[1]}
    for kind, fields in SIDECAR_FIELDS.items()
}
_OPTIONAL = {
    kind: {name: spec for name, spec in fields.items() if not spec[1]}
    for kind, fields in SIDECAR_FIELDS.items()
}


def sidecar_record(record: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    """How a reader takes a sidecar record: (what is wrong, None) when a required field of a
    kind in ``SIDECAR_CHECKED`` is missing or of the wrong type; (None, None) when one of another
    kind's is (the record counts as not written); else (None, the record without its optional
    fields of the wrong type, which count as not written). A kind this version does not know
    comes back as it is."""
    kind = record.get("type")
    if type(kind) is not str or kind not in _REQUIRED:
        return None, record
    problem = fields_error(record, _REQUIRED[kind])
    if problem is not None:
        return (problem, None) if kind in SIDECAR_CHECKED else (None, None)
    optional = _OPTIONAL[kind]
    if fields_error(record, optional) is None:
        return None, record
    wrong = {name for name, spec in optional.items() if fields_error(record, {name: spec})}
    return None, {key: value for key, value in record.items() if key not in wrong}


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
    rules: str | None = None,
) -> dict[str, Any]:
    """The files after ``entry``: ``commit`` (whose tree is ``tree_id``) of ``files`` files,
    leaving out ``skipped`` ({"path", "reason"}); ``replaces``: the entry's previous snapshot;
    ``rules``: the id of the ignore rules outside the working tree then (``git.rules``)."""
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
    if rules:
        record["rules"] = rules
    return record


def snapshot_failed(entry: str, error: str) -> dict[str, Any]:
    return {"type": "snapshot_failed", "entry": entry, "error": error, "ts": now()}


def snapshot_skipped(entry: str, changed: int, cap: int) -> dict[str, Any]:
    return {"type": "snapshot_skipped", "entry": entry, "changed": changed, "cap": cap, "ts": now()}


def restore(
    entry: str | None,
    before: str,
    commit: str,
    changed: dict[str, int],
    *,
    saved: str | None,
    paths: list[str] | None,
    escaped: bool,
    files: list[str],
    skipped: list[dict[str, str]],
    undo: bool,
    tell: bool = True,
) -> dict[str, Any]:
    """A restore to ``commit`` (``entry``'s snapshot, the saved state ``saved``, or neither) is
    about to change files: ``before`` saved them first. ``paths``: the paths it is limited to,
    as shown (``escaped`` when showing changed one); ``changed``: how many of each change;
    ``files``: the changed paths listed; ``skipped``: {"path", "reason"} left alone."""
    return {
        "type": "restore",
        "entry": "" if entry is None else entry,
        "saved": saved,
        "commit": commit,
        "before": before,
        "paths": paths,
        "escaped": escaped,
        "changed": changed,
        "files": files,
        "skipped": skipped,
        "undo": undo,
        "tell": tell,
        "ts": now(),
    }


def rebuilt_restore(before: str, ts: str) -> dict[str, Any]:
    """The ``restore`` record of the saved state ``before``, rebuilt by ``repair`` from its ref
    alone (the record was lost): what that restore did is not known, only the state it saved."""
    return {
        "type": "restore",
        "entry": "",
        "before": before,
        "paths": None,
        "changed": {},
        "rebuilt": True,
        "ts": ts,
    }


def told(before: str) -> dict[str, Any]:
    """The restores up to the one that saved ``before`` are told: no note was needed."""
    return {"type": "told", "before": before, "ts": now()}


def rebased(commits: dict[str, str], ts: str) -> dict[str, Any]:
    """``convgit gc`` (the run of time ``ts``) gave these snapshot commits new parents (old
    id -> new id)."""
    return {"type": "rebased", "commits": commits, "ts": ts}


def pruned(entry: str, commit: str, what: str, ts: str) -> dict[str, Any]:
    """``convgit gc`` let ``commit`` go at ``ts`` (``what``: snapshot, replaced or saved)."""
    return {"type": "pruned", "entry": entry, "commit": commit, "what": what, "ts": ts}


def restored(before: str) -> dict[str, Any]:
    """The restore that saved the state ``before`` finished."""
    return {"type": "restored", "before": before, "ts": now()}
