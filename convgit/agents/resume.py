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
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from convgit.agents import importing as session_import
from convgit.agents import reading as importing
from convgit.agents.claude_code import live as cc
from convgit.agents.codex import reading as codex_format
from convgit.agents.codex import resume as codex_agent
from convgit.agents.pi import export as pi_export
from convgit.agents.pi import resume as pi_agent
from convgit.base import codec
from convgit.base.errors import NotFoundError, RefusedError
from convgit.conversation import branching
from convgit.session import Session
from convgit.session import files as session_files
from convgit.session.restoring import RestoreResult

AGENT = cc.AGENT
TITLES = {cc.AGENT: cc.TITLE, codex_agent.AGENT: codex_agent.TITLE, pi_agent.AGENT: pi_agent.TITLE}


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
        return TITLES[self.agent]

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


@dataclass(frozen=True)
class _Written:
    """What the agent resumes: ``data`` written to ``path`` (None: nothing to write, the agent
    reaches the path in its own file at ``path``), with ``command``."""

    session: str
    path: Path
    data: bytes | None
    command: str
    at: str | None = None
    keep_newest: bool = False  # the newest file in path's folder stays the newest


def resume(
    session: Session,
    ref: str,
    agent: str = AGENT,
    *,
    restore: bool = False,
    confirm: Callable[[RestoreResult], None] | None = None,
) -> Resumed:
    """Hand the path from the root to ``ref`` to ``agent``: the command of its own that
    reaches it, else a new session file of the agent's holding exactly that path, from the
    records it was imported from; when the agent resumes, its turns continue here as a new
    branch below ``ref``. The active leaf moves to ``ref``; the files
    change only with ``restore`` (to ``ref``'s nearest snapshot, saved first, as ``convgit
    restore`` does; ``confirm`` is shown what it would change first, and raises to stop
    before anything is written). Refused for a session of another agent, and for a path the
    agent cannot hold."""
    title = TITLES.get(agent)
    if title is None:
        known = ", ".join(sorted(TITLES))
        raise RefusedError(
            f"convgit cannot hand a session back to '{agent}': it resumes in {known}."
        )
    target = session.resolve(ref)  # a REF that names nothing is refused first, whatever the agent
    header = session.tree.header or {}
    if header.get("agent") != agent:
        raise RefusedError(
            f"Session {session.id} does not mirror a {title} session, so there is nothing"
            f" {title} could resume.",
            f"convgit sessions  (the ones with agent {agent})",
        )
    write = {cc.AGENT: _claude_code, pi_agent.AGENT: _pi, codex_agent.AGENT: _codex}[agent]
    written = write(session, target)
    if restore:
        nearest = session.nearest_snapshot(target)
        gone = session_files.let_go_above(session, target)
        if gone is not None:  # the nearest kept snapshot above holds other files
            raise NotFoundError(
                f"The files of entry {target} were the snapshot of {gone.entry}, which gc let"
                f" go on {gone.day}.",
                f"convgit resume {target} (without --restore) keeps the files as they are",
            )
        if nearest is None:
            raise NotFoundError(f"Entry {target} has no snapshot above it to restore.")
        if confirm is not None:
            confirm(session.restore(nearest.entry, dry_run=True))
    if written.data is None:  # the agent's next turn lands in a file this session mirrors
        session.switch(target)
    else:
        newest = _newest(written.path.parent) if written.keep_newest else None
        _write_new(written.path, written.data)
        if newest is not None:
            _make_older(written.path, newest)
        session_import.mirror_agent_session(
            session, agent, written.session, start=target, how="resume", leaf=target
        )
    restored = None
    if restore:
        nearest = session.nearest_snapshot(target)
        assert nearest is not None
        restored = session.restore(nearest.entry)
        from convgit.session import appending as session_append

        # told now, below REF: the agent's next turn hangs below the note (on the resumed path)
        session_append.tell_now(session, target)
    lines = 0 if written.data is None else written.data.count(b"\n")
    return Resumed(
        target, agent, written.session, written.path, written.command, lines, restored,
        written=written.data is not None, at=written.at,
    )  # fmt: skip


# -- Claude Code ---------------------------------------------------------------------------------


def _claude_code(session: Session, target: str) -> _Written:
    """Claude's own way in when a transcript it keeps has the path on the branch it would load
    (``claude -r S --resume-session-at UUID``); otherwise a new transcript of the path, beside
    the one imported, which does not become the newest (``claude -c`` continues what it did)."""
    lines = _path_lines(session, target)
    at = cc.uuid_of(lines[-1]) if lines else None
    if at is not None:
        for transcript in _transcripts(session):
            try:
                data = transcript.read_bytes()
            except OSError:
                continue
            if at in cc.resumable_at(data):
                own = transcript.stem
                return _Written(own, transcript, None, cc.resume_command(own, at), at)
    folder = _transcript_folder(session)
    new = str(uuid.uuid4())
    written = cc.resume_lines(lines, lambda key: _kept_text(session, key))
    data = b"".join(line + b"\n" for line in written)
    path = folder / f"{new}.jsonl"
    return _Written(new, path, data, cc.resume_command(new), keep_newest=True)


