"""Bringing an agent's own session file into a convgit session: the contract every importer
follows (``claude_code``, ``pi``, ``codex``, ``gemini``…) and the pieces they share.

An importer is pure: the bytes of the agent's file from a ``Cursor``, and what the session
already holds (``Known``), in; a ``Batch`` of convgit records out. It opens no file and writes
nothing; ``importing.import_file`` reads the file and appends the batch under the session's
lock.

What every importer promises, and what here helps it keep the promise:

* **Ids.** An entry made from a native record with an id of its own gets ``entry_id(that id)``
  (the id itself when it is a safe reference: lowercase letters, digits, ``-``, ``_``; a
  digest otherwise). Ids that are unique per file only are namespaced with ``scope``. A record
  without an id gets ``derived_id(record)``: its place in the file and a digest of its text, so
  reading the same file again finds the same id and a rewritten line does not pass for the old.
* **Nothing lost.** Every record the agent wrote is kept with its exact text: on the entry made
  from it (``native_field``, stored as the entry's ``native`` field), or, when it becomes no
  entry, as a ``native`` meta record (``kept_record``: not part of any path, ignored by replay).
  An entry made from part of a record (one of several tool results on one line, a message
  mirrored inside another record) names the key of the record that holds the text (``in``).
* **Skipping what is there.** ``fresh`` drops records whose id (entries) or key (kept records)
  the session already has; a record that comes back with other text is kept beside the first
  (a ``native`` record at the same entry), never over it. An importer emits every record it
  reads, known or not, so that its decisions (parents, the leaf) do not depend on where the
  previous import stopped.
* **Incremental.** ``read_jsonl`` takes whole records only: a last line still being written
  is left for the next import. An importer that only appends (JSONL) is called with the bytes
  after ``cursor.offset`` and the state it returned last time (``Batch.cursor``), and must
  produce what one import of the whole file would have produced. One that rewrites its file
  (``appends=False``) is always called with the whole file and a fresh cursor.
* **Reported, never dropped.** ``ImportReport.keep`` counts, by kind and line, every record kept
  without being interpreted; ``ImportReport.note`` lists every tolerated problem (a torn line, a
  missing parent, a repeated id with other content, a line that is not JSON) with what was
  done about it.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from convgit import schema
from convgit.base import codec
from convgit.conversation import refs

_RESERVED = refs.RESERVED_IDS | {refs.LEAF_ALIAS.lower()}  # and `head`, HEAD in any case
CHECK_BYTES = 256  # the bytes at the start and before a saved offset that must not change
_DECODER = json.JSONDecoder()
_TORN = ("is not JSON", "is not UTF-8")  # what a last line cut mid-write looks like
_TOO_DEEP = f"is nested deeper than {codec.MAX_DEPTH} levels"


# -- reading -----------------------------------------------------------------------------------


class Record(NamedTuple):
    """One native record as found: a JSONL line, one of several objects on a line, or one
    object of a JSON document. ``value`` is None when the text is not a JSON object. A named
    tuple: made once per line, and a frozen dataclass costs several times more to make."""

    line: int  # 1-based line of the file where it starts
    index: int  # type: ignore[assignment]  # the object of that line (0: the first)
    raw: bytes  # its exact bytes
    value: dict[str, Any] | None
    problem: str | None = None  # why value is None

    @property
    def text(self) -> str | None:
        """The exact text, or None when the bytes are not UTF-8."""
        try:
            return self.raw.decode("utf-8")
        except UnicodeDecodeError:
            return None


@dataclass(frozen=True)
class Cursor:
    """Where an import stopped: ``offset`` bytes of the file taken (whole records only),
    ``line`` newlines before it, ``index`` objects of the line at the offset already taken
    (a line whose last write had no newline yet), and the importer's own ``state`` (JSON)."""

    offset: int = 0
    line: int = 0
    index: int = 0
    state: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Read:
    """What ``read_jsonl`` found: the records, where reading stopped, and a torn tail."""

    records: list[Record]
    offset: int  # absolute offset after the last record taken
    line: int
    index: int
    torn: int | None = None  # line number of a last line left for later (no newline, not JSON)


