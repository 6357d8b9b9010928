"""Importing an agent's session file: the session that mirrors it, and what is new in it.

Promises kept here (the live hooks, ``convgit import`` and ``convgit resume`` come here):
* one convgit session per agent session, whoever asks first (under the agent session's lock);
* an import adds only what is new, reading an appending agent's file from where the last
  import stopped, and writes nothing when the importer made a record the store would refuse;
* nothing is snapshotted: importing never touches the files.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit import schema
from convgit.agents import registry
from convgit.base.errors import (
    CorruptStoreError,
    InvalidEntryError,
    NotFoundError,
    RefusedError,
)
from convgit.session import Session
from convgit.store import jsonl, sessions
from convgit.store.location import StoreLocation, locate, write_pointer

if TYPE_CHECKING:
    from convgit.agents import reading


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
    report: reading.ImportReport

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


def for_agent(
    agent: str,
    agent_session_id: str,
    path: str | Path = ".",
    *,
    store_dir: str | Path | None = None,
    fsync: bool = False,
    make_current: bool = True,
    forked_from: Callable[[], dict[str, str] | None] | None = None,
) -> Session:
    """The session that mirrors ``agent``'s session ``agent_session_id`` (its header names
    both, or it records that session as resumed or forked from it), started when there is
    none; one per agent session, whoever asks first. ``forked_from``: asked only when the
    session is started, for its ``forkedFrom``."""
    location = locate(path, store_dir)
    pointer = location.agent_pointer(agent, agent_session_id)
    with jsonl.exclusive(location.agent_lock(agent, agent_session_id), "the agent session"):
        found = find_for_agent(location, agent, agent_session_id, fsync=fsync)
        if found is not None:
            if make_current:
                location.set_current(found.id)
            return found
        session = Session.create(
            path,
            store_dir=store_dir,
            fsync=fsync,
            forked_from=None if forked_from is None else forked_from(),
            agent=(agent, agent_session_id),
            make_current=make_current,
        )
        write_pointer(pointer, session.id)
        return session


def find_for_agent(
    location: StoreLocation,
    agent: str,
    agent_session_id: str,
    *,
    fsync: bool = False,
) -> Session | None:
    """The session that mirrors ``agent``'s session ``agent_session_id``, if one does."""
    pointer = location.agent_pointer(agent, agent_session_id)
    found = sessions.agent_session(location, agent, agent_session_id, pointer)
    if found is None:
        return None
    session = Session(location, found, fsync=fsync)
    session.reload()
    return session


def mirror_agent_session(
    session: Session,
    agent: str,
    agent_session_id: str,
    *,
    start: str | None,
    how: str,
    leaf: str | None = None,
    copies: Mapping[str, str] | None = None,
    skip: Sequence[str] = (),
) -> None:
    """Record that ``agent``'s session ``agent_session_id`` continues ``session``, from entry
    ``start`` (``how``: "resume", "handoff", "fork"…): its file is imported there, its turns a
    branch. With ``leaf``, the active leaf moves there (files are not touched). ``copies``:
    the entries the agent's importer makes of a file convgit wrote, each with the entry of the
    session it stands for (``skip``: the keys of the records it keeps of it)."""
    record = schema.agent_session(agent, agent_session_id, start, how)
    if copies is not None:
        record.update(copies=dict(copies), skip=list(skip))
    moved = [] if leaf is None else [schema.leaf(session.conversation.resolve(leaf))]
    if (agent, agent_session_id) not in session.conversation.tree.agent_sessions:
        session.conversation.write(lambda: [record, *moved], builds_on_leaf=False)
    elif moved:
        session.conversation.write(lambda: moved, builds_on_leaf=False)
    write_pointer(session.location.agent_pointer(agent, agent_session_id), session.id)


