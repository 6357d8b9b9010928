"""Short ids: how an entry's id is shown where people read it. An id is cut to
``SHORT_ID_LENGTH`` characters, and longer only where that prefix is shared with another id
of the same conversation, so every short id is a prefix that ``convgit`` resolves back to
exactly one entry. Full ids stay in ``--json`` and in every file convgit writes."""

from __future__ import annotations

from collections.abc import Iterable

SHORT_ID_LENGTH = 8


class ShortIds:
    """The short form of each id among ``ids`` (an entry tree's ids, imported UUIDs
    included). Built once per view: ``short`` is a dictionary lookup."""

    def __init__(self, ids: Iterable[str]) -> None:
        ordered = sorted(set(ids))
        self._short: dict[str, str] = {}
        for index, ident in enumerate(ordered):
            length = SHORT_ID_LENGTH
            for neighbour in (
                ordered[index - 1] if index else None,
                ordered[index + 1] if index + 1 < len(ordered) else None,
            ):
                if neighbour is not None:
                    length = max(length, _common_prefix(ident, neighbour) + 1)
            self._short[ident] = ident[:length]

    def short(self, ident: str) -> str:
        """``ident``'s short form; an id this view does not know is cut to the usual length."""
        return self._short.get(ident) or ident[:SHORT_ID_LENGTH]

    __call__ = short


def _common_prefix(a: str, b: str) -> int:
    size = 0
    for x, y in zip(a, b, strict=False):  # the shorter one ends the comparison
        if x != y:
            break
        size += 1
    return size