def read_jsonl(data: bytes, cursor: Cursor = Cursor()) -> Read:
    """The records of JSONL bytes that start at ``cursor.offset`` of the file. Several objects
    on one line are several records; a line that is not JSON (or not UTF-8) is one record with
    a ``problem``; blank lines are skipped and a CR before a newline is part of the line end; a
    last line without a newline is taken when it is whole JSON and otherwise left (``torn``)
    for the next read, which starts where this one stopped."""
    pieces = data.split(b"\n")
    tail = pieces.pop()  # after the last newline
    if b"\r" in data:  # a CRLF line end: the CR is no part of the record
        pieces = [p[:-1] if p.endswith(b"\r") else p for p in pieces]
    records: list[Record] = []
    line, index = cursor.line, cursor.index
    for piece, value in zip(pieces, codec.decode_lines(pieces), strict=True):
        line += 1
        if type(value) is dict:
            records.append(Record(line, index, piece, value))
        elif not isinstance(value, codec.Unparsable):
            records.append(Record(line, index, piece, None, "is not a JSON object"))
        elif piece.strip():
            records.extend(_line_records(piece, line, index))
        index = 0
    end = cursor.offset + len(data)
    piece = tail[:-1] if tail.endswith(b"\r") else tail
    if piece.strip():
        found = _line_records(piece, line + 1, index)
        if any(r.problem in _TORN for r in found):
            return Read(records, end - len(tail), line, index, torn=line + 1)
        records.extend(found)
        index += len(found)
    return Read(records, end, line, index)


def _line_records(piece: bytes, line: int, index: int) -> list[Record]:
    """The records of one line, read on its own (a line that is not one whole object)."""
    try:
        value = codec.decode(piece)
    except codec.TooDeepError:
        return [Record(line, index, piece, None, _TOO_DEEP)]
    except ValueError:
        return _objects(piece, line, index)
    return [_record(line, index, piece, value)]


def _record(line: int, index: int, raw: bytes, value: Any) -> Record:
    if type(value) is dict:
        return Record(line, index, raw, value)
    return Record(line, index, raw, None, "is not a JSON object")


def _objects(piece: bytes, line: int, index: int) -> list[Record]:
    """The objects of a line orjson refused: several in a row, or text that is not JSON."""
    try:
        text = piece.decode("utf-8")
    except UnicodeDecodeError:
        return [Record(line, index, piece, None, "is not UTF-8")]
    found: list[Record] = []
    at, size = 0, len(text)
    while at < size:
        while at < size and text[at] in " \t\r":
            at += 1
        if at == size:
            break
        try:
            _, end = _DECODER.raw_decode(text, at)
        except (ValueError, RecursionError):
            found.append(Record(line, index + len(found), text[at:].encode(), None, "is not JSON"))
            break
        raw = text[at:end].encode()
        try:  # the same judge as every other line (NaN, depth)
            found.append(_record(line, index + len(found), raw, codec.decode(raw)))
        except codec.TooDeepError:
            found.append(Record(line, index + len(found), raw, None, _TOO_DEEP))
        except ValueError:
            found.append(Record(line, index + len(found), raw, None, "is not JSON"))
        at = end
    return found


def read_document(data: bytes, key: str) -> tuple[dict[str, Any], list[Record]]:
    """A JSON document holding a list of records under ``key`` (Gemini CLI's session file):
    the document's value, and each element of that list as a record with its exact text.
    Raises ValueError when the document is not a JSON object."""
    text = data.decode("utf-8")
    value, _ = _DECODER.raw_decode(text, _skip(text, 0))
    if type(value) is not dict:
        raise ValueError("the document is not a JSON object")
    items: list[Record] = []
    at = _skip(text, 0) + 1
    while True:
        at = _skip(text, at)
        if text[at] == "}":
            return value, items
        name, at = _DECODER.raw_decode(text, at)
        at = _skip(text, _skip(text, at) + 1)  # past ':'
        if name == key and text[at] == "[":
            at = _skip(text, at + 1)
            while text[at] != "]":
                element, end = _DECODER.raw_decode(text, at)
                raw = text[at:end].encode()
                items.append(_record(text.count("\n", 0, at) + 1, len(items), raw, element))
                at = _skip(text, end)
                if text[at] == ",":
                    at = _skip(text, at + 1)
            at += 1
        else:
            _, at = _DECODER.raw_decode(text, at)
        at = _skip(text, at)
        if text[at] == ",":
            at += 1


def _skip(text: str, at: int) -> int:
    while text[at] in " \t\r\n":
        at += 1
    return at


# -- ids ---------------------------------------------------------------------------------------


def entry_id(native: str, scope: str | None = None) -> str:
    """The entry id for an agent's own id: the id itself when it is a safe reference, else a
    digest of it; with ``scope`` (for ids unique per file only), suffixed ``-<scope>``."""
    ident = native if _is_safe(native) else "n" + _digest(native, 20)
    if scope is None:
        return ident
    suffixed = f"{ident}-{scope}"
    return suffixed if _is_safe(suffixed) else "n" + _digest(suffixed, 20)


