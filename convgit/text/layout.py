"""Where each entry of a conversation tree is drawn, for ``convgit tree`` and the html page alike.

A straight run of entries is one column; connectors appear only where the conversation forks,
so a sibling is never mistaken for a child. At a fork the branch on the active path comes first
(or, asked for a stable picture, the branch written first).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    """One entry's line: ``prefix`` is the drawing before it (``├─ ``, ``│  ``...), ``depth``
    the number of forks above it, ``head`` true for the first entry of a branch at a fork."""

    entry: str
    prefix: str
    depth: int
    head: bool


def rows(
    children: Mapping[str | None, Sequence[str]],
    on_path: Collection[str],
    *,
    stable: bool = False,
) -> list[Row]:
    """Every entry reachable from the roots (``children[None]``), in drawing order. At a fork
    the branch on the active path comes first; with ``stable``, branches keep the order they
    were written in, so the picture does not move when the context does."""

    def branches(kids: Sequence[str], prefix: str, depth: int) -> list[tuple[str, str, str, int]]:
        if not stable:
            kids = sorted(kids, key=lambda i: i not in on_path)
        last = len(kids) - 1
        return [
            (
                k,
                prefix + ("└─ " if j == last else "├─ "),
                prefix + ("   " if j == last else "│  "),
                depth,
            )
            for j, k in enumerate(kids)
        ]

    out: list[Row] = []
    roots = children.get(None, [])
    if len(roots) > 1:
        stack = list(reversed(branches(roots, "", 1)))
    else:
        stack = [(r, "", "", 0) for r in roots]
    while stack:  # (entry, prefix of its line, prefix of the lines that continue its branch)
        node, prefix, rest, depth = stack.pop()
        head = bool(prefix)
        while True:
            out.append(Row(node, prefix, depth, head))
            prefix, head = rest, False
            kids = children.get(node, [])
            if len(kids) == 1:
                node = kids[0]
                continue
            stack.extend(reversed(branches(kids, rest, depth + 1)))
            break
    return out
