"""The store's trash: ``convgit sessions rm`` moves a session there, ``convgit sessions restore``
brings it back, ``convgit gc --trash`` empties it.

A session in the trash is its files as the sessions folder held them (``<sid>.jsonl``, its
sidecar, quarantine and backups), under ``<store>/trash/<sid>/sessions/``, byte for byte, and
its refs renamed from ``refs/convgit/<sid>/…`` to ``refs/convgit/_trash/<sid>/…`` (no session id
starts with ``_``), which keep its snapshot commits from git gc. Neither listed, nor opened,
nor recorded by a hook while there.

Promises kept here:
* rm and restore only rename: files (within the store) and refs (in one git transaction), so
  a restore gives back the same bytes and the same refs;
* refs move first, then files, the session's own ``<sid>.jsonl`` last, both ways: a session
  is wherever its ``<sid>.jsonl`` is, and running the same command again finishes a move
  that was interrupted;
* only ``gc --trash`` deletes, and it says what.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.base import codec, faults
from convgit.base.errors import ConvgitError, NotFoundError, RefusedError
from convgit.base.valueclass import valueclass
from convgit.git import names
from convgit.store import jsonl, sessions
from convgit.store.location import StoreLocation

if TYPE_CHECKING:
    from convgit.schema.shapes import TrashMoveJson
    from convgit.workspace import Workspace


@valueclass
class Trashed:
    """One session moved to or from the trash, or removed from it for good."""

    session: str
    name: str | None
    entries: int
    files: list[str] = field(default_factory=list)  # the file names moved or removed
    refs: int = 0  # how many refs moved or were deleted

    def to_json(self) -> TrashMoveJson:
        return {
            "session": self.session,
            "name": self.name,
            "entries": self.entries,
            "files": self.files,
            "refs": self.refs,
        }


def describe(location: StoreLocation, sid: str) -> Trashed:
    """Session ``sid`` of ``location`` (the store, or its trash's store for it), as listed."""
    try:
        tree = sessions.read_tree(location, sid)
        return Trashed(sid, tree.name, len(tree.entries))
    except ConvgitError:  # a damaged file is moved as it is
        return Trashed(sid, None, 0)


def remove(location: StoreLocation, ref: str) -> Trashed:
    """Move the session ``ref`` names (id, prefix or name) to the trash."""
    sid = sessions.find_session(location, ref)
    there = location.in_trash(sid)
    if there.session_path(sid).exists():
        raise RefusedError(
            f"The trash already holds a session {sid}; nothing was moved.",
            "`convgit gc --trash` empties the trash",
        )
    moved = describe(location, sid)
    with _locked(location, sid):
        moved.refs = _move_refs(location, sid, names.trash_prefix(sid), names.session_prefix(sid))
        moved.files = _move_files(location, there, sid, note=True)
    return moved


def restore(location: StoreLocation, ref: str) -> Trashed:
    """Bring the session ``ref`` names (its id, a unique prefix or its name) back from the trash;
    refused
    when a session of that id is in the store."""
    sid = find_trashed(location, ref)
    if location.session_path(sid).exists():
        raise RefusedError(
            f"A session {sid} is in the store already; the one in the trash stays there.",
            "`convgit sessions` lists it",
        )
    there = location.in_trash(sid)
    back = describe(there, sid)
    with _locked(location, sid):
        back.refs = _move_refs(location, sid, names.session_prefix(sid), names.trash_prefix(sid))
        back.files = _move_files(there, location, sid, note=False)
    shutil.rmtree(location.trash / sid, ignore_errors=True)  # empty folders and its note
    return back


def find_trashed(location: StoreLocation, ref: str) -> str:
    """The session in the trash ``ref`` names: its id, a unique prefix of it, or its name."""
    found = [sid for sid in location.trashed_ids() if sid.startswith(ref)] if ref else []
    exact = [sid for sid in found if sid == ref]
    if exact or len(found) == 1:
        return (exact or found)[0]
    if found:
        raise RefusedError(
            f"'{ref}' names {len(found)} sessions in the trash; give more of its id."
        )
    named = sessions.trashed_named(location, ref)
    if len(named) == 1:
        return named[0]
    if named:
        raise RefusedError(
            f"{len(named)} sessions in the trash are named '{ref}'; give the session's id.",
            "`convgit sessions --trash` lists them",
        )
    if location.session_path(ref).exists():
        raise NotFoundError(f"Session {ref} is not in the trash; it is in the store.")
    raise NotFoundError(
        f"There is no session '{ref}' in the trash (`convgit gc --trash` may have emptied it).",
        "`convgit sessions --trash` lists what the trash holds",
    )


def empty(location: StoreLocation) -> tuple[list[Trashed], int]:
    """Delete every session in the trash for good: its files, its refs (git gc may then prune
    its snapshots), its private indexes and page. Returns them, and how many refs of the trash
    were left over from a move that was interrupted (deleted too)."""
    ws = _workspace(location)
    refs = {} if ws is None else ws.refs_under(names.TRASH_PREFIX)
    removed: list[Trashed] = []
    for sid in location.trashed_ids():
        there = location.in_trash(sid)
        gone = describe(there, sid)
        gone.files = sorted(p.name for p in there.sessions.iterdir())
        own: dict[str, str] = {}
        with _locked(location, sid):
            if ws is not None:
                own = ws.delete_session_refs(sid, trashed=True)
                for index in location.index_path(sid).parent.glob(f"{sid}-*"):
                    if "." not in index.name:  # the index; what is kept beside it goes with it
                        ws.forget_index(index)
                        Path(f"{index}.flock").unlink(missing_ok=True)
            shutil.rmtree(location.trash / sid)
        (location.root / "pages" / f"{sid}.html").unlink(missing_ok=True)
        for name in own:
            refs.pop(name, None)
        gone.refs = len(own)
        removed.append(gone)
    if ws is not None and refs:
        ws.delete_refs(refs)
    return removed, len(refs)


def listing(location: StoreLocation) -> list[dict[str, Any]]:
    """The sessions in the trash, as ``convgit sessions`` lists sessions, each with when it was
    moved there."""
    found: list[dict[str, Any]] = []
    for sid in location.trashed_ids():
        (row,) = sessions.rows(location.in_trash(sid))
        row["current"] = False
        row["trashed"] = _moved_at(location, sid)
        found.append(row)
    return found


def _moved_at(location: StoreLocation, sid: str) -> str | None:
    try:
        value = codec.decode((location.trash / sid / "trashed.json").read_bytes())
    except (OSError, ValueError):
        return None
    return value.get("ts") if isinstance(value, dict) else None


def _locked(location: StoreLocation, sid: str) -> Any:
    """Hold the session's lock and its sidecar's: no writer appends while its files move."""
    from contextlib import ExitStack

    stack = ExitStack()
    stack.enter_context(jsonl.exclusive(location.lock_path(sid), f"session {sid}"))
    stack.enter_context(
        jsonl.exclusive(location.lock_path(sid + ".files"), f"the snapshots of session {sid}")
    )
    return stack


def _move_refs(location: StoreLocation, sid: str, to: str, start: str) -> int:
    """Rename the refs under ``start`` to the same names under ``to``, all or none."""
    ws = _workspace(location)
    if ws is None:
        return 0
    found = ws.refs_under(start)
    ws.move_refs([(name, to + name[len(start) :], commit) for name, commit in found.items()])
    faults.point("trash:refs")
    return len(found)


def _move_files(source: StoreLocation, target: StoreLocation, sid: str, *, note: bool) -> list[str]:
    """Rename every file of session ``sid`` from ``source``'s sessions folder to
    ``target``'s, its ``<sid>.jsonl`` last; the names moved. ``note``: write when (into the
    trash)."""
    own = source.session_path(sid).name
    names = sorted(p.name for p in source.sessions.glob(f"{sid}.*") if p.is_file())
    names.sort(key=lambda name: name == own)
    target.sessions.mkdir(parents=True, exist_ok=True)
    if note:
        moved = codec.dumps({"session": sid, "ts": _now()}).encode()
        (target.root / "trashed.json").write_bytes(moved + b"\n")
    for name in names:
        faults.point("trash:file")
        if (target.sessions / name).exists():
            raise RefusedError(f"{target.sessions / name} exists; {name} was not moved over it.")
        os.rename(source.sessions / name, target.sessions / name)
    return names


def _now() -> str:
    from convgit import schema

    return str(schema.now())


def _workspace(location: StoreLocation) -> Workspace | None:
    """The repository whose refs keep the store's snapshots (None outside git)."""
    from convgit.workspace import Workspace

    return Workspace.of(location)