def part_id(ident: str, part: int) -> str:
    """The id of the ``part``-th entry (from 2) made from one record whose first entry is
    ``ident``."""
    return ident if part < 2 else f"{ident}_{part}"


def derived_id(record: Record, prefix: str = "l") -> str:
    """A deterministic id for a record without one: where it is (line, object) and a digest of
    its text, so the same record in a re-read file gets the same id."""
    where = f"{record.line}" if record.index == 0 else f"{record.line}x{record.index}"
    return f"{prefix}{where}-{_digest(record.raw, 8)}"


def _is_safe(ident: str) -> bool:
    return refs.SAFE_ID.fullmatch(ident) is not None and ident not in _RESERVED


def _digest(value: str | bytes, size: int) -> str:
    raw = value.encode() if isinstance(value, str) else value
    return hashlib.sha1(raw).hexdigest()[:size]


# -- keeping the originals ---------------------------------------------------------------------


def native_field(record: Record, key: str, **more: Any) -> dict[str, Any]:
    """The ``native`` field of an entry made from ``record``: its key and exact text."""
    found: dict[str, Any] = {"key": key}
    _put_text(found, record.raw)
    found.update(more)
    return found


def kept_record(record: Record, key: str, at: str | None, ts: str) -> dict[str, Any]:
    """A ``native`` meta record: ``record`` kept with its exact text, standing at entry ``at``
    (where a record that hangs below it belongs; None above every entry)."""
    found: dict[str, Any] = {"type": "native", "key": key, "at": at}
    _put_text(found, record.raw)
    found["ts"] = ts
    return found


def _put_text(into: dict[str, Any], raw: bytes) -> None:
    try:
        into["text"] = raw.decode("utf-8")
    except UnicodeDecodeError:
        into["base64"] = base64.b64encode(raw).decode()


def kept_text(found: Mapping[str, Any]) -> bytes | None:
    """The exact bytes an entry's ``native`` field or a ``native`` record keeps (None: it
    keeps them in another record, named by ``in``)."""
    if isinstance(found.get("text"), str):
        return str(found["text"]).encode()
    if isinstance(found.get("base64"), str):
        return base64.b64decode(str(found["base64"]))
    return None


# -- what the session has ------------------------------------------------------------------------


@dataclass(frozen=True)
class Known:
    """What the session already holds, read-only: its entries by id (each with the ``native``
    field it was imported with), its kept records by key, the agent's session id of the file
    being read (from the session's header; None for a new session), and the other agent
    sessions the session mirrors too (resumed or forked from it: their lines belong here)."""

    entries: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    kept: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    agent_session: str | None = None
    agent_sessions: frozenset[str] = frozenset()

    def anchor(self, key: str) -> str | None:
        """The entry a kept record stands at, if it still exists."""
        found = self.kept.get(key)
        at = None if found is None else found.get("at")
        return at if isinstance(at, str) and at in self.entries else None


def fresh(records: Iterable[dict[str, Any]], known: Known) -> tuple[list[dict[str, Any]], int]:
    """The records the session does not have yet, and how many it had. A known entry or kept
    record whose text differs is kept once more, beside the one the session has."""
    out: list[dict[str, Any]] = []
    skipped = 0
    for record in records:
        kind = record.get("type")
        if kind == "native":
            had = known.kept.get(record["key"])
            at = record["at"]
        elif "id" in record and "parentId" in record:
            had = known.entries.get(record["id"])
            had = None if had is None else had.get("native", {})
            at = record["id"]
        else:
            out.append(record)
            continue
        if had is None:
            out.append(record)
            continue
        skipped += 1
        new_native = record if kind == "native" else record.get("native", {})
        theirs, ours = kept_text(new_native), kept_text(had)
        if theirs is not None and theirs != ours:
            key = alternate_key(new_native["key"], theirs)
            if key not in known.kept:
                alternate = {"type": "native", "key": key, "at": at, **_text_of(new_native)}
                alternate["ts"] = record["ts"]
                out.append(alternate)
    return out, skipped


def alternate_key(key: str, raw: bytes) -> str:
    """The key a record is kept under when the record kept as ``key`` came back with the
    text ``raw``: the same whoever meets it again, so it is kept once."""
    return f"{key}@{_digest(raw, 8)}"


def _text_of(found: Mapping[str, Any]) -> dict[str, Any]:
    return {k: found[k] for k in ("text", "base64") if k in found}


# -- the report --------------------------------------------------------------------------------


