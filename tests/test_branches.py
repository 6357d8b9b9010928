"""Branches, and forking at the right point: `convgit branches`, `switch --tip`, `switch --branch
N`, the `:N` reference, `retry --turn`, and the refusal to start a branch inside a tool run.
Through the library on real files, and through the real command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from convgit import NotFoundError, Session
from convgit.base.errors import RefusedError, UsageError
from tests.clirun import Shell


def new(tmp_path: Path) -> Session:
    return Session.create(tmp_path, store_dir=tmp_path / "store", snapshots=False)


def reopen(session: Session) -> Session:
    return Session.open(session.location.root, session=session.id, store_dir=session.location.root)


def said(session: Session, ref: str | None = None) -> list[Any]:
    return [m["content"] for m in session.conversation.context(ref).messages]


def calling(*calls: str) -> dict[str, Any]:
    parts = [{"type": "tool_call", "id": c, "name": "bash", "input": {"n": c}} for c in calls]
    return {"type": "message", "role": "assistant", "content": parts}


def plans(tmp_path: Path) -> tuple[Session, dict[str, str]]:
    """task -> plan A -> "A fails" -> "why?", and plan B beside plan A, retried later."""
    s = new(tmp_path)
    ids = {"task": s.append.user("task").id, "a": s.append.assistant("plan A").id}
    ids["a2"] = s.append.user("A fails").id
    ids["a3"] = s.append.user("why?").id
    s.moves.retry(ids["a"])
    ids["b"] = s.append.assistant("plan B").id
    s.moves.label(ids["a"], "planA")
    return s, ids


# -- branches ------------------------------------------------------------------------------------


def test_branches_lists_each_branch_of_the_nearest_fork_with_its_newest_deepest_leaf(
    tmp_path: Path,
) -> None:
    s, ids = plans(tmp_path)
    fork = s.moves.branches()
    assert fork.at == ids["task"]
    one, two = fork.branches
    assert (one.number, one.first, one.leaf, one.length) == (1, ids["a"], ids["a3"], 3)
    assert one.labels == {ids["a"]: "planA"} and not one.active
    assert (two.number, two.first, two.leaf, two.length) == (2, ids["b"], ids["b"], 1)
    assert two.active and two.labels == {} and two.snapshot is None
    # numbers follow the order the branches were started, wherever the active leaf is
    s.moves.switch(ids["a3"])
    assert [b.first for b in s.moves.branches().branches] == [ids["a"], ids["b"]]
    assert [b.active for b in s.moves.branches().branches] == [True, False]


def test_branches_of_a_path_that_does_not_fork_is_its_one_branch(tmp_path: Path) -> None:
    s = new(tmp_path)
    first = s.append.user("one").id
    s.append.assistant("two")
    fork = s.moves.branches()
    assert fork.at is None  # the root, as for several roots
    assert [(b.number, b.first, b.leaf, b.active) for b in fork.branches] == [
        (1, first, s.conversation.leaf, True)
    ]
    assert (
        s.moves.branches("root").branches[0].leaf == s.conversation.leaf
    )  # one branch below the root


def test_branches_on_a_conversation_that_never_forked_lists_it_and_exits_0(
    tmp_path: Path,
) -> None:
    """As `git branch` lists a repository's one branch: one shape of --json (docs/json.md)."""
    sh = Shell(tmp_path)
    sh.run("init", "--no-snapshots")
    task = sh.json("user", "task")["id"]
    done = sh.json("assistant", "done")["id"]
    listed = sh.json("branches")
    assert listed["at"] is None
    assert [(b["number"], b["first"], b["leaf"], b["entries"], b["active"]) for b in listed[
        "branches"
    ]] == [(1, task, done, 2, True)]  # fmt: skip
    text = sh.run("branches").stdout.decode().splitlines()
    assert text[0] == "one branch, from the root: no fork above here"
    assert text[1].startswith(f"* 1  {task} … {done}  2 entries  assistant: done ← context")


def test_switch_tip_goes_to_the_end_written_last_not_the_longest(tmp_path: Path) -> None:
    s, ids = plans(tmp_path)
    s.moves.switch(ids["a2"])
    newer = s.append.assistant("A fails because of negatives").id  # written after plan B
    assert s.moves.switch(ids["task"], tip=True) == newer
    assert reopen(s).conversation.leaf == newer
    s.moves.switch(ids["b"])
    assert s.moves.switch_branch(1) == newer and s.conversation.leaf == newer
    assert s.moves.switch_branch(2, ids["task"]) == ids["b"]
    with pytest.raises(NotFoundError, match="no branch 3 at entry"):
        s.moves.switch_branch(3, ids["task"])


