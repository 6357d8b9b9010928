"""The lines of ``convgit search``, as spans of text and style (rich's style words): one line per
result, cut to the terminal's width. No import here: a search's plain output (to a pipe, a
file, the pager) is written without the colour library."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from convgit.search.query import Result

Line = list[tuple[str, str]]  # (text, style) spans


def search_lines(
    results: Sequence[Result], more: bool, limit: int, width: int | None
) -> list[Line]:
    """One line per result, newest first: the short id, the date, the agent, the role, the
    session's name, the words around the match (the matches highlighted) and the command that
    shows the entry; cut to ``width`` columns on a terminal (the words give way)."""
    if not results:
        return [[("nothing found", "")]]
    lines: list[Line] = []
    for found in results:
        head = f"  {found.ts[:16].replace('T', ' ')}  {found.agent or 'convgit'}"
        head += f"  {found.kind or 'entry'}" + (f"  [{found.name}]" if found.name else "") + "  "
        where = {"label": "label: ", "name": "session: "}.get(found.found_in, "")
        if found.found_in in ("label", "name"):
            words = str(found.label if found.found_in == "label" else found.name)
            snippet, spans = words, _spans(words, found.terms)
        else:
            snippet, spans = found.snippet, found.matches
        hint = f"  ({found.show})"
        if width is not None:
            room = max(width - len(found.short) - len(head) - len(hint) - len(where), 8)
            if len(snippet) > room:
                snippet = snippet[: room - 1] + "…"
        line: Line = [(found.short, "yellow"), (head, ""), (where, "dim")]
        at = 0
        for start, end in spans:
            if start >= len(snippet):
                break
            line += [(snippet[at:start], ""), (snippet[start:end], "bold red")]
            at = end
        line += [(snippet[at:], ""), (hint, "dim")]
        lines.append(line)
    if more:
        lines.append([(f"more were found: -n {limit * 2} shows more, or narrow the search", "")])
    return lines


def _spans(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    """Where the words asked for are in a label or a session's name."""
    spans = []
    lowered = text.lower()
    for term in terms:
        at = lowered.find(term.lower()) if term else -1
        while at >= 0:
            spans.append((at, at + len(term)))
            at = lowered.find(term.lower(), at + len(term))
    return sorted(spans)
