"""A search over one store's index: the entries whose words hold every one of the strings asked
for (as ``grep -F`` would find them, case aside), or whose label or session name does, kept by
the filters, newest first. What a result shows is read again from the session file.

A string of three characters or more is looked up through the trigram index; a shorter one is
checked against the text itself (so ``-n`` results are read until enough hold it)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convgit.base import codec
from convgit.conversation.shortids import SHORT_ID_LENGTH
from convgit.search import texts
from convgit.store.location import StoreLocation

SNIPPET = 240  # characters of an entry's text a result carries, around its first match
_TRIGRAM = 3


@dataclass(frozen=True)
class Filters:
    """What keeps a result besides its words (None or False: no such filter)."""

    agent: str | None = None
    sessions: tuple[str, ...] | None = None  # session ids
    file: str | None = None  # a path the entry's snapshot changed
    since: str | None = None  # an ISO 8601 time in UTC: entries at or after it
    until: str | None = None  # entries before it
    role: str | None = None  # ``texts.KINDS``
    branch: bool = False  # the active path of each session only

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "sessions": None if self.sessions is None else list(self.sessions),
            "file": self.file,
            "since": self.since,
            "until": self.until,
            "role": self.role,
            "branch": self.branch,
        }


@dataclass
class Result:
    """One entry found."""

    store: Path
    session: str
    entry: str
    ts: str
    kind: str | None
    found_in: str  # "text", "label", "name" (the session's), or "filters" (no words asked for)
    agent: str | None = None
    name: str | None = None  # the session's
    label: str | None = None
    short: str = ""
    short_session: str = ""
    snippet: str = ""
    matches: list[tuple[int, int]] = field(default_factory=list)  # spans of ``snippet``
    files: list[str] | None = None  # what its snapshot changed (None: it has no snapshot)
    show: str = ""  # the command that shows it in full
    order: int = 0  # its rowid: after ``ts``, the newer is the one written later
    at: int = 0  # where its line is in the session file, and its length
    size: int = 0
    text: str | None = None  # its words, once read from the session file
    terms: tuple[str, ...] = ()  # the words asked for

    def to_json(self) -> dict[str, Any]:
        return {
            "store": str(self.store),
            "session": self.session,
            "name": self.name,
            "agent": self.agent,
            "entry": self.entry,
            "short": self.short,
            "ts": self.ts,
            "role": self.kind,
            "found_in": self.found_in,
            "label": self.label,
            "snippet": self.snippet,
            "matches": [list(span) for span in self.matches],
            "files": self.files,
            "show": self.show,
        }


def search(
    db: sqlite3.Connection,
    location: StoreLocation,
    terms: Sequence[str],
    filters: Filters,
    limit: int,
    *,
    store_option: bool = False,
) -> tuple[list[Result], bool]:
    """The newest ``limit`` results in ``location``'s index (``db``, brought up to date), and
    whether there are more. ``store_option``: the commands shown name the store (``--store``)."""
    terms = [t for t in terms if t]
    where, params = _filters(db, filters)
    found: dict[tuple[str, str], Result] = {}
    want = limit + 1
    if terms:
        for result in _by_text(db, location, terms, where, params, want):
            found[(result.session, result.entry)] = result
        for result in _by_label_or_name(db, terms, where, params):
            found.setdefault((result.session, result.entry), result)
    else:
        for result in _rows(db, "select * from entries e", where, params, want, "filters"):
            found[(result.session, result.entry)] = result
    ordered = sorted(found.values(), key=lambda r: (r.ts, r.order), reverse=True)
    shown = ordered[:limit]
    _complete(db, location, shown, terms, store_option)
    return shown, len(ordered) > limit


def _filters(db: sqlite3.Connection, filters: Filters) -> tuple[list[str], list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    if filters.sessions is not None:
        where.append(f"e.sid in ({','.join('?' * len(filters.sessions))})")
        params += filters.sessions
    if filters.agent is not None:
        where.append("e.sid in (select sid from sessions where agent = ?)")
        params.append(filters.agent)
    if filters.role is not None:
        where.append("e.kind = ?")
        params.append(filters.role)
    if filters.since is not None:
        where.append("e.ts >= ?")
        params.append(filters.since)
    if filters.until is not None:
        where.append("e.ts < ?")
        params.append(filters.until)
    if filters.file is not None:
        where.append(
            "exists (select 1 from files f where f.path = ? and f.sid = e.sid and f.entry = e.id)"
        )
        params.append(filters.file)
    if filters.branch:
        _active_paths(db, filters.sessions)
        where.append("e.rowid in (select at from temp.active)")
    return where, params


def _active_paths(db: sqlite3.Connection, sessions: Sequence[str] | None) -> None:
    """``temp.active``: the rowids of the entries on each session's active path."""
    db.execute("create temp table if not exists active(at integer primary key)")
    db.execute("delete from temp.active")
    chosen = "" if sessions is None else f" where sid in ({','.join('?' * len(sessions))})"
    db.execute(
        "insert or ignore into temp.active"
        " with recursive up(sid, id, at) as ("
        "  select s.sid, e.parent, e.rowid from sessions s"
        "  join entries e on e.sid = s.sid and e.id = s.leaf"
        + chosen.replace("sid", "s.sid")
        + "  union all select up.sid, e.parent, e.rowid from up"
        "  join entries e on e.sid = up.sid and e.id = up.id"
        " ) select at from up",
        tuple(sessions or ()),
    )


