"""A store's search index, ``<store>/search.sqlite``: SQLite's full-text search (FTS5, through
Python's own ``sqlite3``) with the trigram tokenizer, so that any run of three characters or more
is found, as ``grep -F`` finds it (case aside).

The index is never the truth. It is brought up to date from the session files and their snapshot
records each time it is opened (``fresh``), rebuilt whole when it is missing, damaged, of
another version or asked to (``--reindex``), and deleted by whatever rewrites a session file
(``forget``: redaction, so that no redacted text outlives the rewrite here):

* ``sessions``: per session file, its identity (device, inode), how far it was read and the
  bytes just before that point (so an append is read from there, and a file replaced, cut
  short or rewritten is read again whole), its agent, name and active leaf; the same for its
  sidecar (``convgit.search.files``).
* ``entries``: per entry, where its line is in the file (``at``, ``size``): what a result shows
  is read again from the session file, never from the index.
* ``words``: the entries' text (``convgit.search.texts``), contentless: only the trigrams are
  kept. Rows of entries that went (a session removed or read again) stay as orphans that no
  entry joins, until they outnumber the entries and the next opening rebuilds the index.
* ``labels``, and ``snaps`` and ``files`` (``convgit.search.files``).

Rowids are never reused (``next`` in ``meta``): an orphan's trigrams can never match a new entry.
Writers hold the store's ``search`` lock; a rebuild is written to a new file and renamed over the
old one, so a reader sees the old index or the new one.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any

from convgit.base import codec, locks
from convgit.base.errors import DENIED, ConvgitError, CorruptStoreError, StoreLockedError, denied
from convgit.search import files, texts
from convgit.store.location import StoreLocation

VERSION = 2  # 2: a tool call's name and arguments are separate strings
NAME = "search.sqlite"
LOCK = "search"
LOCK_TIMEOUT = 120.0
_TAIL = 64  # bytes before the point read to, compared to tell an append from a rewrite
_CHUNK = 16 << 20  # bytes of a session file read and indexed at a time
_BOM = b"\xef\xbb\xbf"
_META = ("session", "leaf", "label", "name", "native", "import", "agent_session", "redaction")

SCHEMA = """
create table meta(key text primary key, value) without rowid;
create table sessions(
    sid text primary key, dev int, ino int, offset int, tail blob,
    agent text, name text, created text, leaf text, entries int,
    sc_dev int, sc_ino int, sc_offset int, sc_tail blob
) without rowid;
create table entries(
    rowid integer primary key, sid text not null, id text not null, parent text,
    ts text not null, kind text, at int not null, size int not null
);
create unique index entries_id on entries(sid, id);
create index entries_ts on entries(ts);
create table labels(sid text, target text, label text, primary key(sid, target)) without rowid;
create table snaps(
    sid text, entry text, at int, tree text, prev text, skipped text, primary key(sid, entry)
) without rowid;
create index snaps_at on snaps(sid, at);
create table files(sid text, entry text, path text);
create index files_path on files(path, sid);
create index files_entry on files(sid, entry);
create virtual table words using fts5(body, tokenize='trigram', content='');
"""


def path(location: StoreLocation) -> Path:
    return location.root / NAME


@contextmanager
def writing(location: StoreLocation) -> Iterator[None]:
    """Hold the store's search lock (one writer of the index at a time)."""
    try:
        with locks.held(location.lock_path(LOCK), LOCK_TIMEOUT):
            yield
    except locks.LockTimeout:
        raise StoreLockedError(
            f"Another convgit process has been updating the search index for over"
            f" {locks.limit(LOCK_TIMEOUT):.0f} s.",
            "a convgit search or --reindex is still running",
        ) from None


def forget(location: StoreLocation) -> None:
    """Delete the index (it holds the words of the sessions as they were): the next search
    rebuilds it from the files. Nothing is lost, the index being no record of its own."""
    with writing(location):
        _remove(path(location))


