"""Handing a convgit path back to the agent: a new transcript of the agent's own, holding
exactly the path from the root to an entry (the records it was imported from), which the agent
resumes; its turns then come back through the hooks as a new branch below that entry (the
transcript's session is recorded as continuing the convgit session, ``agent_session``)."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convgit.agents import claude_code as cc
from convgit.errors import NotFoundError, RefusedError
from convgit.formats import importing
from convgit.session import RestoreResult, Session

AGENT = cc.AGENT


@dataclass(frozen=True)
class Resumed:
    """A transcript written for the agent: its session id, file and the command that runs it."""

    entry: str
    agent_session_id: str
    path: Path
    command: str
    lines: int
    restored: RestoreResult | None

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "agent_session_id": self.agent_session_id,
            "path": str(self.path),
            "command": self.command,
            "entry": self.entry,
        }
        if self.restored is not None:
            found["restore"] = self.restored.to_json()
        return found


def resume(session: Session, ref: str, agent: str = AGENT, *, restore: bool = False) -> Resumed:
    """Write a new transcript of ``agent``'s holding exactly the path from the root to ``ref``,
    from the records it was imported from; when the agent resumes it, its turns continue here
    as a new branch below ``ref``. The active leaf moves to ``ref``; the files change only with
    ``restore`` (to ``ref``'s nearest snapshot, saved first, as ``convgit restore`` does)."""
    if agent != AGENT:
        raise RefusedError(f"convgit cannot hand a session back to '{agent}' yet.")
    header = session.tree.header or {}
    if header.get("agent") != AGENT:
        raise RefusedError(
            f"Session {session.id} does not mirror a {cc.TITLE} session, so there is nothing"
            f" {cc.TITLE} could resume.",
            "convgit sessions  (the ones with agent claude-code)",
        )
    target = session.resolve(ref)
    lines = _path_lines(session, target)
    folder = _transcript_folder(session)
    if restore and session.nearest_snapshot(target) is None:
        raise NotFoundError(f"Entry {target} has no snapshot above it to restore.")
    new = str(uuid.uuid4())
    path = folder / f"{new}.jsonl"
    written = cc.resume_lines(lines, lambda key: _kept_text(session, key))
    _write_new(path, b"".join(line + b"\n" for line in written))
    session.mirror_agent_session(AGENT, new, start=target, how="resume", leaf=target)
    restored = None
    if restore:
        nearest = session.nearest_snapshot(target)
        assert nearest is not None
        restored = session.restore(nearest.entry)
    return Resumed(target, new, path, cc.resume_command(new), len(written), restored)


def _path_lines(session: Session, target: str) -> list[bytes]:
    """The exact text of each transcript line the path from the root to ``target`` was made
    from, in order (a line that made several entries, once)."""
    tree = session.tree
    native = tree.entries[target].get("native")
    if not isinstance(native, dict):
        raise RefusedError(
            f"Entry {target} was written by convgit, not by {cc.TITLE}; {cc.TITLE} can resume"
            " only at an entry of its own.",
            "pick the reply or prompt above it",
        )
    if "subagent" in native:
        raise RefusedError(
            f"Entry {target} is in a subagent's side branch; {cc.TITLE} resumes the main"
            " conversation only.",
            "pick the call that started the subagent, or an entry below it",
        )
    lines = []
    for ident in tree.path(target):
        found = tree.entries[ident].get("native")
        if not isinstance(found, dict) or "part" in found or "in" in found:
            continue
        text = importing.kept_text(found)
        if text is not None:
            lines.append(text)
    return lines


def _kept_text(session: Session, key: str) -> bytes | None:
    found = session.tree.kept.get(key)
    return None if found is None else importing.kept_text(found)


def _transcript_folder(session: Session) -> Path:
    """Where the agent keeps this session's transcripts: beside the one imported."""
    for agent, source in session.tree.imports:
        path = Path(source)
        if agent == AGENT and path.parent.name != "subagents":
            return path.parent
    raise NotFoundError(
        f"Session {session.id} was never imported from a {cc.TITLE} transcript, so convgit does"
        " not know where to write one.",
    )


def _write_new(path: Path, data: bytes) -> None:
    try:
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