def _by_text(
    db: sqlite3.Connection,
    location: StoreLocation,
    terms: Sequence[str],
    where: list[str],
    params: list[Any],
    want: int,
) -> Iterator[Result]:
    """Entries whose text holds every term, newest first, ``want`` of them at most."""
    long = [t for t in terms if len(t) >= _TRIGRAM]
    short = [t for t in terms if len(t) < _TRIGRAM]
    if long:
        match = " AND ".join('"' + t.replace('"', '""') + '"' for t in long)
        sql = "select e.* from words join entries e on e.rowid = words.rowid"
        rows = _rows(db, sql, ["words match ?", *where], [match, *params], None, "text")
    else:
        rows = _rows(db, "select * from entries e", where, params, None, "text")
    if not short:
        yield from _take(rows, want)
        return
    lowered = [t.lower() for t in short]
    kept = (r for r in rows if all(t in _text(location, r).lower() for t in lowered))
    yield from _take(kept, want)


def _take(results: Iterator[Result], want: int) -> Iterator[Result]:
    for number, result in enumerate(results):
        if number >= want:
            return
        yield result


def _rows(
    db: sqlite3.Connection,
    sql: str,
    where: list[str],
    params: list[Any],
    want: int | None,
    found_in: str,
) -> Iterator[Result]:
    if where:
        sql += " where " + " and ".join(where)
    sql += " order by e.ts desc, e.rowid desc"
    if want is not None:
        sql += f" limit {int(want)}"
    for row in db.execute(sql, params):
        rowid, sid, ident, _parent, ts, kind, at, size = row
        yield Result(Path(), sid, ident, ts, kind, found_in, order=rowid, at=at, size=size)


def _by_label_or_name(
    db: sqlite3.Connection, terms: Sequence[str], where: list[str], params: list[Any]
) -> Iterator[Result]:
    """Entries whose label holds every term, and the active leaf of each session whose name
    does, if the filters keep them."""
    lowered = [t.lower() for t in terms]
    labelled = [
        (sid, target)
        for sid, target, label in db.execute("select sid, target, label from labels")
        if all(t in label.lower() for t in lowered)
    ]
    named = [
        (sid, leaf)
        for sid, leaf, name in db.execute("select sid, leaf, name from sessions")
        if name and leaf and all(t in name.lower() for t in lowered)
    ]
    for pairs, why in ((labelled, "label"), (named, "name")):
        for sid, ident in pairs:
            extra = ["e.sid = ?", "e.id = ?", *where]
            yield from _rows(db, "select * from entries e", extra, [sid, ident, *params], 1, why)


