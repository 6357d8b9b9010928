"""The paths that differ between pairs of trees, many pairs in one ``git diff-tree --stdin``: what
each snapshot changed against the one before it on its path (the search index's files).

git echoes each input line (``<tree> <tree>``) before that pair's names, which are NUL-ended
(``-z``: a name is as git keeps it, never C-quoted). Renames are off, so a file moved is both
of its names."""

from __future__ import annotations

import os
from collections.abc import Sequence

from convgit.git.plumbing.run import Git

_DIFF_TREE = ("diff-tree", "--stdin", "-r", "-z", "--name-only", "--no-renames")


def changed_paths(git: Git, pairs: Sequence[tuple[str, str]]) -> list[list[str]]:
    """For each (old tree, new tree) of ``pairs``, the paths whose content or mode differ, in
    git's order; one git process for them all."""
    if not pairs:
        return []
    given = b"".join(f"{old} {new}\n".encode() for old, new in pairs)
    out = git.run(*_DIFF_TREE, stdin=given).stdout
    found: list[list[str]] = []
    at = 0
    for number, (old, new) in enumerate(pairs):
        header = f"{old} {new}\n".encode()
        if not out.startswith(header, at):
            raise ValueError(f"git diff-tree did not echo pair {number + 1}")
        at += len(header)
        nxt = pairs[number + 1] if number + 1 < len(pairs) else None
        following = f"{nxt[0]} {nxt[1]}\n".encode() if nxt else None
        names: list[str] = []
        while at < len(out) and not (following is not None and out.startswith(following, at)):
            end = out.index(b"\0", at)
            names.append(os.fsdecode(out[at:end]))
            at = end + 1
        found.append(names)
    return found
