"""Branches, fork points and where a branch may start (convgit/conversation/branching.py), on
trees built in memory: no store, no git, no process. `convgit branches`, `switch --branch N`
and the refusal to fork inside a tool run rest on these."""

from __future__ import annotations

from typing import Any

import pytest

from convgit.base.errors import NotFoundError
from convgit.conversation.branching import (
    ROOTS,
    fork_at,
    fork_point,
    last_user_message,
    refusal,
    tool_run,
)
from convgit.conversation.tree import Tree, build_records

TS = "2026-12-01T00:00:00Z"
HEADER = {"type": "session", "v": 1, "id": "s1", "created": TS, "cwd": "."}


def message(ident: str, parent: str | None, role: str, content: Any = None) -> dict[str, Any]:
    return {
        "type": "message", "id": ident, "parentId": parent, "role": role,
        "content": ident if content is None else content, "ts": TS,
    }  # fmt: skip


def calls(ident: str, parent: str, *call_ids: str) -> dict[str, Any]:
    """An assistant message that makes the tool calls ``call_ids``."""
    parts = [{"type": "tool_call", "id": c, "name": "sh", "input": {}} for c in call_ids]
    return message(ident, parent, "assistant", parts)


def result(ident: str, parent: str, call: str) -> dict[str, Any]:
    return {**message(ident, parent, "tool"), "toolCallId": call}


def leaf(target: str) -> dict[str, Any]:
    return {"type": "leaf", "target": target, "ts": TS}


def forked() -> Tree:
    """u1 - a1, then two branches from a1: u2 - a2 (started first, the active one) and
    u3 - a3 - u4 - a4 (longer, labelled "planB" at a3)."""
    return build_records(
        [
            HEADER,
            message("u1", None, "user"),
            message("a1", "u1", "assistant"),
            message("u2", "a1", "user"),
            message("a2", "u2", "assistant"),
            message("u3", "a1", "user"),
            message("a3", "u3", "assistant"),
            {"type": "label", "target": "a3", "label": "planB", "ts": TS},
            message("u4", "a3", "user"),
            message("a4", "u4", "assistant"),
            leaf("a2"),
        ]
    )


# -- fork points and branches --------------------------------------------------------------------


def test_the_fork_point_is_the_nearest_entry_above_with_several_children() -> None:
    tree = forked()
    assert fork_point(tree, "a2") == "a1"
    assert fork_point(tree, "a4") == "a1"
    assert fork_point(tree, "a1") == "a1"  # at or above


def test_a_path_that_does_not_fork_is_one_branch_from_the_root() -> None:
    tree = build_records([HEADER, message("u1", None, "user"), message("a1", "u1", "assistant")])
    assert fork_point(tree, "a1") is ROOTS
    (one,) = fork_at(tree, ROOTS, set()).branches
    assert (one.number, one.first, one.leaf, one.length, one.active) == (1, "u1", "a1", 2, True)


def test_several_roots_fork_at_the_roots() -> None:
    tree = build_records([HEADER, message("u1", None, "user"), message("u9", None, "user")])
    assert fork_point(tree, "u9") is ROOTS
    assert [b.first for b in fork_at(tree, ROOTS, set()).branches] == ["u1", "u9"]


def test_branches_are_numbered_in_the_order_they_were_started_and_say_what_they_hold() -> None:
    fork = fork_at(forked(), "a1", snapshots={"a2", "u3", "a3"})
    first, second = fork.branches
    assert (first.number, first.first, first.leaf, first.length) == (1, "u2", "a2", 2)
    assert (second.number, second.first, second.leaf, second.length) == (2, "u3", "a4", 4)
    assert first.labels == {} and second.labels == {"a3": "planB"}
    assert (first.snapshot, second.snapshot) == ("a2", "a3")  # the newest on the way
    assert (first.active, second.active) == (True, False)


def test_a_branch_goes_on_to_its_newest_leaf_not_its_longest() -> None:
    """After a retry lower down, the newer attempt wins over an older and longer one."""
    tree = build_records(
        [
            HEADER,
            message("u1", None, "user"),
            message("a1", "u1", "assistant"),
            message("b1", "u1", "assistant"),
            message("u2", "a1", "user"),
            message("a2", "u2", "assistant"),
            message("u3", "a2", "user"),  # the older attempt goes on, deeper
            message("a2r", "u2", "assistant"),  # a retry of a2, appended after it
            message("b2", "b1", "user"),
        ]
    )
    first, second = fork_at(tree, "u1", set()).branches
    assert first.leaf == "a2r"  # appended after u3, which is deeper
    assert second.leaf == "b2"


def test_a_branch_number_out_of_range_names_how_many_there_are() -> None:
    fork = fork_at(forked(), "a1", set())
    assert fork.branch(2).first == "u3"
    with pytest.raises(NotFoundError, match=r"no branch 3 at entry a1: it has 2 branches\."):
        fork.branch(3)
    with pytest.raises(NotFoundError, match="no branch 0"):
        fork.branch(0)
    alone = build_records([HEADER, message("u1", None, "user"), message("a1", "u1", "assistant")])
    with pytest.raises(NotFoundError, match=r"at entry u1: it has 1 branch\."):
        fork_at(alone, "u1", set()).branch(2)


# -- where a branch may not start ----------------------------------------------------------------


def tool_run_tree() -> Tree:
    """u1 - a1 (calls c1, c2) - r1 (answers c1) - r2 (answers c2) - a2."""
    return build_records(
        [
            HEADER,
            message("u1", None, "user"),
            calls("a1", "u1", "c1", "c2"),
            result("r1", "a1", "c1"),
            result("r2", "r1", "c2"),
            message("a2", "r2", "assistant"),
        ]
    )


def test_inside_a_tool_run_is_the_calling_message_and_the_results_before_the_last() -> None:
    tree = tool_run_tree()
    assert tool_run(tree, "a1") == ("a1", ["c1", "c2"])
    assert tool_run(tree, "r1") == ("a1", ["c2"])
    assert tool_run(tree, "r2") is None  # every call answered
    assert tool_run(tree, "u1") is None and tool_run(tree, "a2") is None


def test_a_branch_inside_a_tool_run_is_refused_naming_where_it_can_start() -> None:
    tree = tool_run_tree()
    refused = refusal(tree, "r1", "A fork from r1")
    assert refused is not None
    assert str(refused).startswith(
        "A fork from r1 would start inside a tool run: tool call c2 of a1 has no result at r1,"
        " and the new branch would leave it waiting."
    )
    assert refused.hint == "branch from u1 (before the tool run) or from r2 (after its last result)"
    both = refusal(tree, "a1", "An edit of a1")
    assert both is not None and "tool calls c1, c2 of a1 have no result" in str(both)
    assert refusal(tree, "r2", "A fork from r2") is None


def test_a_tool_run_with_no_result_yet_says_to_record_them_first() -> None:
    tree = build_records([HEADER, calls("a1", None, "c1")])
    refused = refusal(tree, "a1", "A fork from a1")
    assert refused is not None
    assert refused.hint == "record the tool results first (`convgit tool CALL_ID TEXT`)"


def test_the_last_user_message_is_never_a_tool_result() -> None:
    tree = tool_run_tree()
    assert last_user_message(tree, "a2") == "u1"
    assert last_user_message(tree, "r2") == "u1"
    orphan = build_records([HEADER, message("a0", None, "assistant")])
    with pytest.raises(NotFoundError, match="no user message at or above a0"):
        last_user_message(orphan, "a0")
