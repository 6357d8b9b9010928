"""Lines carried from one commit to another, by git's own diff: what a history rewrite (a
rebase, an amend, a squash, a cherry-pick) does to a note's line numbers.

A line of a source commit lands in the target where the diff of the two versions of its file
keeps it; a line the diff changes or drops is not carried. Only the lines the target itself
added (against its first parent) are kept: a note speaks of its commit's own lines. The diffs of
every pair come from one ``git diff-tree --stdin -p -U0``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import TypeVar

from convgit.attribution import Lines
from convgit.git.plumbing import patches
from convgit.workspace import DIFF, Workspace

T = TypeVar("T")
DIFF_TREE = (
    "diff-tree", "--stdin", "-r", "-p", "-U0", "--no-renames", "--no-color", "--no-ext-diff",
    "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/",
)  # fmt: skip
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.M)


def parents(git: Workspace, commit: str) -> list[str]:
    listed = git.run("rev-list", "--parents", "-n", "1", commit, "--").stdout
    return os.fsdecode(listed).split()[1:]


def empty_tree(git: Workspace) -> str:
    return os.fsdecode(git.run("mktree", stdin=b"").stdout).strip()


def _hunks(patch: str) -> list[tuple[int, int, int, int]] | None:
    """(old start, old count, new start, new count) of each hunk; None for a binary file."""
    if "\nBinary files " in patch or patch.startswith("Binary files "):
        return None
    return [
        (int(a), int(b) if b else 1, int(c), int(d) if d else 1)
        for a, b, c, d in _HUNK.findall(patch)
    ]


def _added(hunks: list[tuple[int, int, int, int]]) -> set[int]:
    return {n for _, _, start, count in hunks for n in range(start, start + count)}


def _moves(hunks: list[tuple[int, int, int, int]], lines: list[int]) -> dict[int, int]:
    """Where each of the old ``lines`` is in the new version; a line the diff changes or drops
    is left out."""
    out: dict[int, int] = {}
    at, shift = 0, 0
    for line in sorted(lines):
        while at < len(hunks):
            start, count, _, new_count = hunks[at]
            last = start + count - 1 if count else start  # count 0: lines added after ``start``
            if last >= line:
                break
            shift += new_count - count  # the lines after a hunk move by what it added less took
            at += 1
        if at < len(hunks):
            start, count, _, _ = hunks[at]
            if count and start <= line < start + count:
                continue
        out[line] = line + shift
    return out


def trees(git: Workspace, commits: Sequence[str]) -> list[str]:
    """The tree of each commit (git echoes tree pairs back whole, as ``patches.split`` reads)."""
    listed = git.run("rev-parse", *(f"{c}^{{tree}}" for c in commits)).stdout
    return os.fsdecode(listed).split()


def diffs(git: Workspace, pairs: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    """The patch of every changed path (``-U0``), for each (old, new) pair of trees."""
    if not pairs:
        return []
    done = git.run(*DIFF_TREE, config=DIFF, stdin=patches.stdin(pairs))
    return patches.split(done.stdout, pairs)


def carried(
    git: Workspace, target: str, sources: Sequence[tuple[str, Sequence[Lines[T]]]]
) -> tuple[dict[str, set[int]], list[Lines[T]]]:
    """The lines ``target`` added (path -> line numbers), and each kind of lines of the
    ``sources`` (commit, [lines of one kind, lines of another, ...]) carried into it: a later
    source wins over an earlier on a line they both carry there."""
    first = parents(git, target)[:1]
    tree, *others = trees(git, [target, *first, *(commit for commit, _ in sources)])
    before = others.pop(0) if first else empty_tree(git)
    found = diffs(git, [(before, tree), *((other, tree) for other in others)])
    added: dict[str, set[int]] = {}
    for path, patch in found[0].items():
        hunks = _hunks(patch)
        if hunks:
            numbers = _added(hunks)
            if numbers:
                added[path] = numbers
    kinds = max((len(kinds) for _, kinds in sources), default=0)
    out: list[Lines[T]] = [{} for _ in range(kinds)]
    for (_, kinds_of), changed in zip(sources, found[1:], strict=True):
        for k, lines in enumerate(kinds_of):
            for path, numbered in lines.items():
                wanted = added.get(path)
                if not wanted:
                    continue
                given = changed.get(path)
                hunks = _hunks(given) if given is not None else []
                if hunks is None:
                    continue
                into = out[k].setdefault(path, {})
                for line, there in _moves(hunks, list(numbered)).items():
                    if there in wanted:
                        into[there] = numbered[line]
    return added, [{p: lines for p, lines in kind.items() if lines} for kind in out]