@dataclass
class ImportReport:
    """What an import did not interpret: kept records by kind (with their lines), and notes."""

    kept: dict[str, list[int]] = field(default_factory=dict)
    notes: list[tuple[int | None, str]] = field(default_factory=list)

    def keep(self, kind: str, line: int) -> None:
        """A record of ``kind`` at ``line`` was kept without being interpreted."""
        self.kept.setdefault(kind, []).append(line)

    def note(self, line: int | None, what: str) -> None:
        """A tolerated problem at ``line`` and what was done about it (one sentence)."""
        self.notes.append((line, what))

    def extend(self, other: ImportReport) -> None:
        for kind, lines in other.kept.items():
            self.kept.setdefault(kind, []).extend(lines)
        self.notes.extend(other.notes)

    def to_json(self) -> dict[str, Any]:
        return {
            "kept": {
                kind: {"count": len(lines), "lines": lines} for kind, lines in self.kept.items()
            },
            "notes": [{"line": line, "what": what} for line, what in self.notes],
        }


# -- the contract ------------------------------------------------------------------------------


@dataclass
class Batch:
    """An importer's answer: records to append in order (entries, each with ``native``, and
    meta records: ``native``, ``name``, ``label``…; known ones included, ``fresh`` drops them),
    the entry Claude/pi/… would continue from (None: leave the active leaf alone), where the
    next import continues, and the report."""

    records: list[dict[str, Any]]
    cursor: Cursor
    leaf: str | None = None
    report: ImportReport = field(default_factory=ImportReport)


@dataclass(frozen=True)
class ForkSource:
    """Where an agent's session says it was forked from, as the agent names it: its session
    id, or the path of its file; the session it mirrors becomes the new session's
    ``forkedFrom``. The entry forked from is the last of ``shared`` (entries the fork copied,
    ids as the importer makes them) that the source has, else the first of the source's entries
    whose text mentions ``mention`` (a subagent's thread id in its parent's spawn call), else
    the source's last entry written before ``before`` (when the fork began)."""

    agent: str
    session: str | None = None
    path: str | None = None
    shared: tuple[str, ...] = ()
    mention: str | None = None
    before: str | None = None


@dataclass(frozen=True)
class Importer:
    """One agent's reader. ``session_id(data)``: the agent's session id in a whole file (None:
    not this agent's file). ``parse(data, cursor, known)``: the batch for ``data``, the bytes of
    the file from ``cursor.offset``. ``appends``: the agent only ever appends to its file.
    ``companions(path)``: files to import after ``path`` (a session's subagent files).
    ``fork_source(data)``: where a whole file says its session was forked from (None: nowhere),
    read when its session is started."""

    agent: str
    title: str  # how people write the agent's name
    session_id: Callable[[bytes], str | None]
    parse: Callable[[bytes, Cursor, Known], Batch]
    appends: bool = True
    companions: Callable[[Path], list[Path]] = lambda path: []
    fork_source: Callable[[bytes], ForkSource | None] = lambda data: None


def checkpoint(
    agent: str, source: str, cursor: Cursor, head: bytes, before: bytes
) -> dict[str, Any]:
    """The ``import`` meta record saying where an import of ``source`` stopped; ``head`` and
    ``before`` are the file's first bytes and those just before ``cursor.offset`` (at most
    ``CHECK_BYTES`` of each are looked at)."""
    return {
        "type": "import",
        "agent": agent,
        "source": source,
        "offset": cursor.offset,
        "line": cursor.line,
        "index": cursor.index,
        "check": _check(head, before, cursor.offset),
        "state": dict(cursor.state),
        "ts": schema.now(),
    }


def resume(saved: Mapping[str, Any] | None, size: int, head: bytes, before: bytes) -> Cursor | None:
    """Where to continue from an ``import`` record, if the file still starts as it did then
    (``head``: its first bytes, ``before``: those just before the saved offset) and is no
    shorter; None: read the whole file again."""
    if saved is None:
        return None
    offset = saved.get("offset")
    if type(offset) is not int or not 0 <= offset <= size:
        return None
    if saved.get("check") != _check(head, before, offset):
        return None
    line, index, state = saved.get("line"), saved.get("index"), saved.get("state")
    if type(line) is not int or type(index) is not int or type(state) is not dict:
        return None
    return Cursor(offset, line, index, state)


def _check(head: bytes, before: bytes, offset: int) -> str:
    """A digest of what must not change for an import to continue at ``offset``."""
    return _digest(head[: min(CHECK_BYTES, offset)] + b"\n" + before[-CHECK_BYTES:], 16)
