"""An agent's session file as an import reads it, beside the session use-case that appends
what the importer made (``Session.import_file``): which session mirrors an agent session, the
bytes after where the last import stopped, and the check that an importer's records are ones
the store accepts."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit import entries, store
from convgit.errors import InvalidEntryError, NotFoundError

if TYPE_CHECKING:
    from convgit.formats import importing

_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


@dataclass(frozen=True)
class ImportResult:
    """What an import of an agent's file did: the session, what it added, what it kept."""

    session: str
    agent: str
    agent_session_id: str
    source: str  # the file imported
    entries: int  # entries in the session afterwards
    new: list[str]  # ids of the entries this import added, in order
    skipped: int  # records the session had already
    leaf: str | None
    report: importing.Report

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "entries": self.entries,
            "new": len(self.new),
            "known": self.skipped,
            "agent": self.agent,
            "agent_session_id": self.agent_session_id,
            "source": self.source,
            "leaf": self.leaf,
            **self.report.to_json(),
        }


def agent_session(
    location: store.StoreLocation, agent: str, agent_session_id: str, pointer: Path
) -> str | None:
    """The session whose header names ``agent``'s session: the pointer's, else found by
    reading every header (and the pointer written again)."""
    try:
        hinted: str | None = pointer.read_text().strip()
    except OSError:
        hinted = None
    candidates = [hinted] if hinted else []
    candidates += [sid for sid in location.session_ids() if sid != hinted]
    for sid in candidates:
        if not _SESSION_ID.fullmatch(sid):
            continue
        header = store.read_header(location.session_path(sid)) or {}
        if header.get("agent") == agent and header.get("agentSession") == agent_session_id:
            if sid != hinted:
                store.write_pointer(pointer, sid)
            return sid
    return None


def read_source(source: Path, title: str) -> bytes:
    try:
        return store.read_bytes(source, f"{title} transcript")
    except NotFoundError as exc:
        raise NotFoundError(exc.message, f"give the path of a {title} session file") from None


def read_from(
    source: Path,
    importer: importing.Importer,
    saved: dict[str, Any] | None,
    whole: bytes | None,
) -> tuple[bytes, importing.Cursor, Callable[[importing.Cursor], tuple[bytes, bytes]]]:
    """The bytes to import and where they start: after the saved offset when the agent only
    appends and the file still starts as it did (only those bytes are read), else all of it;
    and a reader of the file's first bytes and those before an offset, for the checkpoint."""
    from convgit.formats import importing

    check = importing.CHECK_BYTES
    offset = saved.get("offset") if importer.appends and saved is not None else None
    if type(offset) is int and offset > 0:
        head, before, tail, size = read_after(source, importer.title, offset, whole)
        cursor = importing.resume(saved, size, head, before)
        if cursor is not None:
            start = offset - len(before)
            known = before + tail  # the file from ``start`` on

            def around_tail(at: importing.Cursor) -> tuple[bytes, bytes]:
                end = at.offset - start
                return head, known[max(0, end - check) : end]

            return tail, cursor, around_tail
    data = whole if whole is not None else read_source(source, importer.title)

    def around(at: importing.Cursor) -> tuple[bytes, bytes]:
        return data[:check], data[max(0, at.offset - check) : at.offset]

    return data, importing.Cursor(), around


def read_after(
    source: Path, title: str, offset: int, whole: bytes | None
) -> tuple[bytes, bytes, bytes, int]:
    """The file's first ``CHECK_BYTES``, the ``CHECK_BYTES`` before ``offset``, everything
    after it, and the file's size."""
    from convgit.formats.importing import CHECK_BYTES

    start = max(0, offset - CHECK_BYTES)
    if whole is None:
        try:
            fd = os.open(source, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            whole = read_source(source, title)  # says plainly why it cannot be read
        else:
            try:
                size = os.fstat(fd).st_size
                if size < offset:
                    return b"", b"", b"", size
                head = os.pread(fd, CHECK_BYTES, 0)
                before = os.pread(fd, offset - start, start)
                chunks, at = [], offset
                while at < size:
                    chunk = os.pread(fd, size - at, at)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    at += len(chunk)
                return head, before, b"".join(chunks), size
            finally:
                os.close(fd)
    return whole[:CHECK_BYTES], whole[start:offset], whole[offset:], len(whole)


def check_imported(records: list[dict[str, Any]], known: dict[str, Any], title: str) -> None:
    """Every record an importer made must be one the store accepts: nothing is written
    otherwise (an importer's mistake must not damage the session)."""
    made: set[str] = set()
    for record in records:
        problem = entries.kind_error(record)
        if problem is None and "parentId" in record:
            ident, parent = record["id"], record["parentId"]
            if ident in known or ident in made:
                problem = f"repeats the existing id {ident}"
            elif parent is not None and parent not in known and parent not in made:
                problem = f"has a parent {parent} that does not exist"
            made.add(ident)
        if problem is not None:
            raise InvalidEntryError(
                f"The {title} importer made a record that {problem}; nothing was appended.",
                "report this with the transcript that caused it",
            )
