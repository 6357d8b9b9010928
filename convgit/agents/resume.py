"""Handing a convgit path back to the agent it came from. Where the agent reaches the entry
itself (Claude Code's ``--resume-session-at``, for an entry on the branch it would load now),
convgit prints that command and writes nothing: the agent's next turn is appended to its own
transcript, below the entry, and comes back as a new branch there. Elsewhere it writes a new
session file of the agent's own, holding exactly the path from the root to the entry (the
records it was imported from, where it has them), which the agent resumes; the file's session
is recorded as continuing the convgit session (``agent_session``), and what the agent would
continue without being told (``claude -c``: the newest transcript) stays what it was. What is
particular to each agent is in ``convgit.agents``."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.agents import importing, reading, registry
from convgit.base.errors import NotFoundError, RefusedError
from convgit.conversation import branching
from convgit.session import Session
from convgit.session.restoring import RestoreResult

if TYPE_CHECKING:
    from convgit.agents.protocol import Resuming, Written


@dataclass(frozen=True)
class Resumed:
    """A session file written for the agent: its session id, file and the command that runs it."""

    entry: str
    agent: str
    agent_session_id: str
    path: Path
    command: str
    lines: int
    restored: RestoreResult | None
    written: bool = True  # False: the agent reaches the path in a transcript of its own
    at: str | None = None  # the agent's record it resumes at, when the command names one

    @property
    def title(self) -> str:
        return registry.title(self.agent) or self.agent

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "agent": self.agent,
            "agent_session_id": self.agent_session_id,
            "path": str(self.path),
            "command": self.command,
            "entry": self.entry,
            "written": self.written,
            "resume_at": self.at,
        }
        if self.restored is not None:
            found["restore"] = self.restored.to_json()
        return found


def resume(
    session: Session,
    ref: str,
    agent: str = registry.DEFAULT,
    *,
    restore: bool = False,
    confirm: Callable[[RestoreResult], None] | None = None,
) -> Resumed:
    """Hand the path from the root to ``ref`` to ``agent``, whichever agents recorded it: the
    command of its own that reaches it, else a new session file of the agent's holding exactly
    that path (from the records it was imported from, when the path is the agent's own; else
    written by the agent's writer, ``convgit.agents.writing``); when the agent resumes, its turns
    continue here as a new branch below ``ref``. The active leaf moves to ``ref``; the files
    change only with ``restore`` (to ``ref``'s nearest snapshot, saved first, as ``convgit
    restore`` does; ``confirm`` is shown what it would change first, and raises to stop
    before anything is written). Refused for a path the agent cannot hold (one that would
    split a call from its result)."""
    unknown = "convgit cannot hand a session back to '{name}': it resumes in {known}."
    found = registry.agent(agent, "resume", unknown=unknown, error=RefusedError)
    target = session.conversation.resolve(
        ref
    )  # a REF that names nothing is refused first, whatever the agent
    written = _written(session, target, agent, found.resume)
    if restore:
        nearest = session.track.nearest_snapshot(target)
        gone = session.track.let_go_above(target)
        if gone is not None:  # the nearest kept snapshot above holds other files
            raise NotFoundError(
                f"The files of entry {target} were the snapshot of {gone.entry}, which gc let"
                f" go on {gone.day}.",
                f"convgit resume {target} (without --restore) keeps the files as they are",
            )
        if nearest is None:
            raise NotFoundError(f"Entry {target} has no snapshot above it to restore.")
        if confirm is not None:
            confirm(session.restoring.restore(nearest.entry, dry_run=True))
    _compare_from(session, agent, written.session)
    if written.data is None:  # the agent's next turn lands in a file this session mirrors
        session.moves.switch(target)
    else:
        newest = _newest(written.path.parent) if written.keep_newest else None
        _write_new(written.path, written.data)
        if newest is not None:
            _make_older(written.path, newest)
        how = "resume" if written.copies is None else "handoff"
        importing.mirror_agent_session(
            session, agent, written.session, start=target, how=how, leaf=target,
            copies=written.copies, skip=written.skip,
        )  # fmt: skip
    restored = None
    if restore:
        nearest = session.track.nearest_snapshot(target)
        assert nearest is not None
        restored = session.restoring.restore(nearest.entry)

        # told now, below REF: the agent's next turn hangs below the note (on the resumed path)
        session.append.tell_now(target)
    lines = 0 if written.data is None else written.data.count(b"\n")
    return Resumed(
        target, agent, written.session, written.path, written.command, lines, restored,
        written=written.data is not None, at=written.at,
    )  # fmt: skip


def _written(
    session: Session, target: str, agent: str, resume: Callable[[], Resuming] | None
) -> Written:
    """What the agent resumes: where the path is the agent's own (every entry on it read from
    the agent's files, or convgit's own), the agent's own way back in, byte for byte
    (``hand_back``); else, or when that way cannot hold the path, the path written by the
    agent's writer."""
    from convgit.agents import writing

    tree = session.conversation.tree
    header = tree.header or {}
    path = [tree.entries[ident] for ident in tree.path(target)]
    own = header.get("agent") == agent and all(
        writing.agent_of(record, header) in (agent, None) for record in path
    )
    if not own or resume is None:
        return writing.hand_over(session, target, agent)
    try:
        return resume().hand_back(session, target)
    except (RefusedError, NotFoundError) as refused:
        try:  # the writer holds what the agent's own way back cannot (a file it no longer has)
            return writing.hand_over(session, target, agent)
        except RefusedError:
            raise refused from None  # the agent's own reason is the one to read


def _compare_from(session: Session, agent: str, agent_session: str) -> None:
    """The agent session's next prompt compares the files with the nearest snapshot above it,
    not with the last one its live state took (a later turn's, on the branch left): files that
    are not REF's are that prompt's snapshot, so restoring the prompt brings back what the
    agent went on from."""
    from convgit.agents.live.state import LiveState
    from convgit.store import jsonl

    location = session.location
    lock = location.agent_lock(agent, agent_session)
    with jsonl.exclusive(lock, f"the {registry.title(agent) or agent} session {agent_session}"):
        live = LiveState.load(location, agent, agent_session)
        if live.get("last") is not None:
            live.set("last", None)
            live.save()


# -- shared --------------------------------------------------------------------------------------


def refuse_tool_run(session: Session, target: str, title: str) -> None:
    refused = branching.refusal(session.conversation.tree, target, f"Resuming {title} at {target}")
    if refused is not None:
        raise refused


def kept_line(session: Session, key: str) -> bytes | None:
    """The exact text of the agent's line the session keeps under ``key`` (a record that
    became no entry)."""
    found = session.conversation.tree.kept.get(key)
    return None if found is None else reading.kept_text(found)


def imported(session: Session, agent: str) -> list[Path]:
    """The files of ``agent``'s the session was imported from, first imported first."""
    return [Path(source) for name, source in session.conversation.tree.imports if name == agent]


def _newest(folder: Path) -> float | None:
    """The newest modification time of the agent's session files in ``folder``, if any."""
    times = []
    for found in folder.glob("*.jsonl"):
        with contextlib.suppress(OSError):
            times.append(found.stat().st_mtime)
    return max(times, default=None)


def _make_older(path: Path, newest: float) -> None:
    """``path`` a second older than ``newest``: the file the agent continues unasked (the
    newest) stays the one it was."""
    with contextlib.suppress(OSError):
        os.utime(path, (newest - 1, newest - 1))


def _write_new(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise RefusedError(f"{path} cannot be written ({exc.strerror}).") from None
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