def test_branches_and_switch_branch_through_the_command_line(tmp_path: Path) -> None:
    sh = Shell(tmp_path)
    sh.run("init", "--no-snapshots")
    task = sh.json("user", "task")["id"]
    plan_a = sh.json("assistant", "plan A")["id"]
    sh.run("label", plan_a, "planA")
    failed = sh.json("user", "A fails")["id"]
    sh.run("retry", plan_a)
    plan_b = sh.json("assistant", "plan B")["id"]
    listed = sh.json("branches")
    assert listed["at"] == task
    assert [(b["number"], b["first"], b["leaf"], b["active"]) for b in listed["branches"]] == [
        (1, plan_a, failed, False),
        (2, plan_b, plan_b, True),
    ]
    assert listed["branches"][0]["text"] == "user: A fails"
    assert listed["branches"][0]["labels"] == {plan_a: "planA"}
    text = sh.run("branches").stdout.decode().splitlines()
    assert text[0].startswith(f"branches at {task} user: task")
    assert text[1].startswith(f"  1  {plan_a} … {failed}  2 entries  user: A fails [planA]")
    assert text[2].startswith(f"* 2  {plan_b}  1 entry  assistant: plan B ← context")
    moved = sh.json("switch", "--branch", "1")
    assert moved["leaf"] == failed and moved["files_changed"] is False
    assert sh.json("switch", task, "--tip")["leaf"] == plan_b
    assert b"no branch 7" in sh.run("switch", "--branch", "7", code=1).stderr
    assert b"--branch takes" in sh.run("switch", "--branch", "x", code=2).stderr
    assert b"Say where" in sh.run("switch", code=2).stderr


# -- the N-th user message ------------------------------------------------------------------------


def test_colon_n_is_the_nth_user_message_of_the_active_path(tmp_path: Path) -> None:
    s, ids = plans(tmp_path)
    s.moves.switch(ids["a3"])
    assert [s.conversation.resolve(r) for r in (":1", ":2", ":3", ":-1", ":-3")] == [
        ids["task"], ids["a2"], ids["a3"], ids["a3"], ids["task"]
    ]  # fmt: skip
    assert s.conversation.resolve(":2~1") == ids["a"]
    s.moves.switch(ids["b"])  # on plan B's branch there is one user message
    assert s.conversation.resolve(":-1") == ids["task"]
    with pytest.raises(NotFoundError, match="has 1 user message; ':2'"):
        s.conversation.resolve(":2")
    for bad in (":0", ":x", ":", ":-0", ":²"):
        with pytest.raises(UsageError):
            s.conversation.resolve(bad)
    with pytest.raises(UsageError, match="cannot be a label"):
        s.moves.label(ids["task"], ":1")


def test_edit_colon_n_makes_a_new_version_of_that_message(tmp_path: Path) -> None:
    sh = Shell(tmp_path)
    sh.run("init", "--no-snapshots")
    sh.run("user", "first")
    sh.run("assistant", "one")
    sh.run("user", "second")
    sh.run("assistant", "two")
    sh.run("edit", ":2", "second, again")
    assert [m["content"] for m in sh.json("context")["messages"]] == [
        "first", "one", "second, again"
    ]  # fmt: skip
    assert b"is not one of them" in sh.run("edit", ":5", "x", code=1).stderr


# -- not inside a tool run -----------------------------------------------------------------------


def tool_run(tmp_path: Path) -> tuple[Session, dict[str, str]]:
    """task -> a reply calling c1 and c2 -> the result of c1 (c2 still running)."""
    s = new(tmp_path)
    ids = {"task": s.append.user("task").id}
    ids["call"] = s.append.entry(calling("c1", "c2")).id
    ids["r1"] = s.append.tool_result("c1", "one").id
    return s, ids


