"""``convgit blame FILE``: for each line of a file as it is now, what last changed it: a turn
of the agent (its entry, the prompt it answered, the agent and the model), a hand edit recorded
at a user's entry, a commit of the user's history from before the session, or nothing recorded
yet (changed since the last snapshot).

git does the line tracking (``chain``): the snapshots on the active path where the file changed
are laid as a chain of commits on the user's commit at the session's start (the newest commit
of HEAD made before the session was created), topped by a commit of the file as it is now, and
``git blame`` runs over that chain.

A line git gives to a commit of the user's history is looked up in that commit's git notes of
attribution (``commit_notes.Reader``): convgit's Agent Trace record, else a Git AI authorship log
(another tool's too). Without the session's snapshots (a clone that fetched only the notes, or
``--notes``), ``git blame`` runs over HEAD and the notes alone answer.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convgit.attribution import AI, HUMAN, Author, chain
from convgit.attribution.commit_notes import Reader
from convgit.base.errors import NotFoundError
from convgit.session import Session
from convgit.store.location import StoreLocation
from convgit.workspace import Workspace

if TYPE_CHECKING:
    from convgit.schema.shapes import BlameJson


@dataclass(frozen=True)
class Source:
    """What last changed some lines: ``kind`` "turn", "hand edit", "commit", "not recorded
    yet", or, from another tool's note, "agent" and "human", with the entry's or the commit's
    particulars."""

    kind: str
    entry: str | None = None
    prompt: str | None = None  # for a turn: the user message it answered
    agent: str | None = None
    model: str | None = None
    commit: str | None = None  # for a commit of the user's history
    author: str | None = None  # that commit's author; a known human of another tool's note
    summary: str | None = None
    session: str | None = None  # the convgit session that recorded the lines
    note: str | None = None  # the git note ref that said it (None: the session's snapshots)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "entry": self.entry,
            "prompt": self.prompt,
            "agent": self.agent,
            "model": self.model,
            "commit": self.commit,
            "author": self.author,
            "summary": self.summary,
            "session": self.session,
            "note": self.note,
        }


@dataclass
class Blame:
    path: str
    lines: list[tuple[str, Source]] = field(default_factory=list)  # (text, source)
    base: str | None = None  # the user's commit the chain stands on
    session: str | None = None  # the session whose snapshots answered (None: the notes alone)

    def to_json(self) -> BlameJson:
        return {
            "session": self.session,
            "path": self.path,
            "base": self.base,
            "lines": [
                {"line": n, "text": text, **source.to_json()}
                for n, (text, source) in enumerate(self.lines, 1)
            ],
        }


def _base(git: Workspace, created: str | None) -> str | None:
    """HEAD's newest commit made before ``created`` (None: no such commit, or no HEAD)."""
    args = ["rev-list", "-1"] + ([f"--before={created}"] if created else []) + ["HEAD", "--"]
    done = git.run(*args, check=False)
    found = os.fsdecode(done.stdout).strip()
    return found if done.returncode == 0 and found else None


def _now(git: Workspace, tip: str | None, path: str, file: Path) -> str:
    """A commit of the file as it is now on ``tip`` (the rest of the tree as ``tip`` has it):
    what git gives to it is not recorded yet. (``git blame --contents`` would do, but git
    before 2.41 takes it only over HEAD.)"""
    blob = os.fsdecode(git.run("hash-object", "-w", "--", str(file.resolve())).stdout).strip()
    mode = "100755" if os.access(file, os.X_OK) else "100644"
    with tempfile.TemporaryDirectory() as scratch:
        index = Path(scratch) / "index"
        if tip is not None:
            git.run("read-tree", tip, index=index)
        git.run("update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}", index=index)
        tree_id = os.fsdecode(git.run("write-tree", index=index).stdout).strip()
    return chain.top(git, tip, tree_id)


def blame(
    location: StoreLocation,
    session: Session | None,
    git: Workspace,
    file: Path,
    *,
    notes: bool = False,
) -> Blame:
    """Blame ``file`` over ``session``'s snapshots, or over HEAD and the notes alone when there
    is no session, its snapshots are not here, or ``notes``."""
    root = git.root
    try:
        path = file.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        raise NotFoundError(f"{file} is not in the working tree at {root}.") from None
    if not file.is_file():
        raise NotFoundError(f"There is no file {path} in the working tree.")
    use = session if session is not None and not notes and not chain.missing(git, session) else None
    if use is not None:
        base = _base(git, use.conversation.header().get("created"))
        laid = chain.lay(git, base, chain.changes(git, use, [path]))
    else:
        head = git.run("rev-parse", "--verify", "-q", "HEAD^{commit}", check=False)
        laid = chain.Chain(os.fsdecode(head.stdout).strip() or None)
        base = None
    now = _now(git, laid.tip, path, file)
    report = Blame(path, base=base, session=use.id if use is not None else None)
    answers = _Answers(location, use, laid, now, Reader(git))
    for line in chain.blame(git, now, path):
        report.lines.append((line.text, answers.source(line)))
    return report


class _Answers:
    """Each blamed line's source, those of one commit or entry made once."""

    def __init__(
        self,
        location: StoreLocation,
        session: Session | None,
        laid: chain.Chain,
        now: str,
        reader: Reader,
    ) -> None:
        self.location, self.session, self.laid, self.now = location, session, laid, now
        self.reader = reader
        self.made: dict[object, Source | None] = {}
        self.sessions: dict[str, Session | None] = {}

    def source(self, line: chain.Blamed) -> Source:
        if line.commit == self.now:
            return Source("not recorded yet")
        if self.session is not None and line.commit in self.laid.made:
            entry = self.laid.made[line.commit]
            found = self.made.get(entry)
            if found is None:
                found = self.made[entry] = _of_entry(self.session, entry)
            return found
        said = self.reader.author(line.commit, line.path, line.line)
        if said is not None:
            if said not in self.made:
                self.made[said] = self._of_note(*said)
            found = self.made[said]
            if found is not None:
                return found
        return Source("commit", commit=line.commit, author=line.author, summary=line.summary)

    def _of_note(self, ref: str, who: Author) -> Source | None:
        if who.kind == AI and who.entry is not None:
            prompt = None
            there = self._session(who.session)
            if there is not None and who.entry in there.conversation.tree.entries:
                prompt = chain.facts(there, who.entry).prompt
            return Source(
                "turn", who.entry, prompt, who.agent, who.model, session=who.session, note=ref
            )
        if who.kind == AI:
            model = who.model or who.foreign_model
            return Source("agent", agent=who.agent, model=model, session=who.session, note=ref)
        if who.kind == HUMAN and who.entry is not None:
            return Source("hand edit", who.entry, session=who.session, note=ref)
        if who.kind == HUMAN:
            return Source("human", author=who.human, note=ref)
        return None  # "unknown": the commit that brought the line says as much as the note

    def _session(self, sid: str | None) -> Session | None:
        if sid is None:
            return None
        if sid not in self.sessions:
            found = None
            if self.location.session_path(sid).exists():
                found = Session(self.location, sid)
                found.reload()
            self.sessions[sid] = found
        return self.sessions[sid]


def _of_entry(session: Session, entry: str) -> Source:
    facts = chain.facts(session, entry)
    if facts.hand:
        return Source("hand edit", entry, session=session.id)
    return Source("turn", entry, facts.prompt, facts.agent, facts.model, session=session.id)