def _transcripts(session: Session) -> list[Path]:
    """The Claude transcripts (not a subagent's) the session was imported from, of sessions it
    mirrors, newest import last."""
    mirrored = session_import.agent_sessions(session, AGENT)
    return [
        path
        for path in _imported(session, AGENT)
        if path.parent.name != "subagents" and path.stem in mirrored
    ]


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


# -- pi ------------------------------------------------------------------------------------------


def _pi(session: Session, target: str) -> _Written:
    """The path as pi's own file (``pi_export``: the records pi wrote, byte for byte), under a
    header naming a new pi session, beside the file the session was imported from."""
    tree = session.tree
    _refuse_tool_run(session, target, pi_agent.TITLE)
    path = [tree.entries[ident] for ident in tree.path(target)]
    if not any(r.get("type") == "message" and r.get("role") == "assistant" for r in path):
        raise RefusedError(
            f"The path to {target} has no reply of the model, and pi writes such a session"
            " again, whole, when its first reply comes.",
            "resume at a reply, or continue in convgit itself",
        )
    imported = _imported(session, pi_agent.AGENT)
    header = tree.header or {}
    exported = pi_export.export(header, path, tree.kept)
    now = datetime.now(timezone.utc)
    new = str(uuid.uuid4())
    parent = str(imported[0]) if imported else None
    data = pi_agent.resume_header(exported, new, now, parent)
    if imported:
        folder = imported[0].parent
    else:
        cwd = codec.decode(exported.partition(b"\n")[0]).get("cwd")
        folder = pi_agent.sessions_dir(str(cwd or os.getcwd()))
    file = folder / pi_agent.file_name(new, now)
    return _Written(new, file, data, pi_agent.resume_command(str(file)))


# -- Codex ---------------------------------------------------------------------------------------


def _codex(session: Session, target: str) -> _Written:
    """A rollout of the path's own lines (``codex_agent.rollout``) under the session's
    ``session_meta`` naming a new thread, in the sessions folder of the rollout imported."""
    tree = session.tree
    _refuse_tool_run(session, target, codex_agent.TITLE)
    meta = _kept_text(session, "session")
    if meta is None:
        raise NotFoundError(
            f"Session {session.id} keeps no session_meta of a Codex rollout, so convgit cannot"
            " write one Codex would resume."
        )
    new = str(uuid.uuid4())
    steps = [codex_agent.Step(1, codex_agent.resume_meta(meta, new), "")]
    step_of: dict[str | None, codex_agent.Step] = {None: steps[0]}
    for ident in tree.path(target):
        record = tree.entries[ident]
        native = record.get("native")
        if not isinstance(native, dict):
            raise RefusedError(
                f"Entry {ident} on the path to {target} was written by convgit, not by Codex,"
                " and a Codex rollout holds only records of Codex's own.",
                "resume above it, or continue in convgit itself",
            )
        if "in" in native:  # a later entry of a record already placed
            step_of[ident] = steps[-1]
            continue
        line, text = codex_format.line_of(str(native.get("key"))), importing.kept_text(native)
        if line is None or text is None:
            raise RefusedError(
                f"Entry {ident} on the path to {target} was not read from a line of a rollout,"
                " so convgit cannot place it in one."
            )
        steps.append(codex_agent.Step(line, text, str(record.get("ts", ""))))
        step_of[ident] = steps[-1]
    for key, found in tree.kept.items():
        step = step_of.get(found.get("at")) if "at" in found else None
        line = codex_format.line_of(key)
        text = importing.kept_text(found)
        if step is not None and line is not None and text is not None:
            step.after.append((line, text, str(found.get("ts", ""))))
    try:
        data = codex_agent.rollout(steps)
    except codex_agent.NotWholeError as exc:
        raise RefusedError(
            f"The records of the path to {target} do not make a whole Codex rollout: {exc}."
        ) from None
    root = codex_agent.sessions_root(str(p) for p in _imported(session, codex_agent.AGENT))
    path = codex_agent.rollout_path(root, new, datetime.now(timezone.utc))
    return _Written(new, path, data, codex_agent.resume_command(new))


# -- shared --------------------------------------------------------------------------------------


def _refuse_tool_run(session: Session, target: str, title: str) -> None:
    refused = branching.refusal(session.tree, target, f"Resuming {title} at {target}")
    if refused is not None:
        raise refused


def _imported(session: Session, agent: str) -> list[Path]:
    """The files of ``agent``'s the session was imported from, first imported first."""
    return [Path(source) for name, source in session.tree.imports if name == agent]


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
