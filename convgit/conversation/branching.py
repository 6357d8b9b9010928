"""Branches and the points a branch may start from, as pure functions over a ``Tree``.

A fork point is an entry with more than one child (or the tree's roots, when there are several,
or when the path has no fork above it: a conversation that never forked is one branch from its
root); each child starts a branch, numbered in the order the branches were started, so a number
stays the same as branches are added. A branch continues to its newest deepest leaf
(``Tree.newest_leaf``), which is where ``switch --tip`` and ``switch --branch N`` go.

A branch may not start inside a tool run: below an assistant message whose tool calls are not all
answered, anything but a tool result would come between a call and its result. ``refusal`` says
so, naming the entries a branch can start from instead.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Any

from convgit.base.errors import NotFoundError, RefusedError
from convgit.base.valueclass import valueclass
from convgit.conversation.tree import Tree

ROOTS = None  # the fork point of a tree with several roots: the branches are the roots


@valueclass(frozen=True)
class Branch:
    """One branch of a fork: ``first`` hangs below the fork point, ``leaf`` is the newest deepest
    leaf below it, ``length`` the entries from ``first`` to ``leaf``; ``labels`` (entry -> label)
    and ``snapshot`` (the newest entry with a snapshot) are those on the way from ``first`` to
    ``leaf``; ``active``: the active leaf is on this branch."""

    number: int
    first: str
    leaf: str
    length: int
    labels: dict[str, str]
    snapshot: str | None
    active: bool


@valueclass(frozen=True)
class Fork:
    """The branches that start at ``at`` (an entry, or ``ROOTS``)."""

    at: str | None
    branches: list[Branch]

    def branch(self, number: int) -> Branch:
        if not 1 <= number <= len(self.branches):
            where = "the roots" if self.at is ROOTS else f"entry {self.at}"
            count = len(self.branches)
            raise NotFoundError(
                f"There is no branch {number} at {where}: it has {count}"
                f" branch{'' if count == 1 else 'es'}.",
                "convgit branches",
            )
        return self.branches[number - 1]


def fork_point(tree: Tree, ident: str) -> str | None:
    """The nearest fork point at or above ``ident``: an entry with more than one child, else
    ``ROOTS``: the tree's roots, which are several, or the one root of a path that does not fork
    (whose one branch starts there, as `git branch` lists a repository's one branch)."""
    children = tree.children
    for node in reversed(tree.path(ident)):
        if len(children.get(node, ())) > 1:
            return node
    return ROOTS


def fork_at(tree: Tree, at: str | None, snapshots: Container[str]) -> Fork:
    """The branches that start at ``at`` (an entry or ``ROOTS``), in the order they were
    started; ``snapshots`` holds the entries that have a snapshot."""
    on_path = set(tree.path()) if tree.leaf is not None else set()
    found = []
    for number, first in enumerate(tree.children.get(at, ()), 1):
        leaf = tree.newest_leaf(first)
        way = _way(tree, first, leaf)
        found.append(
            Branch(
                number=number,
                first=first,
                leaf=leaf,
                length=len(way),
                labels={e: tree.labels[e] for e in way if e in tree.labels},
                snapshot=next((e for e in reversed(way) if e in snapshots), None),
                active=first in on_path,
            )
        )
    return Fork(at, found)


def _way(tree: Tree, first: str, leaf: str) -> list[str]:
    """The entries from ``first`` down to ``leaf``, a descendant of it."""
    way = [leaf]
    while way[-1] != first:
        parent = tree.entries[way[-1]]["parentId"]
        assert parent is not None, "a leaf below an entry reaches it"
        way.append(parent)
    return way[::-1]


# -- where a branch may start --------------------------------------------------------------------


def tool_run(tree: Tree, ident: str) -> tuple[str, list[str]] | None:
    """(the assistant message, its tool calls still waiting) when ``ident`` is inside a tool run:
    that message itself, or one of the results that follow it with calls still unanswered."""
    waiting = tree.open_tool_calls(ident)
    if not waiting:
        return None
    node = ident  # up past the results and settings entries to the message that made the calls
    while not _is_message(tree.entries[node], "assistant"):
        parent = tree.entries[node]["parentId"]
        assert parent is not None, "open calls have their assistant message above"
        node = parent
    return node, waiting


def _is_message(record: Mapping[str, Any], role: str) -> bool:
    return record["type"] == "message" and record.get("role") == role


def right_points(tree: Tree, caller: str, ident: str) -> str:
    """Where a branch can start instead of inside the tool run of ``caller`` seen at ``ident``:
    before the run, and after its last result when one below ``ident`` answers every call."""
    before = tree.entries[caller]["parentId"]
    after = _answered_below(tree, ident)
    points = [] if before is None else [f"{before} (before the tool run)"]
    if after is not None:
        points.append(f"{after} (after its last result)")
    if not points:
        return "record the tool results first (`convgit tool CALL_ID TEXT`)"
    return "branch from " + " or from ".join(points)


def _answered_below(tree: Tree, ident: str) -> str | None:
    """The first tool result at or below ``ident``, following results only, after which no call
    of the run waits."""
    todo = [ident]
    while todo:
        node = todo.pop(0)
        if not tree.open_tool_calls(node):
            return node
        todo += [
            child
            for child in tree.children.get(node, ())
            if _is_message(tree.entries[child], "tool")
        ]
    return None


def refusal(tree: Tree, ident: str, what: str) -> RefusedError | None:
    """Why a branch may not start below ``ident``, or None; ``what`` is the sentence's subject
    ("A fork from 1a2b3c4d")."""
    run = tool_run(tree, ident)
    if run is None:
        return None
    caller, waiting = run
    calls = ", ".join(waiting)
    plural = "s" if len(waiting) > 1 else ""
    return RefusedError(
        f"{what} would start inside a tool run: tool call{plural} {calls} of {caller}"
        f" {'have' if plural else 'has'} no result at {ident}, and the new branch would leave"
        f" {'them' if plural else 'it'} waiting.",
        right_points(tree, caller, ident),
    )


def last_user_message(tree: Tree, ident: str) -> str:
    """The last user message at or above ``ident`` (tool results are not user messages)."""
    for node in reversed(tree.path(ident)):
        record = tree.entries[node]
        if record["type"] == "message" and record["role"] == "user":
            return node
    raise NotFoundError(f"There is no user message at or above {ident}.", "convgit log")