def _remove(file: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm", ".new", ".new-journal"):
        Path(f"{file}{suffix}").unlink(missing_ok=True)


@dataclass
class Freshened:
    """What bringing the index up to date did."""

    rebuilt: bool = False
    why: str | None = None  # why it was rebuilt: "missing", "damaged", "asked", ...
    sessions: int = 0  # sessions read (from where they were, or whole)
    entries: int = 0  # entries added
    snapshots: int = 0  # snapshots recorded anew (their files read from git)


def fresh(
    location: StoreLocation, *, reindex: bool = False
) -> tuple[sqlite3.Connection, Freshened]:
    """The index of ``location``, up to date with its files: rebuilt when missing, damaged, of
    another version, full of orphans or ``reindex``; else every session and sidecar that
    changed is read again (from where it was read to, or whole)."""
    file = path(location)
    try:
        return _fresh(location, file, reindex)
    except OSError as exc:
        if exc.errno not in DENIED:
            raise
    except sqlite3.Error as exc:  # a full disk, a read-only folder: SQLite's own words
        if not any(word in str(exc) for word in ("readonly", "read-only", "unable to open")):
            raise ConvgitError(
                f"The search index {file} cannot be written ({exc}); the sessions are untouched.",
                "check the store's folder (space, permissions); any search rebuilds the index",
            ) from None
    return _in_memory(location)


def _in_memory(location: StoreLocation) -> tuple[sqlite3.Connection, Freshened]:
    """A store convgit may not write to (a read-only folder): the index built in memory from
    its files, for this search alone."""
    done = Freshened(rebuilt=True, why="read-only")
    db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    db.executescript(SCHEMA)
    db.execute("insert into meta values ('version', ?)", (VERSION,))
    _Updater(db, location, done).run()
    return db, done


def _fresh(
    location: StoreLocation, file: Path, reindex: bool
) -> tuple[sqlite3.Connection, Freshened]:
    with writing(location):
        done = Freshened()
        db = None if reindex else _open(file)
        if db is None:
            done.why = "asked" if reindex else ("missing" if not file.exists() else "damaged")
        else:
            try:
                if _orphans(db):
                    done.why = "orphans"
                else:
                    _Updater(db, location, done).run()
            except sqlite3.DatabaseError:
                done.why = "damaged"
            if done.why is not None:
                db.close()
                db = None
        if db is None:
            done = Freshened(rebuilt=True, why=done.why)
            db = _rebuild(location, file, done)
    return db, done


def _open(file: Path) -> sqlite3.Connection | None:
    """The index at ``file`` when it is whole and of this version; None when it is not."""
    try:
        size = file.stat().st_size
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _unreadable(file, exc) from None
    try:
        db = sqlite3.connect(file, isolation_level=None, check_same_thread=False)
    except sqlite3.Error:
        return None
    try:
        pages = db.execute("pragma page_count").fetchone()[0]
        page = db.execute("pragma page_size").fetchone()[0]
        wal = Path(f"{file}-wal")
        whole = size == pages * page or (wal.exists() and wal.stat().st_size > 0)
        row = (
            db.execute("select value from meta where key = 'version'").fetchone() if whole else None
        )
        if row is not None and row[0] == VERSION:
            _settings(db)
            return db
    except sqlite3.DatabaseError:
        pass
    db.close()
    return None


def _unreadable(file: Path, exc: OSError) -> Exception:
    msg = f"The search index {file} cannot be read ({exc.strerror or exc})."
    return denied(exc, msg, file) or CorruptStoreError(msg, "convgit search --reindex")


def _settings(db: sqlite3.Connection) -> None:
    db.execute("pragma journal_mode = wal")
    db.execute("pragma synchronous = normal")  # a crash loses at most the last update, whole
    db.execute("pragma cache_size = -65536")


def _orphans(db: sqlite3.Connection) -> bool:
    """Whether the words of entries that went outnumber those of the entries there are."""
    orphans = _meta(db, "orphans", 0)
    return orphans > 1000 and orphans > db.execute("select count(*) from entries").fetchone()[0]


def _meta(db: sqlite3.Connection, key: str, default: int) -> int:
    row = db.execute("select value from meta where key = ?", (key,)).fetchone()
    return int(row[0]) if row is not None else default


def _rebuild(location: StoreLocation, file: Path, done: Freshened) -> sqlite3.Connection:
    """Write a new index of every session in ``file.new``, then rename it over ``file``."""
    new = Path(f"{file}.new")
    _remove(new)
    try:
        location.root.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(new, isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        raise CorruptStoreError(f"The search index cannot be written at {new} ({exc}).") from None
    db.execute("pragma page_size = 16384")  # large pages for the trigram index's large pages
    db.execute("pragma journal_mode = off")  # a new file: a crash leaves only it to delete
    db.execute("pragma synchronous = off")
    db.execute("pragma cache_size = -262144")
    db.executescript(SCHEMA)
    db.execute("insert into meta values ('version', ?)", (VERSION,))
    # the trigram index writes many long lists: in pages of 16,000 bytes (about a third less
    # time than FTS5's 1,000 at a rebuild), not merged while the rebuild runs
    db.execute("insert into words(words, rank) values ('pgsz', 16000)")
    db.execute("insert into words(words, rank) values ('automerge', 0)")
    _Updater(db, location, done).run()
    db.execute("insert into words(words, rank) values ('automerge', 4)")
    db.close()
    os.replace(new, file)
    Path(f"{file}-wal").unlink(missing_ok=True)
    Path(f"{file}-shm").unlink(missing_ok=True)
    opened = _open(file)
    if opened is None:
        raise CorruptStoreError(f"The search index just written at {file} cannot be read.")
    return opened


@dataclass
class _Session:
    """A session's row of ``sessions`` as it is being brought up to date."""

    sid: str
    dev: int = 0
    ino: int = 0
    offset: int = 0
    tail: bytes = b""
    agent: str | None = None
    name: str | None = None
    created: str | None = None
    leaf: str | None = None
    entries: int = 0
    sidecar: files.SidecarState = field(default_factory=files.SidecarState)

    def restart(self, dev: int, ino: int) -> None:
        """Read the file (device ``dev``, inode ``ino``) from its start, and its sidecar."""
        self.dev, self.ino, self.offset, self.tail = dev, ino, 0, b""
        self.agent = self.name = self.created = self.leaf = None
        self.entries = 0
        self.sidecar = files.SidecarState()

    def row(self) -> tuple[Any, ...]:
        sc = self.sidecar
        return (
            self.sid, self.dev, self.ino, self.offset, self.tail, self.agent, self.name,
            self.created, self.leaf, self.entries, sc.dev, sc.ino, sc.offset, sc.tail,
        )  # fmt: skip


class _Updater:
    """One pass over the store's sessions, in one transaction."""

    def __init__(self, db: sqlite3.Connection, location: StoreLocation, done: Freshened) -> None:
        self.db, self.location, self.done = db, location, done
        self.next = 1
        self.orphans = 0

    def run(self) -> None:
        db = self.db
        db.execute("begin immediate")
        try:
            self.next = _meta(db, "next", 1)
            self.orphans = _meta(db, "orphans", 0)
            rows = {row[0]: row for row in db.execute("select * from sessions")}
            present = set(self.location.session_ids())
            for sid in sorted(set(rows) - present):
                self._drop(sid)
            changed_files = []
            for sid in sorted(present):
                state = _loaded(rows[sid]) if sid in rows else _Session(sid)
                if self._session(state, sid in rows):
                    self.done.sessions += 1
                if files.changed(self.location, state.sidecar, sid):
                    changed_files.append(state)
                elif state.row() != rows.get(sid):
                    self._save(state)
            if changed_files:
                self.done.snapshots += files.update(db, self.location, changed_files)
                for state in changed_files:
                    self._save(state)
            if (self.next, self.orphans) != (_meta(db, "next", 1), _meta(db, "orphans", 0)):
                db.execute("insert or replace into meta values ('next', ?)", (self.next,))
                db.execute("insert or replace into meta values ('orphans', ?)", (self.orphans,))
            db.execute("commit")
        except BaseException:
            with suppress(sqlite3.Error):
                db.execute("rollback")
            raise

    def _save(self, state: _Session) -> None:
        self.db.execute(
            "insert or replace into sessions values (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", state.row()
        )

    def _drop(self, sid: str, *, keep_row: bool = False) -> None:
        """Forget what the index has of session ``sid`` (its words become orphans)."""
        db = self.db
        gone = db.execute("delete from entries where sid = ?", (sid,)).rowcount
        self.orphans += max(gone, 0)
        db.execute("delete from labels where sid = ?", (sid,))
        db.execute("delete from files where sid = ?", (sid,))
        db.execute("delete from snaps where sid = ?", (sid,))
        if not keep_row:
            db.execute("delete from sessions where sid = ?", (sid,))

    def _session(self, state: _Session, known: bool) -> bool:
        """Read what session ``state.sid``'s file gained (all of it, when it is not the file
        read before, or was cut short or rewritten); whether anything was read."""
        file = self.location.session_path(state.sid)
        try:
            fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise _unreadable(file, exc) from None
        try:
            info = os.fstat(fd)
            same = known and (info.st_dev, info.st_ino) == (state.dev, state.ino)
            if same and info.st_size == state.offset:
                return False
            grown = same and info.st_size > state.offset
            if not (grown and _tail(fd, state.offset) == state.tail):
                if known:
                    self._drop(state.sid, keep_row=True)
                state.restart(info.st_dev, info.st_ino)
            self._read(fd, state, info.st_size)
        finally:
            os.close(fd)
        return True

    def _read(self, fd: int, state: _Session, size: int) -> None:
        """Index the lines from ``state.offset`` to the last whole line before ``size``."""
        at = state.offset
        while at < size:
            data = os.pread(fd, min(_CHUNK, size - at), at)
            if not data:
                break
            end = data.rfind(b"\n")
            if end < 0:
                if at + len(data) < size:  # a line longer than a chunk: read it whole
                    data = os.pread(fd, size - at, at)
                    end = data.rfind(b"\n")
                if end < 0:
                    end = self._unterminated(data, at, size, state)
                    if end < 0:
                        break
            self._lines(data[: end + 1], at, state)
            at += end + 1
        state.offset = at
        state.tail = _tail(fd, at)

    def _unterminated(self, data: bytes, at: int, size: int, state: _Session) -> int:
        """A last line with no newline: indexed when it is a whole record (the next writer
        adds the newline), left for later when it is torn."""
        if at + len(data) != size:
            return -1
        try:
            codec.decode(data)
        except ValueError:
            return -1
        self._lines(data + b"\n", at, state)
        state.offset = size
        return len(data) - 1

    def _lines(self, data: bytes, base: int, state: _Session) -> None:
        """Index the whole lines of ``data``, which starts at byte ``base`` of the file."""
        raw = data.split(b"\n")
        raw.pop()  # after the last newline: nothing
        # where each line starts: the lengths before it, and a newline after each
        sums = accumulate(map(len, raw), initial=0)
        starts = [base + before + n for n, before in zip(range(len(raw)), sums, strict=False)]
        if base == 0 and raw and raw[0].startswith(_BOM):
            raw[0] = raw[0][3:]
            starts[0] += 3
        records = codec.decode_lines(raw)
        entries: list[tuple[Any, ...]] = []
        words: list[tuple[int, str]] = []
        sid = state.sid
        ids: set[str] = set()
        for start, line, record in zip(starts, raw, records, strict=True):
            if type(record) is not dict:
                continue
            kind = record.get("type")
            if kind in _META or "parentId" not in record:
                self._meta(state, kind, record, start)
                continue
            ident = record.get("id")
            if type(ident) is not str or ident in ids:
                continue
            ids.add(ident)
            parent = record.get("parentId")
            ts = record.get("ts")
            rowid = self.next
            self.next += 1
            kind, body = texts.read(record)
            entries.append(
                (
                    rowid, sid, ident, parent if type(parent) is str else None,
                    ts if type(ts) is str else "", kind, start, len(line),
                )
            )  # fmt: skip
            if body:
                words.append((rowid, body))
            state.leaf = ident
        if not entries:
            return
        db = self.db
        before = db.total_changes
        db.executemany("insert or ignore into entries values (?,?,?,?,?,?,?,?)", entries)
        if db.total_changes - before != len(entries):  # an id the file repeats: its first stays
            kept = {r for r, in db.execute(
                f"select rowid from entries where rowid >= {entries[0][0]}")}  # fmt: skip
            words = [w for w in words if w[0] in kept]
        db.executemany("insert into words(rowid, body) values (?, ?)", words)
        state.entries += len(entries)
        self.done.entries += len(entries)

    def _meta(self, state: _Session, kind: Any, record: dict[str, Any], start: int) -> None:
        if kind == "session" and start <= 3:
            agent, created = record.get("agent"), record.get("created")
            state.agent = agent if type(agent) is str else None
            state.created = created if type(created) is str else None
        elif kind == "leaf" and type(record.get("target")) is str:
            state.leaf = record["target"]
        elif kind == "name" and type(record.get("name")) is str:
            state.name = record["name"]
        elif kind == "label" and type(record.get("target")) is str:
            label = record.get("label")
            if type(label) is str:
                self.db.execute(
                    "insert or replace into labels values (?, ?, ?)",
                    (state.sid, record["target"], label),
                )
            else:
                self.db.execute(
                    "delete from labels where sid = ? and target = ?", (state.sid, record["target"])
                )


def _tail(fd: int, offset: int) -> bytes:
    start = max(0, offset - _TAIL)
    return os.pread(fd, offset - start, start)


def _loaded(row: tuple[Any, ...]) -> _Session:
    sid, dev, ino, offset, tail, agent, name, created, leaf, entries = row[:10]
    sidecar = files.SidecarState(row[10] or 0, row[11] or 0, row[12] or 0, row[13] or b"")
    return _Session(sid, dev, ino, offset, tail, agent, name, created, leaf, entries, sidecar)
