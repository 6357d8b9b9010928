"""Commits that know their conversation: the trailers the ``prepare-commit-msg`` hook adds to a
commit's message (the session, and the entry whose snapshot the committed files match, or the
nearest), and reading them back for ``convgit why``. They are written only with
``[attribution] trailers = true``: the git notes of attribution carry the link without
changing the message (``commit_notes``); trailers already in commits are still read.

The committed files are the tree of the index being committed; the match is a snapshot of the
current session with that very tree, else, of its newest ``RECENT`` snapshots, the one with the
fewest files that differ.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convgit.git import names
from convgit.session import Session
from convgit.store.location import StoreLocation
from convgit.workspace import Workspace

RECENT = 50


@dataclass(frozen=True)
class Match:
    """Entry ``entry`` of ``session``, whose snapshot ``commit`` differs from the committed
    files in ``differ`` files (0: exactly them)."""

    session: str
    entry: str
    commit: str
    differ: int

    @property
    def words(self) -> str:
        return "exact" if self.differ == 0 else f"nearest, {self.differ} files differ"

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "entry": self.entry,
            "snapshot": self.commit,
            "exact": self.differ == 0,
            "differ": self.differ,
        }


def differing(git: Workspace, a: str, b: str) -> int:
    """How many files differ between trees (or commits) ``a`` and ``b``."""
    listed = git.run("diff-tree", "-r", "--name-only", "--no-renames", "-z", a, b).stdout
    return len([p for p in listed.split(b"\0") if p])


def match(session: Session, git: Workspace, tree_id: str) -> Match | None:
    """The snapshot of ``session`` whose files are ``tree_id``, else the nearest of its
    newest ``RECENT`` ones; None when it has none."""
    snapshots = list(session.track.sidecar.snapshots.values())
    for snap in reversed(snapshots):
        if snap.tree_id == tree_id:
            return Match(session.id, snap.entry, snap.commit, 0)
    best: Match | None = None
    for snap in reversed(snapshots[-RECENT:]):
        count = differing(git, tree_id, snap.tree_id)
        if best is None or count < best.differ:
            best = Match(session.id, snap.entry, snap.commit, count)
    return best


def index_tree() -> str:
    """The tree of the index a commit is being made from: git's own environment of a hook
    (``GIT_INDEX_FILE`` names that index), so run as git ran the hook."""
    done = subprocess.run(["git", "write-tree"], capture_output=True, check=True)
    return os.fsdecode(done.stdout).strip()


def add(git: Workspace, message: Path, found: Match) -> None:
    """Write the trailers of ``found`` into the commit message file (replacing convgit's own
    trailers, as on an amend)."""
    trailers = [
        (names.SESSION_TRAILER, found.session),
        (names.ENTRY_TRAILER, found.entry),
        (names.FILES_TRAILER, found.words),
    ]
    args = [arg for key, value in trailers for arg in ("--trailer", f"{key}: {value}")]
    git.run(
        "interpret-trailers", "--in-place", "--if-exists", "replace", *args, str(message.resolve())
    )


def read(git: Workspace, commit: str) -> dict[str, str]:
    """convgit's trailers of ``commit`` (key -> value; the last of a key wins)."""
    listed = git.run("log", "-1", "--format=%(trailers:only,unfold)", commit, "--").stdout
    found: dict[str, str] = {}
    for line in os.fsdecode(listed).splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in (names.SESSION_TRAILER, names.ENTRY_TRAILER, names.FILES_TRAILER):
            found[key.strip()] = value.strip()
    return found


def on_commit(location: StoreLocation, args: list[str]) -> Match | None:
    """The ``prepare-commit-msg`` hook's part (``MESSAGE-FILE [SOURCE [SHA]]``): the trailers of
    the current session's snapshot the committed files match, or the nearest; none for a merge
    or a squash, or when there is no current session or no snapshot, or unless
    ``[attribution] trailers = true``."""
    from convgit.sharing.settings import AttributionSettings

    if not args or (len(args) > 1 and args[1] in ("merge", "squash")):
        return None
    if not AttributionSettings.of(location).trailers:
        return None
    sid = location.current()
    if sid is None or not location.session_path(sid).exists():
        return None
    from convgit.sharing.transport import SHARED_THROUGH_GIT

    git = Workspace.needed_by(location, SHARED_THROUGH_GIT)
    session = Session(location, sid)
    session.reload()
    found = match(session, git, index_tree())
    if found is not None:
        add(git, Path(args[0]), found)
    return found
