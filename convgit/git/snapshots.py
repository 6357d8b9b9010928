"""A snapshot: the files of the working tree as a commit, staged through the private index.
Writes objects only: no ref, no hook, no signature, no file touched."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from convgit.git import rules
from convgit.git.index.private_index import PrivateIndex
from convgit.git.restore.plan import Skipped


@dataclass(frozen=True)
class Snapshot:
    """A snapshot commit and its tree id. ``reused`` is true when the parent had the same tree
    and was returned; ``written`` is about how many objects the snapshot added."""

    commit: str
    tree_id: str
    files: int
    skipped: tuple[Skipped, ...]
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
) -> Snapshot:
    """The files now as a commit with ``parent`` as its only parent (none when None), or the
    parent itself (``reused``) when it has the same tree. The ignore rules outside the working
    tree are recorded in ``rules_home`` (``rules``), when given."""
    git = private.git
    with private.locked():
        tree_id, skipped, hashed = private.stage(size_cap)
        files = private.file_count()
        rules_id = ""
        if rules_home is not None:
            cache = Path(f"{private.path}.rules")
            rules_id = rules.record(private.rule_files(), cache, rules_home)
        parents: list[str] = []
        if parent is not None:
            known_commit, known_tree_id = private.last_snapshot()
            if parent == known_commit:  # the last snapshot of this index: no need to ask git
                commit, parent_tree_id = known_commit, known_tree_id
            else:
                commit, parent_tree_id = git.commit_and_tree(parent)
            if parent_tree_id == tree_id:
                return Snapshot(parent, tree_id, files, skipped, reused=True, rules=rules_id)
            parents = [commit]
        made = git.commit_tree(tree_id, parents, message)
        private.remember_snapshot(made, tree_id)
    # a blob per file git hashed, and about two trees and a commit
    written = hashed + 3
    return Snapshot(made, tree_id, files, skipped, reused=False, written=written, rules=rules_id)
