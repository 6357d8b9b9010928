"""What an append may write, checked against the tree as it will be (the batch's earlier records
in it): reference-safe ids, message parts, compaction anchors, branch-summary sources, and tool
results that answer a call on their own path. Pure functions over a tree and raw records; the
caller writes nothing when one of them refuses.

A tool result filed on another branch (an explicit ``parentId`` off the active path) never moves
the active leaf: ``admit`` returns the ``leaf`` record that keeps it where it was.
"""

from __future__ import annotations

from itertools import chain
from typing import Any

from convgit import schema
from convgit.base.errors import InvalidEntryError, NotFoundError, UsageError
from convgit.conversation import refs
from convgit.conversation.parts import PartError, normalised_content
from convgit.conversation.tree import Tree


def id_problem(ident: str) -> str | None:
    if refs.is_safe_id(ident):
        return None
    return (
        f"has the id {ident!r}, which references could misread: use lowercase letters, digits,"
        f" '-' and '_' (starting with a letter or digit; not {_reserved()})"
    )


def check_said(text: str, what: str = "message") -> None:
    """Refuse a ``what`` (a message, a summary, a system prompt) typed with no text: an empty
    argument says nothing, and the model's APIs refuse blank text."""
    if not text.strip():
        raise UsageError(f"The {what} is empty; nothing was written.", f"give the {what}'s text")


def _reserved() -> str:
    words = [f"'{w}'" for w in sorted(refs.RESERVED_IDS)]
    return ", ".join(words[:-1]) + " or " + words[-1]


class Batch:
    """The tree as it will be once the records added so far are written."""

    def __init__(self, tree: Tree, active: str | None) -> None:
        self.tree = tree
        self.made: dict[str, dict[str, Any]] = {}
        self._active = active
        self._position: dict[str, int] | None = None  # the active path (as the batch extends it)
        self._tip = active

    def get(self, ident: str) -> dict[str, Any] | None:
        found = self.made.get(ident)
        return found if found is not None else self.tree.entries.get(ident)

    def add(self, record: dict[str, Any]) -> None:
        self.made[record["id"]] = record
        if self._position is not None and record["parentId"] == self._tip:
            self._position[record["id"]] = len(self._position)
        if record["parentId"] == self._tip:
            self._tip = record["id"]

    def _path_positions(self) -> dict[str, int]:
        if self._position is None:
            path = self.tree.path(self._active) if self._active is not None else []
            self._position = {ident: n for n, ident in enumerate(path)}
            node, chain = self._tip, []
            while node is not None and node in self.made and node not in self._position:
                chain.append(node)
                node = self.made[node]["parentId"]
            if node == (path[-1] if path else None):
                for ident in reversed(chain):
                    self._position[ident] = len(self._position)
        return self._position

    def is_ancestor(self, ancestor: str, node: str | None) -> bool:
        """``ancestor`` is ``node`` or above it. Walks up only until the active path is met."""
        position = self._path_positions()
        while node is not None:
            if node == ancestor:
                return True
            at = position.get(node)
            if at is not None:
                above = position.get(ancestor)
                return above is not None and above <= at
            record = self.get(node)
            node = None if record is None else record["parentId"]
        return False

    def call_above(self, call: str, node: str | None) -> str | None:
        """The assistant message at or above ``node`` that makes tool call ``call``."""
        while node is not None:
            record = self.get(node)
            if record is None:
                return None
            if record["type"] == "message" and call in schema.tool_call_ids(record):
                return node
            node = record["parentId"]
        return None

    def call_anywhere(self, call: str) -> str | None:
        for ident, record in chain(self.tree.entries.items(), self.made.items()):
            if record["type"] == "message" and call in schema.tool_call_ids(record):
                return ident
        return None

    def newest_below(self, ident: str) -> str:
        """The entry written last among ``ident`` and its descendants: that branch's leaf."""
        made_children: dict[str | None, list[str]] = {}
        for made, record in self.made.items():
            made_children.setdefault(record["parentId"], []).append(made)
        below, todo = {ident}, [ident]
        while todo:
            node = todo.pop()
            for child in chain(self.tree.children.get(node, ()), made_children.get(node, ())):
                below.add(child)
                todo.append(child)
        for candidate in chain(reversed(self.made), reversed(self.tree.entries)):
            if candidate in below:
                return candidate
        return ident


