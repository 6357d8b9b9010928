"""Which convgit session mirrors an agent session, and what its transcript gained.

One convgit session mirrors one agent session, found by the agent's session id; a session the
agent resumed under a new id, or forked, continues the convgit session whose lines its file
copies, as a branch (its provenance in an ``agent_session`` record), for the agents whose
files copy another's (their ``resume`` part reads a file's ``line_uuids``). What the
transcript gained is imported through the importer ``convgit import`` uses (from the saved
byte offset, whole lines only), so an event that was missed or failed is caught up by the next
one, and one delivered twice records nothing twice."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from convgit.agents.live.events import Event
from convgit.agents.live.state import LiveState
from convgit.base import codec
from convgit.base.errors import RefusedError
from convgit.store import jsonl
from convgit.store.location import StoreLocation

if TYPE_CHECKING:  # imported where used: the common prompt reads neither the session nor git
    from convgit.agents import reading
    from convgit.agents.protocol import LineUuids
    from convgit.session import Session


def attach(location: StoreLocation, event: Event, state: LiveState) -> Session | None:
    """The session that mirrors the event's agent session; None while a fork or resume under a
    new id cannot be told yet (its transcript is still empty), and while the transcript holds
    no entry to import: a session is never started empty (a Stop whose transcript is not
    written yet waits for the next event)."""
    from convgit.agents import importing
    from convgit.session import Session

    known = state.data.get("session")
    if isinstance(known, str) and location.session_path(known).exists():
        # read when a step needs it (``read``); the working tree as found before
        return Session(location, known, workspace=state.workspace(location))
    found = importing.find_for_agent(location, event.agent, event.session_id)
    if found is None:
        copies = _line_uuids(event.agent)
        copied = [] if copies is None else copies(_read(event.transcript))
        if copied:
            found = _continued(location, event, copied, state)
        elif copies is not None and (
            state.data.get("source") in ("resume", "fork")
            or (event.name == "UserPromptSubmit" and "source" not in state.data)
        ):
            # the transcript names the session it continues (a fork, a resume under a new
            # id) once it has lines; at the first prompt, with no SessionStart seen, it is
            # still empty: the end of the turn attaches
            return None
        if found is None and not _brings_entries(location, event):
            return None
        if found is None:
            found = importing.for_agent(
                event.agent,
                event.session_id,
                event.cwd or ".",
                store_dir=location.root,
                make_current=False,
            )
    state.set("session", found.id)
    _adopt_index(location, event.agent, event.session_id, found.id)
    return found


def in_trash(location: StoreLocation, event: Event, state: LiveState) -> str | None:
    """The session in the trash (``convgit sessions rm``) that mirrors the event's agent
    session, if it is there: it records nothing until it is restored."""
    trashed = location.trashed_ids()
    if not trashed:
        return None
    known = state.data.get("session")
    candidates = [known] if isinstance(known, str) else []
    with contextlib.suppress(OSError):
        candidates.append(location.agent_pointer(event.agent, event.session_id).read_text().strip())
    return next((sid for sid in candidates if sid in trashed), None)


def read(session: Session) -> Session:
    """``session`` with its file read, once."""
    if session.conversation.tree.header is None and not session.conversation.tree.entries:
        session.reload()
    return session


@dataclass
class Imported:
    """What the imports of an event brought: how many new entries, and the notes of what the
    importer tolerated and how (a torn line left for later, a record skipped), each once, in
    the words ``convgit import`` prints them."""

    new: int = 0
    notes: list[str] = field(default_factory=list)

    def add(self, other: Imported) -> Imported:
        self.new += other.new
        self.notes += [note for note in other.notes if note not in self.notes]
        return self

    def words(self) -> str:
        """For the hook log: ``N new entries``, then each note."""
        return "; ".join([f"{self.new} new entries", *self.notes])


def import_new(session: Session, event: Event) -> Imported:
    """Import what the transcript and its companion files (Claude Code's subagents) gained."""
    from convgit.agents import importing, registry

    importer = registry.importer(event.agent)
    transcript = event.transcript or _written(session.location, event)
    found = Imported()
    if transcript is None or not transcript.is_file():
        return found
    read(session)
    for source in (transcript, *importer.companions(transcript)):
        result = importing.import_source(session, importer, source, agent_session=event.session_id)
        notes = [
            f"{source.name} {'line ' + str(line) if line is not None else 'the file'} {what}"
            for line, what in result.report.notes
        ]
        found.add(Imported(len(result.new), notes))
    return found


def _brings_entries(location: StoreLocation, event: Event) -> bool:
    """Whether the event's transcript holds an entry an import would bring (read whole: this
    is asked once per agent session, before its convgit session is started)."""
    from convgit.agents import reading, registry

    data = _read(event.transcript or _written(location, event))
    if not data.strip():
        return False
    batch = registry.importer(event.agent).parse(data, reading.Cursor(), reading.Known())
    return any("parentId" in r for r in batch.records)


def _written(location: StoreLocation, event: Event) -> Path | None:
    """For an agent that keeps no session file (OpenCode: a database), the file its ``live``
    part writes for the event to import (its ``transcript``); None for the others."""
    from convgit.agents import registry

    write = registry.integration(event.agent).transcript
    found: Path | None = None if write is None else write(location, event)
    return found


def unattached_index(location: StoreLocation, agent: str, agent_session: str) -> Path:
    """The private index of the snapshot at a first prompt, before the session is known; it
    becomes the session's own when it is attached (its stat cache saves hashing every file
    again at the end of the turn)."""
    name = location.agent_pointer(agent, agent_session).name
    return location.root / "index" / f"agent-{name}-{location.worktree_key}"


def _adopt_index(location: StoreLocation, agent: str, agent_session: str, sid: str) -> None:
    from convgit.git.index import agent_files

    found = unattached_index(location, agent, agent_session)
    target = location.index_path(sid)
    kept = agent_files.list_path(found)
    if kept.exists():  # the files a file tool wrote before the session was known: kept too
        for path in sorted(agent_files.listed(found)):
            agent_files.note(target, path)
        kept.unlink()
    if not found.exists():
        return
    taken = target.exists()
    for suffix in (".state", "", ".flock"):  # the index's state file goes with it
        with contextlib.suppress(OSError):
            if taken or suffix == ".flock":
                Path(f"{found}{suffix}").unlink()
            else:
                os.replace(f"{found}{suffix}", f"{target}{suffix}")


def _line_uuids(agent: str) -> LineUuids | None:
    """How the agent's files tell the records they copy from another's (a fork, a resume under
    a new id), when they can: its ``resume`` part's ``line_uuids``."""
    from convgit.agents import registry

    resume = registry.agent(agent, "resume").resume
    return None if resume is None else resume().line_uuids


def _read(path: Path | None) -> bytes:
    if path is None:
        return b""
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _continued(
    location: StoreLocation,
    event: Event,
    copied: list[tuple[str, str | None]],
    state: LiveState,
) -> Session | None:
    """The session whose lines the transcript starts with (a fork, a resume under a new id),
    recorded as continued by the event's agent session from where the two part."""
    from convgit.agents import importing, reading
    from convgit.session import Session

    first = copied[0][0]
    marker = codec.dumps(first).encode()
    for sid in location.session_ids():
        header = jsonl.read_header(location.session_path(sid)) or {}
        if header.get("agent") != event.agent:
            continue
        try:
            if marker not in jsonl.read_bytes(location.session_path(sid)):
                continue
        except RefusedError:
            continue
        session = Session(location, sid)
        session.reload()
        known = reading.Known(session.conversation.tree.entries, session.conversation.tree.kept)
        if reading.entry_id(first) not in known.entries and first not in known.kept:
            continue
        start = None
        for line, _ in copied:
            if reading.entry_id(line) not in known.entries and line not in known.kept:
                break
            start = line
        anchor = None if start is None else _anchor(known, start)
        how = str(state.data.get("source") or "fork")
        importing.mirror_agent_session(
            session, event.agent, event.session_id, start=anchor, how=how
        )
        return session
    return None


def _anchor(known: reading.Known, uuid_: str) -> str | None:
    from convgit.agents import reading

    ident = reading.entry_id(uuid_)
    return ident if ident in known.entries else known.anchor(uuid_)
