"""Where each entry goes in the navigator's tree, and what a search finds: values only, no
terminal. The active path is one column at the top; at each fork point on a line, the branches
that leave it hang below the fork point as folds of their own, each one a line again. A tree as
deep as its forks would need a column per fork (a long session forks hundreds of times); this
one is as deep as the turns off the way the context took."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from convgit import codec
from convgit.conversation.view import SessionView


@dataclass(frozen=True)
class Place:
    """``entry`` hangs below ``under`` (None: the top); ``head``: it starts a branch that leaves
    its parent's line, and the rest of that branch hangs below it; ``size``: for a head, the
    entries of its branch, itself and every branch off it included."""

    entry: str
    under: str | None
    head: bool
    size: int = 1


def places(children: Mapping[str | None, Sequence[str]], on_path: Collection[str]) -> list[Place]:
    """Every entry reachable from the roots, parents before children; a line follows the
    child on the active path at a fork (else the first written), the others start branches."""

    def kids(node: str | None) -> list[str]:
        return sorted(children.get(node, ()), key=lambda i: i not in on_path)

    out: list[Place] = []
    roots = kids(None)
    # (first entry of a line, the node it hangs under, whether it starts a branch)
    stack: list[tuple[str, str | None, bool]] = [(r, None, True) for r in reversed(roots[1:])]
    stack += [(r, None, False) for r in roots[:1]]
    while stack:
        node, under, head = stack.pop()
        line = node if head else under
        out.append(Place(node, under, head))
        while True:
            below = kids(node)
            stack.extend((side, node, True) for side in reversed(below[1:]))
            if not below:
                break
            node = below[0]
            out.append(Place(node, line, False))
    return _sized(out)


def _sized(found: list[Place]) -> list[Place]:
    """``found`` with each head's ``size``: itself and everything placed below it."""
    count = {p.entry: 1 for p in found}
    for place in reversed(found):  # children come after their parents
        if place.under is not None:
            count[place.under] += count[place.entry]
    return [Place(p.entry, p.under, p.head, count[p.entry]) if p.head else p for p in found]


def matches(view: SessionView, query: str, order: Iterable[str]) -> list[str]:
    """The entries of ``order`` that ``query`` (any case) names: an id or short id it starts,
    a label, or words of the record (its text, tool calls and their inputs, where file names
    are, tool results)."""
    wanted = query.strip().lower()
    if not wanted:
        return []
    found = []
    for ident in order:
        label = view.labels.get(ident, "")
        if (
            ident.startswith(wanted)
            or wanted in label.lower()
            or wanted in _words(view.entries[ident])
        ):
            found.append(ident)
    return found


def _words(record: Mapping[str, Any]) -> str:
    shown = {k: v for k, v in record.items() if k not in ("id", "parentId", "ts")}
    return codec.dumps(shown).lower()