def call_branch(tree: Tree, call: str, leaf: str | None) -> tuple[str, str] | None:
    """Where a result for tool call ``call`` belongs, seen from ``leaf``: None when the call is on
    the path to ``leaf`` (the result goes at the leaf), else ``(entry that made the call, the
    newest entry of its branch)``. Refuses a call no assistant message made."""
    batch = Batch(tree, leaf)
    if batch.call_above(call, leaf) is not None:
        return None
    made_in = batch.call_anywhere(call)
    if made_in is None:
        raise NotFoundError(
            f"No assistant message in this session made a tool call '{call}'.",
            "convgit log shows the calls on the active path",
        )
    return made_in, batch.newest_below(made_in)


def admit(
    tree: Tree, records: list[dict[str, Any]], placed: list[bool], active: str | None
) -> list[dict[str, Any]]:
    """Check ``records`` (ids, ``ts`` and ``parentId`` filled in; ``placed[i]``: the writer gave
    record i its ``parentId``) against ``tree`` whose active leaf is ``active``, normalising
    message content in place. Returns the meta records to write after them."""
    batch = Batch(tree, active)
    tip = active
    for number, record in enumerate(records, 1):
        problem = id_problem(record["id"])
        if problem is None:
            problem = _record_problem(batch, record, placed[number - 1], number)
        if problem is not None:
            raise InvalidEntryError(f"Entry {number} {problem}; nothing was appended.")
        batch.add(record)
        filed_elsewhere = _is_tool_result(record) and placed[number - 1]
        if not (filed_elsewhere and record["parentId"] != tip):
            tip = record["id"]
    if records and tip is not None and tip != records[-1]["id"]:
        return [schema.leaf(tip)]
    return []


def _is_tool_result(record: dict[str, Any]) -> bool:
    return bool(record["type"] == "message" and record["role"] == "tool")


def _record_problem(batch: Batch, record: dict[str, Any], placed: bool, number: int) -> str | None:
    kind = record["type"]
    if kind == "message":
        try:
            record["content"] = normalised_content(record["role"], record["content"])
        except PartError as exc:
            return str(exc)
        if record["role"] == "tool":
            _check_result(batch, record, placed, number)
    elif kind == "compaction":
        kept = record["firstKeptId"]
        if kept is None:
            return None
        if kept == record["id"]:
            return "keeps from itself (firstKeptId must be an entry before it on its path)"
        if batch.get(kept) is None:
            return f"keeps from {kept}, which does not exist"
        if not batch.is_ancestor(kept, record["parentId"]):
            return f"keeps from {kept}, which is not before it on its path"
    elif kind == "branch_summary":
        source = record["fromId"]
        if source == record["id"]:
            return "summarises a branch that ends at itself (fromId)"
        if batch.get(source) is None:
            return f"summarises a branch from {source}, which does not exist (fromId)"
    return None


def _check_result(batch: Batch, record: dict[str, Any], placed: bool, number: int) -> None:
    """A tool result answers a call on its own path; refused otherwise, with where to file it."""
    call = record["toolCallId"]
    if call == "":
        raise InvalidEntryError(f"Entry {number} has an empty toolCallId; nothing was appended.")
    if batch.call_above(call, record["parentId"]) is not None:
        return
    made_in = batch.call_anywhere(call)
    if made_in is None:
        raise InvalidEntryError(
            f"Entry {number} answers tool call '{call}', which no assistant message in this"
            " session made; nothing was appended.",
            "a tool result must answer a tool_call part of an earlier assistant message",
        )
    branch = batch.newest_below(made_in)
    where = "not on its path" if placed else "not on the active path"
    raise InvalidEntryError(
        f"Entry {number} answers tool call '{call}', which was made on another branch (entry"
        f" {made_in}), {where}; nothing was appended.",
        f'give it "parentId": "{branch}" to file it on that branch (the active leaf stays)',
    )


def fresh_id(known: dict[str, Any], made: dict[str, Any]) -> str:
    """A new entry id, neither in the session (``known``) nor among the records being made."""
    while True:
        candidate = schema.new_id(known)
        if candidate not in made:
            return candidate