def _complete(
    db: sqlite3.Connection,
    location: StoreLocation,
    results: list[Result],
    terms: Sequence[str],
    store_option: bool,
) -> None:
    """Give each result what it shows: its session's agent and name, its label, short ids,
    its text around the first match (read from the session file), its files, its command."""
    sessions = {
        sid: (agent, name)
        for sid, agent, name in db.execute("select sid, agent, name from sessions")
    }
    every_sid = sorted(sessions)
    for result in results:
        result.store = location.root
        result.terms = tuple(terms)
        result.agent, result.name = sessions.get(result.session, (None, None))
        row = db.execute(
            "select label from labels where sid = ? and target = ?", (result.session, result.entry)
        ).fetchone()
        result.label = row[0] if row else None
        result.short = _short(db, result.session, result.entry)
        result.short_session = _short_among(every_sid, result.session)
        result.snippet, result.matches = _snippet(_text(location, result), terms)
        has = db.execute(
            "select 1 from snaps where sid = ? and entry = ?", (result.session, result.entry)
        ).fetchone()
        result.files = (
            [
                p
                for (p,) in db.execute(
                    "select path from files where sid = ? and entry = ? order by path",
                    (result.session, result.entry),
                )
            ]
            if has
            else None
        )
        store = f"--store {_quoted(str(location.root))} " if store_option else ""
        result.show = f"convgit {store}-s {result.short_session} show {result.short}"


def _text(location: StoreLocation, result: Result) -> str:
    """The searched text of ``result``'s entry, read from its line in the session file."""
    if result.text is None:
        result.text = ""
        try:
            fd = os.open(location.session_path(result.session), os.O_RDONLY)
        except OSError:
            return result.text
        try:
            line = os.pread(fd, result.size, result.at)
        finally:
            os.close(fd)
        try:
            record = codec.decode(line)
        except ValueError:
            record = None
        if type(record) is dict and record.get("id") == result.entry:
            result.text = texts.text(record)
    return result.text


def _snippet(text: str, terms: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """About ``SNIPPET`` characters of ``text`` around the first match, on one line, and where
    each match is in it."""
    flat = " ".join(text.split())
    lowered = flat.lower()
    first = min((i for t in terms if (i := lowered.find(t.lower())) >= 0), default=0)
    start = max(0, first - SNIPPET // 4)
    end = min(len(flat), start + SNIPPET)
    start = max(0, end - SNIPPET)
    piece = flat[start:end]
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(flat) else ""
    shown = prefix + piece + suffix
    spans = []
    low = shown.lower()
    for term in terms:
        wanted = " ".join(term.split()).lower()
        if not wanted:
            continue
        at = low.find(wanted)
        while at >= 0:
            spans.append((at, at + len(wanted)))
            at = low.find(wanted, at + len(wanted))
    return shown, sorted(spans)


def _short(db: sqlite3.Connection, sid: str, ident: str) -> str:
    """``ident`` cut to the short id of its session (``conversation.shortids``)."""
    length = SHORT_ID_LENGTH
    while length < len(ident):
        prefix = ident[:length]
        others = db.execute(
            "select count(*) from entries where sid = ? and id >= ? and id < ? and id != ?",
            (sid, prefix, prefix + "\U0010ffff", ident),
        ).fetchone()[0]
        if not others:
            break
        length += 1
    return ident[:length]


def _short_among(ids: list[str], ident: str) -> str:
    length = SHORT_ID_LENGTH
    while length < len(ident) and any(o != ident and o.startswith(ident[:length]) for o in ids):
        length += 1
    return ident[:length]


def _quoted(text: str) -> str:
    import shlex

    return shlex.quote(text)
