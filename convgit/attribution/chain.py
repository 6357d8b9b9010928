"""git's own line tracking over a session's snapshots, for ``blame`` and for a commit's
attribution (``commit_notes``).

The snapshots on the active path where some files changed are laid as a chain of commits (each
the snapshot's own tree, convgit's identity, no ref: git gc takes them) on a commit of the
user's, and a commit of the files to judge is put on top; ``git blame --porcelain`` over it gives
each line the commit that brought it: a chain commit is that entry's, the top is recorded by no
snapshot, anything older is the user's history.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from convgit.schema import text_of
from convgit.session import Session
from convgit.workspace import Workspace


@dataclass(frozen=True)
class Blamed:
    """One line as ``git blame`` gives it: its text, the commit that brought it, its number
    and path in that commit's version of the file, and that commit's author and summary."""

    text: str
    commit: str
    line: int
    path: str
    author: str | None = None
    summary: str | None = None


@dataclass(frozen=True)
class Facts:
    """What the session says of an entry whose snapshot brought lines."""

    hand: bool  # a user's entry: the files as they were when the prompt was sent
    prompt: str | None = None
    agent: str | None = None
    agent_session: str | None = None
    model: str | None = None
    provider: str | None = None


@dataclass
class Chain:
    """Chain commits (commit -> entry) on ``base``; ``tip`` is the last (``base`` when none)."""

    base: str | None
    made: dict[str, str] = field(default_factory=dict)

    @property
    def tip(self) -> str | None:
        return next(reversed(self.made), self.base)


def changes(git: Workspace, session: Session, paths: list[str]) -> list[tuple[str, str]]:
    """(entry, snapshot tree) of each snapshot on the active path where one of ``paths``
    changed."""
    snapshots = session.track.sidecar.snapshots
    found: list[tuple[str, str]] = []
    last: object = ()
    last_tree: str | None = None
    with git.objects() as objects:
        for ident in session.conversation.path_ids():
            snap = snapshots.get(ident)
            if snap is None or snap.tree_id == last_tree:
                continue
            here = tuple(objects.lookup(snap.tree_id, path) for path in paths)
            if here != last:
                found.append((ident, snap.tree_id))
                last = here
            last_tree = snap.tree_id
    return found


def missing(git: Workspace, session: Session) -> bool:
    """True when a snapshot of the active path is not in this repository (its refs are gone:
    a clone that fetched no session, a gc that let it go)."""
    trees = {
        snap.tree_id
        for ident in session.conversation.path_ids()
        if (snap := session.track.sidecar.snapshots.get(ident)) is not None
    }
    if not trees:
        return False
    asked = "".join(f"{t}\n" for t in sorted(trees)).encode()
    listed = git.run("cat-file", "--batch-check", stdin=asked).stdout
    return any(line.endswith(b" missing") for line in listed.splitlines())


def lay(git: Workspace, base: str | None, found: list[tuple[str, str]]) -> Chain:
    """Chain commits of ``found`` on ``base``."""
    chain = Chain(base)
    parent = base
    for entry, tree_id in found:
        parent = git.commit_tree(tree_id, [parent] if parent else [], f"convgit blame {entry}\n")
        chain.made[parent] = entry
    return chain


def top(git: Workspace, tip: str | None, tree_id: str) -> str:
    """A commit of ``tree_id`` on ``tip``: what git gives to it is recorded by no snapshot."""
    return git.commit_tree(tree_id, [tip] if tip else [], "convgit blame: the files judged\n")


def blame(git: Workspace, rev: str, path: str) -> list[Blamed]:
    """``git blame --porcelain`` of ``path`` at ``rev``, line by line."""
    listed = git.run("blame", "--porcelain", rev, "--", path).stdout
    out: list[Blamed] = []
    info: dict[str, dict[str, str]] = {}
    sha, number, where = "", 0, path
    for raw in listed.split(b"\n"):
        line = raw.decode("utf-8", "surrogateescape")
        if line.startswith("\t"):
            said = info.get(sha, {})
            out.append(
                Blamed(line[1:], sha, number, where, said.get("author"), said.get("summary"))
            )
            continue
        words = line.split(" ")
        if len(words) >= 3 and len(words[0]) in (40, 64) and words[0].isalnum():
            sha, number = words[0], int(words[1])
            info.setdefault(sha, {})
        elif words[0] == "filename" and sha:
            where = os.fsdecode(line[len("filename ") :].encode("utf-8", "surrogateescape"))
        elif len(words) > 1 and sha:
            info[sha].setdefault(words[0], line.partition(" ")[2])
    return out


def facts(session: Session, entry: str) -> Facts:
    """The prompt a turn answered, the agent and the model (a user's entry: a hand edit)."""
    record = session.conversation.tree.entries[entry]
    header = session.conversation.header()
    agent = header.get("agent")
    agent_session = header.get("agentSession")
    if record.get("type") == "message" and record.get("role") == "user":
        return Facts(True)
    prompt = model = provider = None
    for ident in reversed(session.conversation.path_ids(entry)):
        above = session.conversation.tree.entries[ident]
        if prompt is None and above.get("type") == "message" and above.get("role") == "user":
            prompt = " ".join(text_of(above).split())
        if model is None and above.get("type") == "model":
            model, provider = str(above.get("model")), above.get("provider")
        if model is None and above.get("type") == "message" and above.get("model"):
            model, provider = str(above.get("model")), above.get("provider")
    return Facts(
        False,
        prompt,
        str(agent) if agent else None,
        str(agent_session) if agent_session else None,
        model,
        str(provider) if isinstance(provider, str) and provider else None,
    )
