"""Short ids: how an entry's id is shown where people read it. An id is cut to
``SHORT_ID_LENGTH`` characters, and longer only where that prefix is shared with another id
of the same conversation, so every short id is a prefix that ``convgit`` resolves back to
exactly one entry. Full ids stay in ``--json`` and in every file convgit writes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Set
from operator import itemgetter

SHORT_ID_LENGTH = 8
_CUT = itemgetter(slice(SHORT_ID_LENGTH))


class ShortIds:
    """The short form of each id among ``ids`` (an entry tree's ids, imported UUIDs
    included). Built once per view, and only as far as asked, so a command that shows a few
    entries of a long session does not sort all of its ids: a count of the ids' first
    ``SHORT_ID_LENGTH`` characters (none when no id is longer), and for an id whose cut is
    shared, the ids that share it, sorted."""

    def __init__(self, ids: Iterable[str]) -> None:
        # unique ids that answer ``in`` (an index's dict of entries is taken as it is)
        self._ids: Collection[str] = ids if isinstance(ids, (Mapping, Set)) else set(ids)
        self._cuts: Counter[str] | None = None
        self._shared: dict[str, list[str]] = {}
        self._short: dict[str, str] = {}

    def short(self, ident: str) -> str:
        """``ident``'s short form; an id this view does not know is cut to the usual length."""
        known = self._short.get(ident)
        if known is not None:
            return known
        if self._cuts is None:
            # convgit's own ids are 8 characters: none can share its cut with another
            longer = max(map(len, self._ids), default=0) > SHORT_ID_LENGTH
            self._cuts = Counter(map(_CUT, self._ids)) if longer else Counter()
        cut = ident[:SHORT_ID_LENGTH]
        if self._cuts[cut] < 2 or ident not in self._ids:
            return cut
        self._short.update(_sharing(self._shared_by(cut)))
        return self._short[ident]

    __call__ = short

    def _shared_by(self, cut: str) -> list[str]:
        if not self._shared:  # every id whose cut another shares, by its cut, once
            assert self._cuts is not None
            for ident in sorted(i for i in self._ids if self._cuts[i[:SHORT_ID_LENGTH]] > 1):
                self._shared.setdefault(ident[:SHORT_ID_LENGTH], []).append(ident)
        return self._shared[cut]


def _sharing(ordered: list[str]) -> Iterable[tuple[str, str]]:
    """The short forms of ``ordered`` (sorted ids sharing their first ``SHORT_ID_LENGTH``
    characters): each one character longer than what it shares with a neighbour. Ids sharing
    less than that with every other are never here: their short form is their cut."""
    for index, ident in enumerate(ordered):
        length = SHORT_ID_LENGTH
        for neighbour in (
            ordered[index - 1] if index else None,
            ordered[index + 1] if index + 1 < len(ordered) else None,
        ):
            if neighbour is not None:
                length = max(length, _common_prefix(ident, neighbour) + 1)
        yield ident, ident[:length]


def _common_prefix(a: str, b: str) -> int:
    size = 0
    for x, y in zip(a, b, strict=False):  # the shorter one ends the comparison
        if x != y:
            break
        size += 1
    return size
