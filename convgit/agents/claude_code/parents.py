"""Where a Claude Code line hangs, so that recording artifacts make no branches.

An entry hangs below its own parent (through kept records), except when that parent lies in
the current turn and the turn has moved on, where it continues the turn instead (parallel tool
results, the next block of a reply written after a tool result, slash-command side chains). A
prompt whose parent lies before the current turn is a rewind: a branch. Each chain (the
session's own, ``MAIN``, and each subagent's, named by its agentId) has its own turn."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from convgit.agents.reading import Known, entry_id, part_id

MAIN = ""  # the chain of the session itself; a subagent's chain is its agentId
_WALK = 5000  # how far up a turn is searched for a parent (turns are far shorter)


def chain_of(value: dict[str, Any]) -> str:
    """The chain a line belongs to: ``MAIN``, or the subagent's agentId for a side chain."""
    if not value.get("isSidechain"):
        return MAIN
    agent = value.get("agentId")
    return agent if isinstance(agent, str) and agent else "sidechain"


class Parents:
    """Each chain's last entry (``tips``) and the first entry of its current turn
    (``starts``), carried from import to import in the cursor's state; the entry each uuid
    read here stands for (``anchors``: where a child of it hangs); the parents of the entries
    made here."""

    def __init__(self, state: Mapping[str, Any], known: Known) -> None:
        self.known = known
        self.tips: dict[str, str] = dict(state.get("tips", {}))
        self.starts: dict[str, str | None] = dict(state.get("starts", {}))
        self.anchors: dict[str, str | None] = {}
        self._made: dict[str, str | None] = {}

    def state(self) -> dict[str, Any]:
        return {"tips": self.tips, "starts": self.starts}

    def grew(self, chain: str, uuid: str, entries: list[dict[str, Any]], *, turn: bool) -> str:
        """``entries`` (at least one, in a row) were made from the line ``uuid`` of ``chain``:
        the last is the chain's tip, and the first starts a turn when ``turn`` (or when the
        chain had none). Returns the last one's id."""
        for entry in entries:
            self._made[entry["id"]] = entry["parentId"]
        ident = str(entries[-1]["id"])
        self.anchors[uuid] = ident
        self.tips[chain] = ident
        if turn or chain not in self.starts:
            self.starts[chain] = entries[0]["id"]
        return ident

    def knows(self, uuid: str) -> bool:
        """The line ``uuid`` was read here or came into the session before."""
        return (
            uuid in self.anchors or entry_id(uuid) in self.known.entries or uuid in self.known.kept
        )

    def anchor(self, uuid: str) -> str | None:
        """The entry a child of the line ``uuid`` hangs below (None: none, a new root)."""
        if uuid in self.anchors:
            return self.anchors[uuid]
        return self.known_anchor(uuid)

    def known_anchor(self, uuid: str) -> str | None:
        """The same for a line imported before: its last entry, or where it was kept."""
        entries = self.known.entries
        first = entry_id(uuid)
        if first in entries:
            number = 2
            while part_id(first, number) in entries:
                number += 1
            return part_id(first, number - 1)
        return self.known.anchor(uuid)

    def attach(self, chain: str, anchor: str | None) -> str | None:
        """Below ``anchor``, or below the chain's tip when the anchor lies in the current
        turn (the turn went on from there: a parallel result, a slash command's side chain)."""
        tip = self.tips.get(chain)
        if anchor is None or tip is None or anchor == tip:
            return anchor
        start = self.starts.get(chain)
        node: str | None = tip
        for _ in range(_WALK):
            if node is None:
                return anchor
            if node == anchor:
                return tip
            if node == start:
                return anchor
            node = self._parent_of(node)
        return anchor

    def _parent_of(self, ident: str) -> str | None:
        if ident in self._made:
            return self._made[ident]
        found = self.known.entries.get(ident)
        parent = None if found is None else found.get("parentId")
        return parent if isinstance(parent, str) else None