def import_file(
    agent: str | None,
    source: str | Path,
    path: str | Path = ".",
    *,
    agent_session_id: str | None = None,
    store_dir: str | Path | None = None,
    fsync: bool = False,
    make_current: bool = True,
) -> list[ImportResult]:
    """Import ``agent``'s session file ``source`` into the session that mirrors it (then the
    files the importer names as its companions: a session's subagent files). Only what is
    new is added; nothing is snapshotted. ``agent_session_id`` spares reading the whole
    file to learn it (the live hooks know it). Without ``agent``, the agent is recognised from
    the file's content; a file another agent wrote is refused (``recognise``)."""

    if agent is not None:
        registry.importer(agent)  # an unknown agent: refused before the file is read
    source = Path(source).absolute()
    whole = None
    if agent is None or agent_session_id is None:
        whole = _read_source(source, registry.title(agent or ""))
        agent = _recognised(agent, source, whole)
    importer = registry.importer(agent)
    if agent_session_id is None:
        assert whole is not None
        agent_session_id = importer.session_id(whole)
        if agent_session_id is None:
            raise RefusedError(
                f"{source.name} is not {registry.a(importer.title)} session file: no record in it"
                " names its session.",
                f"give the path of {registry.a(importer.title)} transcript",
            )
    unlinked: list[str] = []

    def fork_link() -> dict[str, str] | None:
        data = whole if whole is not None else _read_source(source, importer.title)
        fork = importer.fork_source(data)
        link = None if fork is None else _fork_link(locate(path, store_dir), fork)
        if fork is not None and link is None:
            unlinked.append(fork.path or fork.session or "another session")
        return link

    session = for_agent(
        agent,
        agent_session_id,
        path,
        store_dir=store_dir,
        fsync=fsync,
        make_current=make_current,
        forked_from=fork_link,
    )
    results = [import_source(session, importer, source, whole, agent_session=agent_session_id)]
    for origin in unlinked:
        results[0].report.note(
            None,
            f"says it was forked from {origin}, which is not imported here: import that"
            " first to record where this session comes from",
        )
    for companion in importer.companions(source):
        results.append(import_source(session, importer, companion))
    return results


def import_source(
    session: Session,
    importer: reading.Importer,
    source: Path,
    whole: bytes | None = None,
    *,
    agent_session: str | None = None,
) -> ImportResult:
    """Under the lock: read ``source`` from where its last import stopped (all of it when
    it was rewritten, or ``whole`` when given), append what is new, the leaf the agent
    would continue from, and where this import stopped. ``agent_session``: the agent's
    session that wrote ``source``, when it is not the one the header names (a resumed or
    forked one)."""
    from convgit.agents import reading

    name = str(source)
    outcome: dict[str, Any] = {}

    def build() -> list[dict[str, Any]]:
        tree = session.conversation.tree
        saved = tree.imports.get((importer.agent, name))
        data, cursor, before = _read_from(source, importer, saved, whole)
        header = tree.header or {}
        mirrored = agent_session or header.get("agentSession")
        link = tree.agent_sessions.get((importer.agent, str(mirrored))) or {}
        copies = link.get("copies") if isinstance(link.get("copies"), dict) else {}
        known = reading.Known(
            _Copied(tree.entries, copies) if copies else tree.entries,
            tree.kept,
            mirrored,
            agent_sessions(session, importer.agent),
        )
        batch = importer.parse(data, cursor, known)
        found, leaf = batch.records, batch.leaf
        if copies:
            found, leaf = _through_copies(found, leaf, copies, frozenset(link.get("skip") or ()))
        records, outcome["skipped"] = reading.fresh(found, known)
        if importer.agent != header.get("agent"):  # another agent's turns: each names it
            for record in records:
                if "parentId" in record:
                    record["agent"] = importer.agent
        _below_restore_note(session, records)
        new = [r["id"] for r in records if "parentId" in r]
        leaf = leaf if leaf is not None else tree.leaf
        if new and leaf is not None and leaf != new[-1]:
            records.append(schema.leaf(leaf))  # appending alone would move it to new[-1]
        if records or batch.cursor.offset != cursor.offset:
            head_now, before_now = before(batch.cursor)
            records.append(
                reading.checkpoint(importer.agent, name, batch.cursor, head_now, before_now)
            )
        _check_imported(records, session.conversation.tree.entries, importer.title)
        outcome.update(new=new, report=batch.report)
        return records

    collecting = gc.isenabled()
    gc.disable()  # thousands of small dicts, all kept: collections would find nothing
    try:
        session.conversation.write(build, builds_on_leaf=False, checked=True)
    finally:
        if collecting:
            gc.enable()
    return ImportResult(
        session.id,
        importer.agent,
        agent_session or str((session.conversation.tree.header or {}).get("agentSession")),
        name,
        len(session.conversation.tree.entries),
        outcome["new"],
        outcome["skipped"],
        session.conversation.tree.leaf,
        outcome["report"],
    )


