"""``convgit blame FILE``: for each line of a file as it is now, what last changed it: a turn
of the agent (its entry, the prompt it answered, the agent and the model), a hand edit recorded
at a user's entry, a commit of the user's history from before the session, or nothing recorded
yet (changed since the last snapshot).

git does the line tracking. The snapshots on the active path where the file changed are laid
as a chain of commits (each the snapshot's own tree, convgit's identity, no ref: git gc takes
them) on top of the user's commit at the session's start (the newest commit of HEAD made before
the session was created), topped by a commit of the file as it is now, and ``git blame`` runs
over that chain: a line it
gives to a chain commit is that entry's, one it gives to an older commit is the user's, one it
gives to the commit of the file as it is now is not recorded yet.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convgit.base.errors import NotFoundError
from convgit.git.run import Git
from convgit.schema import text_of
from convgit.session import Session


@dataclass(frozen=True)
class Source:
    """What last changed some lines: ``kind`` "turn", "hand edit", "commit" or "not recorded
    yet", with the entry's or the commit's particulars."""

    kind: str
    entry: str | None = None
    prompt: str | None = None  # for a turn: the user message it answered
    agent: str | None = None
    model: str | None = None
    commit: str | None = None  # for a commit of the user's history
    author: str | None = None
    summary: str | None = None

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
        }


@dataclass
class Blame:
    path: str
    lines: list[tuple[str, Source]] = field(default_factory=list)  # (text, source)
    base: str | None = None  # the user's commit the chain stands on

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "base": self.base,
            "lines": [
                {"line": n, "text": text, **source.to_json()}
                for n, (text, source) in enumerate(self.lines, 1)
            ],
        }


def _base(git: Git, created: str | None) -> str | None:
    """HEAD's newest commit made before ``created`` (None: no such commit, or no HEAD)."""
    args = ["rev-list", "-1"] + ([f"--before={created}"] if created else []) + ["HEAD", "--"]
    done = git.run(*args, check=False)
    found = os.fsdecode(done.stdout).strip()
    return found if done.returncode == 0 and found else None


def _changes(git: Git, session: Session, path: str) -> list[tuple[str, str]]:
    """(entry, snapshot tree) of each snapshot on the active path where ``path`` changed."""
    snapshots = session.track.sidecar.snapshots
    found: list[tuple[str, str]] = []
    last: object = ()
    with git.objects() as objects:
        for ident in session.conversation.path_ids():
            snap = snapshots.get(ident)
            if snap is None:
                continue
            here = objects.lookup(snap.tree_id, path)
            if here != last:
                found.append((ident, snap.tree_id))
                last = here
    return found


def _chain(git: Git, base: str | None, changes: list[tuple[str, str]]) -> dict[str, str]:
    """Chain commits of the ``changes`` on ``base``: commit -> entry, the tip last."""
    made: dict[str, str] = {}
    parent = base
    for entry, tree_id in changes:
        parent = git.commit_tree(tree_id, [parent] if parent else [], f"convgit blame {entry}\n")
        made[parent] = entry
    return made


def _now(git: Git, tip: str | None, path: str, file: Path) -> str:
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
    return git.commit_tree(tree_id, [tip] if tip else [], "convgit blame: the files now\n")


def _entry_source(session: Session, entry: str) -> Source:
    record = session.conversation.tree.entries[entry]
    if record.get("type") == "message" and record.get("role") == "user":
        return Source("hand edit", entry)
    prompt = model = None
    for ident in reversed(session.conversation.path_ids(entry)):
        above = session.conversation.tree.entries[ident]
        if prompt is None and above.get("type") == "message" and above.get("role") == "user":
            prompt = " ".join(text_of(above).split())
        if model is None and above.get("type") == "model":
            model = str(above.get("model"))
        if model is None and above.get("type") == "message" and above.get("model"):
            model = str(above.get("model"))
    agent = session.conversation.header().get("agent")
    return Source("turn", entry, prompt, str(agent) if agent else None, model)


def blame(session: Session, git: Git, file: Path) -> Blame:
    root = session.track.workspace().root
    try:
        path = file.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        raise NotFoundError(f"{file} is not in the working tree at {root}.") from None
    if not file.is_file():
        raise NotFoundError(f"There is no file {path} in the working tree.")
    base = _base(git, session.conversation.header().get("created"))
    made = _chain(git, base, _changes(git, session, path))
    tip = next(reversed(made), base)
    now = _now(git, tip, path, file)
    listed = git.run("blame", "--porcelain", now, "--", path).stdout
    report = Blame(path, base=base)
    sources: dict[str, Source] = {}
    info: dict[str, dict[str, str]] = {}
    sha = ""
    for raw in listed.split(b"\n"):
        line = raw.decode("utf-8", "surrogateescape")
        if line.startswith("\t"):
            if sha not in sources:
                sources[sha] = _source(session, made, now, sha, info.get(sha, {}))
            report.lines.append((line[1:], sources[sha]))
        elif line and len(line.split(" ")[0]) in (40, 64) and line.split(" ")[0].isalnum():
            sha = line.split(" ")[0]
            info.setdefault(sha, {})
        elif " " in line and sha:
            key, _, value = line.partition(" ")
            info[sha].setdefault(key, value)
    return report


def _source(
    session: Session, made: dict[str, str], now: str, sha: str, info: dict[str, str]
) -> Source:
    if sha == now:
        return Source("not recorded yet")
    if sha in made:
        return _entry_source(session, made[sha])
    return Source("commit", commit=sha, author=info.get("author"), summary=info.get("summary"))
