"""Comparing two git trees in-process: only subtrees whose ids differ are opened, so the cost
follows the change, not the size of the tree. Works on pygit2 objects handed in by the
workspace (this module never imports pygit2 itself), and validates a tree before a restore
writes anything from it.
"""

from __future__ import annotations

import os
from typing import Any

from convgit.errors import RefusedError
from convgit.restoreplan import BLOB, FILE_MODES, LEGACY_BLOB, TREE, Delta, bad_name


class HostileSnapshotError(RefusedError):
    """A snapshot whose tree would write outside the working tree, into .git or through a link."""


def diff(
    repo: Any, a: Any, b: Any, *, validate: bool = False, ignore_case: bool = False
) -> list[Delta]:
    """File-level deltas from tree ``a`` to tree ``b`` (pygit2 trees of ``repo``; None is an
    empty tree), sorted by path. A file replaced by a folder is a deletion plus additions;
    file <-> symlink is a typechange. With ``validate``, ``b`` is checked as a checkout would
    need it (names, modes, duplicates, case folding when ``ignore_case``): a hostile tree is
    refused (HostileSnapshotError) before anything is returned."""
    out: list[Delta] = []
    _diff_into(repo, out, a, b, "", validate, validate and ignore_case)
    out.sort(key=lambda d: d.path)
    return out


def _diff_into(
    repo: Any, out: list[Delta], a: Any, b: Any, prefix: str, validate: bool, folding: bool
) -> None:
    old = _entries(a, prefix, False, False)
    new = _entries(b, prefix, validate, folding)
    for name in old.keys() | new.keys():
        x, y = old.get(name), new.get(name)
        if x == y:
            continue
        path = prefix + name
        x_tree = x is not None and x[0] == TREE
        y_tree = y is not None and y[0] == TREE
        if x_tree or y_tree:
            _diff_into(
                repo,
                out,
                repo[x[1]] if x is not None and x_tree else None,
                repo[y[1]] if y is not None and y_tree else None,
                path + "/",
                validate,
                folding,
            )
        x_file = None if x is None or x_tree else x
        y_file = None if y is None or y_tree else y
        if x_file and y_file:
            kinds_differ = (x_file[0] ^ y_file[0]) & 0o170000
            out.append(Delta(path, "typechange" if kinds_differ else "modified", x_file, y_file))
        elif x_file:
            out.append(Delta(path, "deleted", x_file, None))
        elif y_file:
            out.append(Delta(path, "added", None, y_file))


def _entries(
    tree: Any, prefix: str, validate: bool, ignore_case: bool
) -> dict[str, tuple[int, str]]:
    entries: dict[str, tuple[int, str]] = {}
    if tree is None:
        return entries
    folded: set[str] = set()
    for item in tree:
        name = os.fsdecode(item.raw_name)
        mode = BLOB if item.filemode == LEGACY_BLOB else int(item.filemode)
        if validate:
            shown = prefix + name
            if bad_name(name):
                raise HostileSnapshotError(
                    f"The snapshot holds the path {shown!r}, which would escape the working "
                    "tree or write into .git; nothing was restored."
                )
            if mode != TREE and mode not in FILE_MODES:
                raise HostileSnapshotError(
                    f"The snapshot holds {shown!r} with file mode {mode:o}; nothing was restored."
                )
            key = name.casefold() if ignore_case else name
            if name in entries or key in folded:
                raise HostileSnapshotError(
                    f"The snapshot holds {shown!r} twice (a file and a folder, or two "
                    "spellings of one name); nothing was restored."
                )
            folded.add(key)
        entries[name] = (mode, str(item.id))
    return entries
