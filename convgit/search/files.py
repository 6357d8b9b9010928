"""The files each turn changed, in the search index (``convgit search --file PATH``): for every
entry with a snapshot, the paths git's diff finds between the tree of the nearest snapshot above
it on its path (``Track.nearest_snapshot`` of its parent) and its own, as ``convgit show -p``
shows them. The first snapshot of a path changed nothing known: it is where recording began.
A path a snapshot left out (over the size cap, unreadable) changed nothing known either.

The snapshots are the sidecar's (each one a ref convgit wrote, gc's let-go and rebased commits
applied, as every command reads them). A sidecar that only gained snapshots of entries with no
snapshot below them is read from where it was read to; anything else (gc let snapshots go or
gave them new ids, a snapshot replaced, a file rewritten) has the session's snapshots compared
whole with what the index holds. A snapshot recorded anew is ``undiffed`` until a search needs
its files (``--file``, or a result that shows them): only then do the pairs of trees go to git,
in one ``git diff-tree`` for those the search needs, so bringing the index up to date after a
turn runs no git at all."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from convgit.base import codec
from convgit.base.errors import ConvgitError
from convgit.base.valueclass import valueclass

if TYPE_CHECKING:
    import sqlite3

    from convgit.store.location import StoreLocation

_TAIL = 64
_REWRITES = frozenset({"rebased", "pruned"})  # records that change snapshots already there


@valueclass
class SidecarState:
    """How far a session's sidecar was read (``offset`` -1: read it whole next time)."""

    dev: int = 0
    ino: int = 0
    offset: int = 0
    tail: bytes = b""


@valueclass
class _Snap:
    entry: str
    tree: str
    skipped: list[str]


def changed(location: StoreLocation, state: SidecarState, sid: str) -> bool:
    """Whether session ``sid``'s sidecar is not what the index read of it."""
    if location.git is None:
        return False
    try:
        info = os.stat(location.sidecar_path(sid))
    except FileNotFoundError:
        return state.offset != 0
    return (info.st_dev, info.st_ino, info.st_size) != (state.dev, state.ino, state.offset)


def update(db: sqlite3.Connection, location: StoreLocation, states: Iterable[Any]) -> int:
    """Bring the snapshots of the sessions ``states`` (``index._Session``s whose sidecar
    changed) up to date, those with a snapshot above them left ``undiffed``; how many
    snapshots were recorded anew."""
    wanted: list[tuple[str, str]] = []  # (sid, entry)
    recorded = 0
    for state in states:
        pending, put = _session(db, location, state.sid, state.sidecar)
        wanted += [(sid, entry) for sid, entry, _, _ in pending]
        recorded += put
    db.executemany("insert or ignore into undiffed values (?, ?)", wanted)
    return recorded


def undiffed(
    db: sqlite3.Connection, keys: Iterable[tuple[str, str]] | None
) -> list[tuple[str, str, str, str]]:
    """(sid, entry, prev tree, tree) of the snapshots among ``keys`` (None: all) whose files
    are not read from git yet."""
    sql = "select u.sid, u.entry, s.prev, s.tree from undiffed u join snaps s using (sid, entry)"
    if keys is None:
        return db.execute(sql).fetchall()
    found = []
    for key in keys:
        found += db.execute(sql + " where u.sid = ? and u.entry = ?", key).fetchall()
    return found


def diff(
    db: sqlite3.Connection, location: StoreLocation, wanted: list[tuple[str, str, str, str]]
) -> None:
    """Read from git the files the snapshots ``wanted`` (``undiffed``'s) changed, into
    ``files``."""
    found: dict[tuple[str, str], list[str]] = {}
    if wanted and location.git is not None and location.git.worktree is not None:
        from convgit.workspace import Workspace  # here: most searches need no git

        workspace = Workspace(location.git.worktree, location.git.git_dir, location.git.common_dir)
        pairs = sorted({(prev, tree) for _, _, prev, tree in wanted})
        try:
            found = dict(zip(pairs, workspace.changed_paths(pairs), strict=True))
        except (ConvgitError, ValueError):  # an object git no longer has: nothing known changed
            found = {}
    rows = []
    for sid, entry, prev, tree in wanted:
        skipped = _skipped(db, sid, entry) | _skipped_tree(db, sid, prev)
        rows += [
            (sid, entry, codec.shown(p)) for p in found.get((prev, tree), []) if p not in skipped
        ]
    db.executemany("insert into files values (?, ?, ?)", rows)
    db.executemany("delete from undiffed where sid = ? and entry = ?", [w[:2] for w in wanted])


