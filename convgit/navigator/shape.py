"""Where each entry goes in the navigator's tree, and what a search finds: values only, no
terminal. The active path is one column at the top; at each fork point on a line, the branches
that leave it hang below the fork point as folds of their own, each one a line again. A tree as
deep as its forks would need a column per fork (a long session forks hundreds of times); this
one is as deep as the turns off the way the context took."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from convgit.base import codec
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


def places(
    children: Mapping[str | None, Sequence[str]],
    on_path: Collection[str],
    *,
    stable: bool = False,
) -> list[Place]:
    """Every entry reachable from the roots, parents before children; a line follows the
    child on the active path at a fork (else the first written; with ``stable``, always the
    first written, so the picture stays put when the context moves), the others start
    branches."""

    def kids(node: str | None) -> list[str]:
        found = list(children.get(node, ()))
        return found if stable else sorted(found, key=lambda i: i not in on_path)

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


WINDOW = 200  # a line longer than twice this is drawn as folds of this many, then its end


@dataclass(frozen=True)
class Fold:
    """Entries ``start`` to ``end`` (exclusive) of the line below ``under``, folded into one row
    until opened: a long line's older part (its newest entries are drawn as they are)."""

    under: str | None
    start: int
    end: int


class Layout:
    """The places, by what they hang below: a thing the tree draws is an entry (its id) or a
    fold of a long line; a tree node is made only when what it hangs below is opened, so a
    session of any length starts as fast as a short one."""

    def __init__(self, found: list[Place]) -> None:
        self.place = {p.entry: p for p in found}
        self.below: dict[str | None, list[str]] = {}
        for p in found:
            self.below.setdefault(p.under, []).append(p.entry)
        self._at = {ident: n for line in self.below.values() for n, ident in enumerate(line)}

    def rows(self, under: str | None) -> list[str | Fold]:
        """What is drawn directly below ``under``: its older entries in folds of ``WINDOW``,
        while at least ``WINDOW`` entries stay after them, then those entries."""
        line = self.below.get(under, [])
        cut = 0 if len(line) < 2 * WINDOW else (len(line) - WINDOW) // WINDOW * WINDOW
        folds: list[str | Fold] = [
            Fold(under, start, start + WINDOW) for start in range(0, cut, WINDOW)
        ]
        return folds + line[cut:]

    def fold_of(self, ident: str) -> Fold | None:
        """The fold ``ident`` is in, if its line folds it."""
        under = self.place[ident].under
        for row in self.rows(under):
            if isinstance(row, Fold) and row.start <= self._at[ident] < row.end:
                return row
            if not isinstance(row, Fold):
                break
        return None

    def folded(self, fold: Fold) -> list[str]:
        return self.below.get(fold.under, [])[fold.start : fold.end]

    def drawing_order(self) -> list[str]:
        """Every entry in the order the tree draws them with every fold open."""
        out: list[str] = []
        stack: list[str | None] = [None]
        while stack:  # each entry is followed by what hangs below it
            under = stack.pop()
            if under is not None:
                out.append(under)
            stack.extend(reversed(self.below.get(under, [])))
        return out

    def route(self, ident: str) -> list[str | Fold]:
        """What must be opened, from the top, for ``ident`` to be drawn; ``ident`` last."""
        out: list[str | Fold] = [ident]
        node: str | None = ident
        while node is not None:
            fold = self.fold_of(node)
            if fold is not None:
                out.append(fold)
            node = self.place[node].under
            if node is not None:
                out.append(node)
        return out[::-1]


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