# -- small pure pieces ------------------------------------------------------------------------


class _Copied(Mapping[str, Mapping[str, Any]]):
    """The session's entries as an importer is to see them when it reads a file convgit wrote:
    each entry it makes of what was written (``copies``) is there, as the entry it stands for
    (without the text it was read from: the agent's record is another), so that what the agent
    added below one hangs below the entry."""

    def __init__(self, entries: Mapping[str, Mapping[str, Any]], copies: Mapping[str, str]) -> None:
        self.entries, self.copies = entries, copies

    def __getitem__(self, ident: str) -> Mapping[str, Any]:
        if ident in self.entries:
            return self.entries[ident]
        found = self.entries[self.copies[ident]]
        return {k: v for k, v in found.items() if k != "native"} | {"id": ident}

    def __contains__(self, ident: object) -> bool:
        return ident in self.entries or (
            ident in self.copies and self.copies[ident] in self.entries  # type: ignore[index]
        )

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)


def _through_copies(
    records: list[dict[str, Any]],
    leaf: str | None,
    copies: Mapping[str, str],
    skip: frozenset[str],
) -> tuple[list[dict[str, Any]], str | None]:
    """What an importer made of a file convgit wrote, as this session holds it: the entries
    and kept records of what was written left out (the session has them), and what hangs below
    one of them hung below the entry it stands for."""
    out = []
    for record in records:
        if "parentId" in record:
            if record["id"] in copies:
                continue
            parent = record["parentId"]
            if parent in copies:
                record["parentId"] = copies[parent]
        elif record.get("type") == "native":
            if record["key"] in skip:
                continue
            if record.get("at") in copies:
                record["at"] = copies[record["at"]]
        elif record.get("type") == "label" and record.get("target") in copies:
            record["target"] = copies[record["target"]]
        out.append(record)
    return out, copies.get(leaf, leaf) if leaf is not None else None


def _below_restore_note(session: Session, records: list[dict[str, Any]]) -> None:
    """When the active leaf is the note of a restore made where the agent goes on (``resume
    --restore``: the agent continues from the note's parent, which it knows), the entries it
    adds there after the note hang below the note instead: the note stays on the path the
    conversation goes on, not on a one-entry branch of its own."""
    tree = session.conversation.tree
    note = tree.entries.get(tree.leaf) if tree.leaf is not None else None
    if note is None or note.get("type") != "note" or note.get("source") != "restore":
        return
    above, when = note.get("parentId"), str(note.get("ts", ""))
    for record in records:
        if "parentId" in record and record["parentId"] == above and str(record["ts"]) >= when:
            record["parentId"] = note["id"]


def _recognised(agent: str | None, source: Path, data: bytes) -> str:
    """The agent to read ``source`` as: ``agent``, unless the file is another agent's (refused);
    without ``agent``, the one its content shows (refused when none does)."""
    from convgit.agents.recognise import agent_of

    found = agent_of(data)
    if agent is None:
        if found is None:
            known = ", ".join(str(registry.title(name)) for name in registry.names())
            raise RefusedError(
                f"{source.name} does not look like a session file of an agent convgit reads"
                f" ({known}).",
                "name the agent: convgit import AGENT FILE",
            )
        return found
    if found is not None and found != agent:
        raise RefusedError(
            f"{source.name} is {registry.a(str(registry.title(found)))} session file, not"
            f" {registry.a(str(registry.title(agent)))} one;"
            " nothing was imported.",
            f"convgit import {found} {source}",
        )
    return agent