def _session(
    db: sqlite3.Connection, location: StoreLocation, sid: str, state: SidecarState
) -> tuple[list[tuple[str, str, str, str]], int]:
    """Update ``snaps`` of session ``sid``: the (sid, entry, prev tree, tree) to diff, and how
    many snapshots were recorded anew."""
    added = _appended(db, location, sid, state)
    if added is None:
        wanted, put = _whole(db, location, sid, state)
        return wanted, put
    wanted = []
    for snap in added:
        prev = _nearest_above(db, sid, snap.entry)
        _put(db, sid, snap, prev)
        if prev is not None:
            wanted.append((sid, snap.entry, prev, snap.tree))
    return wanted, len(added)


def _appended(
    db: sqlite3.Connection, location: StoreLocation, sid: str, state: SidecarState
) -> list[_Snap] | None:
    """The snapshots the sidecar gained since it was read, when that is all it gained and none
    of them has a snapshot below it (then ``state`` moves on); None when it must be read whole."""
    path = location.sidecar_path(sid)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if state.offset <= 0 or (info.st_dev, info.st_ino) != (state.dev, state.ino):
            return None
        if info.st_size < state.offset or _tail(fd, state.offset) != state.tail:
            return None
        data = os.pread(fd, info.st_size - state.offset, state.offset)
    finally:
        os.close(fd)
    end = data.rfind(b"\n")
    if end < 0:
        return []
    records = codec.decode_lines(data[:end].split(b"\n"))
    added: list[_Snap] = []
    last = 0  # the file position (rowid) of the last entry given a snapshot here
    for record in records:
        if type(record) is not dict or record.get("type") in _REWRITES:
            return None
        if record.get("type") != "snapshot":
            continue
        snap = _snap(record)
        at = None if snap is None else _lowest(db, sid, snap.entry)
        if snap is None or at is None or at <= last:
            return None
        added.append(snap)
        last = at
    state.offset += end + 1
    state.tail = _tail_of(path, state.offset)
    return added


def _whole(
    db: sqlite3.Connection, location: StoreLocation, sid: str, state: SidecarState
) -> tuple[list[tuple[str, str, str, str]], int]:
    """Compare the session's snapshots, read whole, with what ``snaps`` holds."""
    path = location.sidecar_path(sid)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        db.execute("delete from snaps where sid = ?", (sid,))
        db.execute("delete from files where sid = ?", (sid,))
        db.execute("delete from undiffed where sid = ?", (sid,))
        state.dev = state.ino = state.offset = 0
        state.tail = b""
        return [], 0
    from convgit.store import load
    from convgit.store.sessions import sidecar_file

    lines, sidecar = load.sidecar(sidecar_file(location, sid))
    read_to = info.st_size - len(lines.torn or b"")
    parents: dict[str, str | None] = {}
    if sidecar.snapshots:  # the whole session's tree, when there are snapshots to place in it
        parents = dict(db.execute("select id, parent from entries where sid = ?", (sid,)))
    snaps = {
        entry: _Snap(entry, s.tree_id, [str(k.get("path")) for k in s.skipped])
        for entry, s in sidecar.snapshots.items()
        if entry in parents
    }
    missing = len(snaps) != len(sidecar.snapshots)  # an entry the file has not shown yet
    had = {
        row[0]: (row[1], row[2])
        for row in db.execute("select entry, tree, prev from snaps where sid = ?", (sid,))
    }
    nearest: dict[str | None, str | None] = {}

    def above(ident: str | None) -> str | None:
        trail = []
        while ident is not None and ident not in nearest:
            if ident in snaps:
                nearest[ident] = snaps[ident].tree
                break
            trail.append(ident)
            ident = parents.get(ident)
            if len(trail) > len(parents):  # a loop of parents: fsck's to report
                break
        found = nearest.get(ident) if ident is not None else None
        for step in trail:
            nearest[step] = found
        return found

    wanted = []
    put = 0
    for entry in set(had) - set(snaps):
        _clear(db, sid, entry)
    for entry, snap in snaps.items():
        prev = above(parents.get(entry))
        if had.get(entry) == (snap.tree, prev):
            continue
        _clear(db, sid, entry)
        _put(db, sid, snap, prev)
        put += 1
        if prev is not None:
            wanted.append((sid, entry, prev, snap.tree))
    state.dev, state.ino = info.st_dev, info.st_ino
    state.offset = -1 if missing else read_to
    state.tail = _tail_of(path, read_to)
    return wanted, put