def test_fork_refuses_a_point_inside_a_tool_run_and_names_the_right_points(
    tmp_path: Path,
) -> None:
    s, ids = tool_run(tmp_path)
    lines = s.conversation.file.path.read_bytes()
    for ref, waiting in (("call", "calls c1, c2"), ("r1", "call c2")):
        with pytest.raises(RefusedError, match=f"inside a tool run: tool {waiting} of") as refused:
            s.moves.fork(ids[ref], "another way")
        assert refused.value.hint == f"branch from {ids['task']} (before the tool run)"
    with pytest.raises(RefusedError, match="tool calls c1, c2 of"):
        s.moves.fork(ids["call"])
    assert s.conversation.file.path.read_bytes() == lines, "a refused fork writes nothing"
    r2 = s.append.tool_result("c2", "two").id
    with pytest.raises(RefusedError) as refused:
        s.moves.fork(ids["r1"], "x")
    assert refused.value.hint == (
        f"branch from {ids['task']} (before the tool run) or from {r2} (after its last result)"
    )
    s.moves.fork(r2, "and now?")  # every call answered: a branch may start here
    s.moves.fork(ids["task"], "start over")
    assert said(s) == ["task", "start over"]


def test_a_settings_entry_inside_a_tool_run_is_refused_as_the_run_itself(tmp_path: Path) -> None:
    """A model change recorded while calls wait is inside the run: the fork names the calls'
    message, not a crash (found by the random request-body model)."""
    s, ids = tool_run(tmp_path)
    setting = s.append.entry({"type": "model", "provider": "anthropic", "model": "m"}).id
    with pytest.raises(RefusedError, match=f"tool call c2 of {ids['call']} has no result at"):
        s.moves.fork(setting, "another way")


def test_edit_refuses_results_unfinished_calls_and_messages_inside_a_tool_run(
    tmp_path: Path,
) -> None:
    s, ids = tool_run(tmp_path)
    with pytest.raises(RefusedError, match="only user and assistant messages") as refused:
        s.moves.edit(ids["r1"], "x")
    assert refused.value.hint == f"`convgit retry {ids['call']}`, the call it answers"
    with pytest.raises(RefusedError, match=r"not all answered \(c1, c2\)") as refused:
        s.moves.edit(ids["call"], "x")
    assert refused.value.hint == f"branch from {ids['task']} (before the tool run)"
    typed = s.append.user("typed while c2 runs").id  # a prompt between a call and its result
    with pytest.raises(RefusedError, match=f"A new version of {typed}"):
        s.moves.edit(typed, "x")
    s.moves.edit(":1", "the task, said better")
    assert said(s) == ["the task, said better"]


def test_retry_turn_goes_back_before_the_last_user_message_leaving_the_tool_run_out(
    tmp_path: Path,
) -> None:
    s = new(tmp_path)
    s.append.user("set up")
    setup = s.append.assistant("done").id
    asked = s.append.user("run the tests").id
    s.append.entry(calling("t1"))
    s.append.tool_result("t1", "1 failed", is_error=True)
    s.append.assistant("the tests fail")
    assert s.moves.retry(turn=True) == setup
    again = s.append.user("run the tests with -x").id
    assert (
        s.conversation.tree.entries[again]["parentId"]
        == s.conversation.tree.entries[asked]["parentId"]
    )
    assert said(s) == ["set up", "done", "run the tests with -x"]
    assert reopen(s).conversation.leaf == again


def test_retry_turn_at_the_first_message_is_refused(tmp_path: Path) -> None:
    sh = Shell(tmp_path)
    sh.run("init", "--no-snapshots")
    first = sh.json("user", "only")["id"]
    sh.run("assistant", "reply")
    done = sh.run("retry", "--turn", code=1)
    assert done.stderr.decode().splitlines() == [
        f"convgit: The last user message, {first}, is the first entry: there is nothing before"
        " it to go back to.",
        f"  hint: `convgit edit {first} TEXT` starts the new attempt beside it",
    ]


def test_a_refused_fork_says_why_and_where_on_the_command_line(tmp_path: Path) -> None:
    sh = Shell(tmp_path)
    sh.run("init", "--no-snapshots")
    task = sh.json("user", "task")["id"]
    call = sh.append(calling("c1"))
    ident = call.stdout.split(b'"')[3].decode()
    done = sh.run("fork", ident, "other", code=1)
    assert done.stderr.decode().splitlines() == [
        f"convgit: A fork from {ident} would start inside a tool run: tool call c1 of {ident} has"
        f" no result at {ident}, and the new branch would leave it waiting.",
        f"  hint: branch from {task} (before the tool run)",
    ]