def agent_sessions(session: Session, agent: str) -> frozenset[str]:
    """The sessions of ``agent`` that ``session`` mirrors: its header's, and those that continue
    it (resumed from one of its entries, or forked from it)."""
    found = {ident for name, ident in session.conversation.tree.agent_sessions if name == agent}
    header = session.conversation.header()
    if header.get("agent") == agent and isinstance(header.get("agentSession"), str):
        found.add(header["agentSession"])
    return frozenset(found)


def _fork_link(location: StoreLocation, fork: reading.ForkSource) -> dict[str, str] | None:
    """``forkedFrom`` for a session forked from ``fork``: the session that mirrors the source
    (by the agent's session id, else by the file it was imported from) and the entry forked
    from; None while the source is not imported here."""
    from convgit.agents.reading import kept_text

    found = None
    if fork.session:
        pointer = location.agent_pointer(fork.agent, fork.session)
        found = sessions.agent_session(location, fork.agent, fork.session, pointer)
    if found is None and fork.path:
        found = sessions.imported_from(location, fork.agent, fork.path)
    if found is None:
        return None
    source = sessions.read_tree(location, found)
    known = source.entries
    entry = next((ident for ident in reversed(fork.shared) if ident in known), None)
    if entry is None and fork.mention:
        mention = fork.mention.encode()
        entry = next(
            (i for i, r in known.items() if mention in (kept_text(r.get("native") or {}) or b"")),
            None,
        )
    if entry is None and fork.before:
        earlier = [i for i, r in known.items() if str(r["ts"]) <= fork.before]
        entry = earlier[-1] if earlier else None
    entry = entry or source.leaf
    return None if entry is None else {"session": found, "entry": entry}


def _read_source(source: Path, title: str | None) -> bytes:
    what = f"{registry.a(title)} session file" if title else "an agent's session file"
    try:
        return jsonl.read_bytes(source, f"{title} transcript" if title else "agent's session")
    except NotFoundError as exc:
        raise NotFoundError(exc.message, f"give the path of {what}") from None
    except CorruptStoreError as exc:  # a folder or a device given: the argument, not the store
        said = exc.message.replace(f" {source.name} ", f" {source} ", 1)
        raise RefusedError(said, f"give the path of {what}") from None


def _read_from(
    source: Path,
    importer: reading.Importer,
    saved: dict[str, Any] | None,
    whole: bytes | None,
) -> tuple[bytes, reading.Cursor, Callable[[reading.Cursor], tuple[bytes, bytes]]]:
    """The bytes to import and where they start: after the saved offset when the agent only
    appends and the file still starts as it did (only those bytes are read), else all of it;
    and a reader of the file's first bytes and those before an offset, for the checkpoint."""
    from convgit.agents import reading

    check = reading.CHECK_BYTES
    offset = saved.get("offset") if importer.appends and saved is not None else None
    if type(offset) is int and offset > 0:
        head, before, tail, size = _read_after(source, importer.title, offset, whole)
        cursor = reading.resume(saved, size, head, before)
        if cursor is not None:
            start = offset - len(before)
            known = before + tail  # the file from ``start`` on

            def around_tail(at: reading.Cursor) -> tuple[bytes, bytes]:
                end = at.offset - start
                return head, known[max(0, end - check) : end]

            return tail, cursor, around_tail
    data = whole if whole is not None else _read_source(source, importer.title)

    def around(at: reading.Cursor) -> tuple[bytes, bytes]:
        return data[:check], data[max(0, at.offset - check) : at.offset]

    return data, reading.Cursor(), around


def _read_after(
    source: Path, title: str, offset: int, whole: bytes | None
) -> tuple[bytes, bytes, bytes, int]:
    """The file's first ``CHECK_BYTES``, the ``CHECK_BYTES`` before ``offset``, everything
    after it, and the file's size."""
    from convgit.agents.reading import CHECK_BYTES

    start = max(0, offset - CHECK_BYTES)
    if whole is None:
        try:
            fd = os.open(source, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            whole = _read_source(source, title)  # says plainly why it cannot be read
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


def _check_imported(records: list[dict[str, Any]], known: dict[str, Any], title: str) -> None:
    """Every record an importer made must be one the store accepts: nothing is written
    otherwise (an importer's mistake must not damage the session)."""
    made: set[str] = set()
    for record in records:
        problem = schema.kind_error(record)
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