def _snap(record: dict[str, Any]) -> _Snap | None:
    entry, tree, skipped = record.get("entry"), record.get("tree"), record.get("skipped")
    if type(entry) is not str or type(tree) is not str:
        return None
    paths = [str(s.get("path")) for s in skipped if isinstance(s, dict)] if isinstance(
        skipped, list
    ) else []  # fmt: skip
    return _Snap(entry, tree, paths)


def _lowest(db: sqlite3.Connection, sid: str, entry: str) -> int | None:
    """``entry``'s place in the file (its rowid) when it is in the index with no snapshot yet
    and no entry with a snapshot comes after it in the file (so none can be below it); None
    when it is not so."""
    row = db.execute("select rowid from entries where sid = ? and id = ?", (sid, entry)).fetchone()
    if (
        row is None
        or db.execute("select 1 from snaps where sid = ? and entry = ?", (sid, entry)).fetchone()
    ):
        return None
    later = db.execute(
        "select 1 from snaps where sid = ? and at > ? limit 1", (sid, row[0])
    ).fetchone()
    return None if later is not None else int(row[0])


def _nearest_above(db: sqlite3.Connection, sid: str, entry: str) -> str | None:
    """The tree of the nearest snapshot above ``entry`` on its path (None: none)."""
    seen = 0
    row = db.execute("select parent from entries where sid = ? and id = ?", (sid, entry)).fetchone()
    node = row[0] if row else None
    while node is not None and seen < 1_000_000:
        seen += 1
        snap = db.execute(
            "select tree from snaps where sid = ? and entry = ?", (sid, node)
        ).fetchone()
        if snap is not None:
            return str(snap[0])
        row = db.execute(
            "select parent from entries where sid = ? and id = ?", (sid, node)
        ).fetchone()
        node = row[0] if row else None
    return None


def _put(db: sqlite3.Connection, sid: str, snap: _Snap, prev: str | None) -> None:
    at = db.execute(
        "select rowid from entries where sid = ? and id = ?", (sid, snap.entry)
    ).fetchone()
    db.execute(
        "insert or replace into snaps values (?, ?, ?, ?, ?, ?)",
        (sid, snap.entry, at[0] if at else 0, snap.tree, prev, codec.dumps(snap.skipped)),
    )


def _clear(db: sqlite3.Connection, sid: str, entry: str) -> None:
    db.execute("delete from snaps where sid = ? and entry = ?", (sid, entry))
    db.execute("delete from files where sid = ? and entry = ?", (sid, entry))
    db.execute("delete from undiffed where sid = ? and entry = ?", (sid, entry))


def _skipped(db: sqlite3.Connection, sid: str, entry: str) -> set[str]:
    row = db.execute(
        "select skipped from snaps where sid = ? and entry = ?", (sid, entry)
    ).fetchone()
    return set(codec.decode(row[0])) if row and row[0] else set()


def _skipped_tree(db: sqlite3.Connection, sid: str, tree: str) -> set[str]:
    row = db.execute(
        "select skipped from snaps where sid = ? and tree = ? limit 1", (sid, tree)
    ).fetchone()
    return set(codec.decode(row[0])) if row and row[0] else set()


def _tail(fd: int, offset: int) -> bytes:
    start = max(0, offset - _TAIL)
    return os.pread(fd, offset - start, start)


def _tail_of(path: os.PathLike[str], offset: int) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return b""
    try:
        return _tail(fd, offset)
    finally:
        os.close(fd)
