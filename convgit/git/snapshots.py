"""A snapshot: the files of the working tree as a commit, staged through the private index.
Writes objects only: no ref, no hook, no signature, no file touched."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from convgit.base.valueclass import valueclass
from convgit.git import rules
from convgit.git.index.private_index import PrivateIndex
from convgit.git.restore.plan import LeftAlone

if TYPE_CHECKING:
    from convgit.git.patching import Patcher


@valueclass(frozen=True)
class Snapshot:
    """A snapshot commit and its tree id. ``reused`` is true when the parent had the same tree
    and was returned; ``written`` is about how many objects the snapshot added."""

    commit: str
    tree_id: str
    files: int
    skipped: tuple[LeftAlone, ...]
    reused: bool
    written: int = 0
    rules: str = ""  # the id of the ignore rules outside the working tree (``rules``)


def take(
    private: PrivateIndex,
    *,
    message: str,
    parent: str | None,
    size_cap: int,
    rules_home: Path | None = None,
    max_files: int = 0,
) -> Snapshot:
    """The files now as a commit with ``parent`` as its only parent (none when None), or the
    parent itself (``reused``) when it has the same tree. The ignore rules outside the working
    tree are recorded in ``rules_home`` (``rules``), when given. ``max_files`` (0: no cap):
    more new or changed files than that, and nothing is written (SnapshotSkippedError)."""
    git = private.git
    patcher = _serving(git.root)  # the recorder's: patched from what changed
    with private.locked():
        commit = parent_tree_id = ""
        if parent is not None:  # first: a parent git collected is refused before any staging
            known_commit, known_tree_id = private.last_snapshot()
            if parent == known_commit:  # the last snapshot of this index: no need to ask git
                commit, parent_tree_id = known_commit, known_tree_id
            else:
                commit, parent_tree_id = git.commit_and_tree(parent)
        since = parent_tree_id or None  # a turn's files are counted from its parent's
        if patcher is None:
            tree_id, skipped, hashed = private.stage(size_cap, max_files, since)
            files = private.file_count()
            rule_files = private.rule_files() if rules_home is not None else None
        else:
            taken = patcher.stage(private, size_cap, max_files, since)
            tree_id, skipped, hashed, files = (
                taken.tree_id,
                taken.skipped,
                taken.hashed,
                taken.files,
            )
            rule_files = taken.rule_files
        rules_id = ""
        if rules_home is not None and rule_files is not None:
            cache = Path(f"{private.path}.rules")
            rules_id = rules.record(rule_files, cache, rules_home)
        parents: list[str] = []
        if parent is not None:
            if parent_tree_id == tree_id:
                return Snapshot(parent, tree_id, files, skipped, reused=True, rules=rules_id)
            parents = [commit]
        if patcher is None:
            made = git.commit_tree(tree_id, parents, message)
        else:
            made = patcher.commit(git, tree_id, parents, message)
        private.remember_snapshot(made, tree_id)
    # a blob per file git hashed, and about two trees and a commit
    written = hashed + 3
    return Snapshot(made, tree_id, files, skipped, reused=False, written=written, rules=rules_id)


def _serving(root: Path) -> Patcher | None:
    """The patcher that takes this process's snapshots of ``root`` (the recorder's), if any.
    Only a process that serves one has imported ``patching``: a hook or a command without a
    recorder does not pay for importing it."""
    if "convgit.git.patching" not in sys.modules:
        return None
    from convgit.git import patching

    return patching.serving(root)
