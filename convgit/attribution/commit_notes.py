"""A commit's attribution as git notes, for every tool to read: an Agent Trace record under
``refs/notes/agent-trace`` (``agent_trace``) and, with ``[attribution] git_ai = true``, a Git AI
authorship log under ``refs/notes/ai`` (``git_ai``), never over one another tool wrote.

Where the attribution comes from:

* ``git commit`` (the post-commit hook, ``on_commit``): the current session's snapshots say who
  wrote each line the commit added (``of_commit``, git's blame over them); a cherry-pick also
  carries the picked commit's notes;
* ``git commit --amend`` and ``git rebase`` (the post-rewrite hook, ``on_rewrite``): the old
  commits' notes are carried to the new ones (``carrying``), and an amend's new lines are the
  session's; git copies the notes first (``notes.rewriteRef``), convgit then moves their lines;
* a squash merge or a rebase done elsewhere (``convgit attribution rewrite``, ``rewrite``): the
  notes of the commits named are carried to the targets.

``Reader`` reads them back (convgit's or another tool's) for ``blame`` and ``why``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convgit import __version__
from convgit.attribution import (
    AI,
    HUMAN,
    UNKNOWN,
    Author,
    Lines,
    agent_trace,
    carrying,
    chain,
    git_ai,
    overlay,
)
from convgit.base.errors import NotFoundError, UsageError
from convgit.git import names
from convgit.session import Session
from convgit.sharing import gitnotes
from convgit.sharing.settings import AttributionSettings
from convgit.sharing.transport import SHARED_THROUGH_GIT
from convgit.store.location import StoreLocation
from convgit.workspace import Workspace

TRACE = names.AGENT_TRACE_NOTES
GIT_AI = names.GIT_AI_NOTES


@dataclass
class Written:
    """What was written for one commit: its lines attributed, and the note refs written or
    kept (a Git AI note another tool wrote stays)."""

    commit: str
    lines: int = 0
    written: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "lines": self.lines,
            "written": self.written,
            "kept": self.kept,
        }


class Reader:
    """The notes of commits read back: convgit's Agent Trace records first, else Git AI logs
    (convgit's or another tool's)."""

    def __init__(self, git: Workspace) -> None:
        self.notes = gitnotes.Notes(git)
        self._traces: dict[str, Lines[Author] | None] = {}
        self._logs: dict[str, git_ai.Log | None] = {}

    def trace(self, commit: str) -> Lines[Author] | None:
        if commit not in self._traces:
            data = self.notes.note(TRACE, commit)
            self._traces[commit] = agent_trace.read(data) if data is not None else None
        return self._traces[commit]

    def log(self, commit: str) -> git_ai.Log | None:
        if commit not in self._logs:
            data = self.notes.note(GIT_AI, commit)
            self._logs[commit] = git_ai.parse(data) if data is not None else None
        return self._logs[commit]

    def author(self, commit: str, path: str, line: int) -> tuple[str, Author] | None:
        """What the notes of ``commit`` say wrote ``line`` of ``path`` (its number in that
        commit's version of the file), and the note ref that says it; None when none does."""
        trace = self.trace(commit)
        if trace is not None:
            found = trace.get(path, {}).get(line)
            return (TRACE, found) if found is not None else None
        log = self.log(commit)
        key = log.files.get(path, {}).get(line) if log is not None else None
        if log is None or key is None:
            return None
        return GIT_AI, of_key(log, key)


def of_key(log: git_ai.Log, key: str) -> Author:
    """The author a Git AI attestation key names (its agent, model and sessions)."""
    record = log.record(key) or {}
    if key.startswith("h_"):
        person = record.get("author")
        return Author(HUMAN, human=person if isinstance(person, str) else None)
    agent_id = record.get("agent_id")
    agent_id = agent_id if isinstance(agent_id, dict) else {}
    attributes = record.get("custom_attributes")
    ours = attributes.get(git_ai.CONVGIT_SESSION) if isinstance(attributes, dict) else None

    def said(value: Any) -> str | None:
        return value if isinstance(value, str) and value else None

    return Author(
        AI,
        session=said(ours),
        agent=said(agent_id.get("tool")),
        agent_session=said(agent_id.get("id")),
        model=said(agent_id.get("model")),
    )


# -- from a session's snapshots --


def of_commit(
    session: Session, git: Workspace, commit: str, added: dict[str, set[int]]
) -> Lines[Author]:
    """Who wrote each of the lines ``commit`` ``added``, as ``session``'s snapshots say: git
    blames the commit's files over the chain of the snapshots where they changed, laid on the
    commit's first parent. A line a snapshot brought is that entry's (a turn's: ``ai``; a
    user's entry's: a hand edit, ``human``); one no snapshot has is ``unknown``."""
    paths = sorted(added)
    if not paths or chain.missing(git, session):
        return {}
    first = carrying.parents(git, commit)[:1]
    laid = chain.lay(git, first[0] if first else None, chain.changes(git, session, paths))
    tree = os.fsdecode(git.run("rev-parse", f"{commit}^{{tree}}").stdout).strip()
    judged = chain.top(git, laid.tip, tree)
    authors: dict[str, Author] = {}
    out: Lines[Author] = {}
    for path in paths:
        for number, blamed in enumerate(chain.blame(git, judged, path), 1):
            if number not in added[path]:
                continue
            if blamed.commit == judged:
                who = Author(UNKNOWN, session.id)
            elif blamed.commit in laid.made:
                entry = laid.made[blamed.commit]
                if entry not in authors:
                    authors[entry] = _author(session, entry)
                who = authors[entry]
            else:
                continue  # the user's history brought it back
            out.setdefault(path, {})[number] = who
    return out


def _author(session: Session, entry: str) -> Author:
    facts = chain.facts(session, entry)
    if facts.hand:
        return Author(HUMAN, session.id, entry)
    return Author(
        AI, session.id, entry, facts.agent, facts.agent_session, facts.model, facts.provider
    )


# -- writing --


def _committer(git: Workspace, commit: str) -> str | None:
    done = git.run("log", "-1", "--format=%cn <%ce>", commit, "--", check=False)
    found = os.fsdecode(done.stdout).strip()
    return found if done.returncode == 0 and found != "<>" else None


def record(
    git: Workspace,
    location: StoreLocation,
    commit: str,
    sources: list[str],
    fresh: Session | Lines[Author] | None,
) -> Written:
    """Write ``commit``'s notes: the notes of ``sources`` carried (a later source wins), and
    where they say nothing, ``fresh``: a session whose snapshots say it, or lines already known.
    The Agent Trace note is convgit's and is replaced; a Git AI note is written only where
    there is none, or where the one there is a copy of a source's (git copies notes through a
    rewrite) or convgit's own."""
    reader = Reader(git)
    with_notes: list[tuple[str, list[Any]]] = []
    for source in sources:
        trace, log = reader.trace(source), reader.log(source)
        if trace is not None or log is not None:
            with_notes.append((source, [trace or {}, log.files if log is not None else {}]))
    added, (trace_lines, key_lines) = _carried(git, commit, with_notes)
    mine: Lines[Author] = {}
    if isinstance(fresh, Session):
        mine = of_commit(fresh, git, commit, added)
    elif fresh is not None:
        mine = {
            p: {n: a for n, a in lines.items() if n in added.get(p, ())}
            for p, lines in fresh.items()
        }
    lines = overlay(trace_lines, mine, lambda a: a.known)
    done = Written(commit, sum(1 for v in lines.values() for a in v.values() if a.known))
    if done.lines:  # a commit no recorded line went into gets no note
        made = agent_trace.record(commit, lines, __version__)
        gitnotes.write(git, TRACE, commit, agent_trace.dumps(made))
        done.written.append(TRACE)
    else:
        _drop_copy(git, reader, TRACE, commit, sources)
    if not AttributionSettings.of(location).git_ai:
        return done
    fresh_log = git_ai.of_authors(commit, mine, _committer(git, commit))
    logs = [log for s, _ in with_notes if (log := reader.log(s)) is not None]
    files = overlay(key_lines, fresh_log.files, lambda _: True)
    log = git_ai.with_lines([*logs, fresh_log], commit, files)
    if not log.files:
        _drop_copy(git, reader, GIT_AI, commit, sources)
        return done
    there = gitnotes.read(git, GIT_AI, commit)
    copies = [d for s in sources if (d := reader.notes.note(GIT_AI, s)) is not None]
    if there is None or _copied(there, copies) or _convgits(there):
        gitnotes.write(git, GIT_AI, commit, git_ai.text(log))
        done.written.append(GIT_AI)
    else:
        done.kept.append(GIT_AI)
    return done


def _carried(
    git: Workspace, commit: str, with_notes: list[tuple[str, list[Any]]]
) -> tuple[dict[str, set[int]], tuple[Lines[Author], Lines[str]]]:
    added, kinds = carrying.carried(git, commit, with_notes)
    trace_lines: Lines[Author] = kinds[0] if kinds else {}
    key_lines: Lines[str] = kinds[1] if len(kinds) > 1 else {}
    return added, (trace_lines, key_lines)


def _copied(there: bytes, copies: list[bytes]) -> bool:
    """True for git's copy of a source's note (or the copies of several, joined, as git joins
    them when commits are squashed): its line numbers are the old commit's."""
    return there in copies or bool(copies and all(c.strip() in there for c in copies))


def _convgits(there: bytes) -> bool:
    """True for a Git AI log convgit wrote: every session in it is one of convgit's."""
    log = git_ai.parse(there)
    if log is None or log.prompts or not (log.sessions or log.humans):
        return False
    return all(
        isinstance(s, dict)
        and isinstance(s.get("custom_attributes"), dict)
        and git_ai.CONVGIT_SESSION in s["custom_attributes"]
        for s in log.sessions.values()
    )


def _drop_copy(git: Workspace, reader: Reader, ref: str, commit: str, sources: list[str]) -> None:
    """Take away git's copy of a source's note when none of its lines landed in ``commit``:
    its line numbers would name lines of this commit that no source wrote. (The source keeps
    its own note.)"""
    there = gitnotes.read(git, ref, commit)
    copies = [d for s in sources if (d := reader.notes.note(ref, s)) is not None]
    if there is not None and _copied(there, copies):
        gitnotes.remove(git, ref, commit)


# -- the hooks --


def _git_path(git: Workspace, name: str) -> Path:
    listed = git.run("rev-parse", "--path-format=absolute", "--git-path", name)
    return Path(os.fsdecode(listed.stdout).strip())


def _current(location: StoreLocation) -> Session | None:
    sid = location.current()
    if sid is None or not location.session_path(sid).exists():
        return None
    session = Session(location, sid)
    session.reload()
    return session


def on_commit(location: StoreLocation) -> Written | None:
    """The post-commit hook's part: the new commit's notes from the current session (and, for a
    cherry-pick, the picked commit's notes). Nothing during a rebase (the post-rewrite hook
    carries the notes), for an amend (the same), or for a merge."""
    git = Workspace.needed_by(location, SHARED_THROUGH_GIT)
    if any(_git_path(git, d).is_dir() for d in ("rebase-merge", "rebase-apply")):
        return None
    head = os.fsdecode(git.run("rev-parse", "HEAD").stdout).strip()
    if len(carrying.parents(git, head)) > 1:
        return None
    done = git.run("reflog", "-1", "--format=%gs", "HEAD", "--", check=False)
    if os.fsdecode(done.stdout).startswith("commit (amend)"):
        return None
    sources = []
    picked = _git_path(git, "CHERRY_PICK_HEAD")
    if picked.is_file():
        sources.append(picked.read_text().strip())
    return record(git, location, head, sources, _current(location))


def on_rewrite(location: StoreLocation, kind: str, rewritten: str) -> list[Written]:
    """The post-rewrite hook's part (``amend`` or ``rebase``, git's "old new" lines on stdin):
    each new commit's notes carried from the old ones it replaces; an amend's new lines from the
    current session."""
    git = Workspace.needed_by(location, SHARED_THROUGH_GIT)
    olds: dict[str, list[str]] = {}
    for line in rewritten.splitlines():
        words = line.split()
        if len(words) >= 2:
            olds.setdefault(words[1], []).append(words[0])
    fresh = _current(location) if kind == "amend" else None
    return [record(git, location, new, old, fresh) for new, old in olds.items()]


# -- convgit attribution rewrite --


def commits(git: Workspace, given: list[str]) -> list[str]:
    """The commits ``given`` names, oldest first: a revision is one commit, ``A..B`` a range."""
    out: list[str] = []
    for rev in given:
        if ".." in rev:
            done = git.run("rev-list", "--reverse", "--topo-order", rev, "--", check=False)
            if done.returncode != 0:
                raise NotFoundError(f"There is no range of commits {rev!r} in this repository.")
            out += os.fsdecode(done.stdout).split()
        else:
            out.append(git.commit_and_tree(rev)[0])
    return list(dict.fromkeys(out))


def rewrite(location: StoreLocation, targets: list[str], sources: list[str]) -> list[Written]:
    """``convgit attribution rewrite``: each target's notes carried from the ``sources``' (a
    later source winning), over what its own note says."""
    git = Workspace.needed_by(location, SHARED_THROUGH_GIT)
    into = commits(git, targets or ["HEAD"])
    source_commits = commits(git, sources)
    if not source_commits:
        raise UsageError("--from names no commit; nothing was written.")
    reader = Reader(git)
    out = []
    for target in into:
        if len(carrying.parents(git, target)) > 1:
            out.append(Written(target))
            continue
        own = reader.trace(target)
        out.append(record(git, location, target, [s for s in source_commits if s != target], own))
    return out
