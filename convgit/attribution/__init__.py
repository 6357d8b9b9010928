"""Attribution: who wrote each line a commit added. convgit says it from a session's snapshots
(``commit_notes``): a turn of an agent (``ai``: the session, the entry, the agent and the model),
a hand edit (``human``: the user's entry it was recorded at), or lines no snapshot of the session
has (``unknown``). Two git notes carry it to other tools (``agent_trace``, ``git_ai``), and
``carrying`` moves it through history rewrites.

``Lines`` is the shape every part works on: path -> line number (1-based, in the commit's version
of the file) -> what wrote that line (an ``Author``, or a Git AI attestation key).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

AI = "ai"
HUMAN = "human"
UNKNOWN = "unknown"
KINDS = (AI, HUMAN, UNKNOWN)

T = TypeVar("T")
Lines = dict[str, dict[int, T]]


@dataclass(frozen=True)
class Author:
    """What wrote some lines, as convgit recorded it (or as another tool's Agent Trace record
    says: then ``link`` and ``model_id`` are its own, and convgit's fields are None)."""

    kind: str  # AI, HUMAN or UNKNOWN
    session: str | None = None  # the convgit session that recorded the lines
    entry: str | None = None  # its entry: the turn, or the user's entry of a hand edit
    agent: str | None = None  # the agent the session records (``claude-code``)
    agent_session: str | None = None  # and the agent's own id of that session
    model: str | None = None  # as the session names it
    provider: str | None = None  # the model's provider, when the session says it
    link: str | None = None  # another tool's conversation URL, kept as it was
    foreign_model: str | None = None  # another tool's model id, kept as it was
    human: str | None = None  # a known human (``Name <email>``), as a Git AI note names one

    @property
    def known(self) -> bool:
        """True when something wrote these lines that a reader can name (not ``unknown``)."""
        return self.kind != UNKNOWN


def spans(numbers: Iterable[int]) -> list[tuple[int, int]]:
    """Line numbers as sorted, merged inclusive ranges: {1, 2, 3, 7} -> [(1, 3), (7, 7)]."""
    out: list[tuple[int, int]] = []
    for n in sorted(set(numbers)):
        if out and out[-1][1] + 1 == n:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def grouped(lines: dict[int, T]) -> list[tuple[T, list[tuple[int, int]]]]:
    """One file's lines by what wrote them, each with its ranges, in the order of first lines."""
    by: dict[T, list[int]] = {}
    for n in sorted(lines):
        by.setdefault(lines[n], []).append(n)
    return [(who, spans(numbers)) for who, numbers in by.items()]


def overlay(first: Lines[T], then: Lines[T], known: Callable[[T], bool]) -> Lines[T]:
    """``first``'s lines, and ``then``'s where ``first`` has none or none ``known``."""
    out: Lines[T] = {path: dict(lines) for path, lines in first.items()}
    for path, lines in then.items():
        into = out.setdefault(path, {})
        for n, who in lines.items():
            if n not in into or (not known(into[n]) and known(who)):
                into[n] = who
    return {path: lines for path, lines in out.items() if lines}
