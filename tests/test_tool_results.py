"""Tool results find their call: replay pairs a result with its call wherever on the path it was
recorded, and a result is filed on the branch of its call or refused, never hung where it
answers nothing. Through the library and the real command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from convgit import Session
from convgit.base.errors import InvalidEntryError, NotFoundError, RefusedError
from convgit.conversation.replay import MISSING_RESULT
from tests.clirun import Shell
from tests.request_bodies import sent
from tests.workspace.gitrepo import UserStateGuard, init_repo


def new(tmp_path: Path) -> Session:
    return Session.create(tmp_path, store_dir=tmp_path / "store", snapshots=False)


def call(ident: str, name: str = "pytest", **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": ident, "name": name, "input": arguments}


def asks(*calls: dict[str, Any], text: str = "running it") -> dict[str, Any]:
    content = [{"type": "text", "text": text}, *calls]
    return {"type": "message", "role": "assistant", "content": content}


def shape(session: Session, ref: str | None = None) -> list[tuple[str, Any]]:
    return [(m["role"], m["content"]) for m in session.conversation.context(ref).messages]


def test_a_result_recorded_after_the_user_typed_is_paired_with_its_call(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("run the tests")
    s.append.entry(asks(call("c1")))
    s.append.user("and check the lint too")  # typed while the tool ran
    s.append.tool_result("c1", "5 passed")
    messages = s.conversation.context().messages
    assert [(m["role"], m.get("toolCallId")) for m in messages] == [
        ("user", None),
        ("assistant", None),
        ("tool", "c1"),
        ("user", None),
    ]
    assert messages[2]["content"] == "5 passed"
    assert not s.conversation.context().dropped
    bodies = sent(s.conversation.context())
    turn = bodies.anthropic["messages"][2]["content"]
    assert turn[0] == {"type": "tool_result", "tool_use_id": "c1", "content": "5 passed"}
    assert turn[1] == {"type": "text", "text": "and check the lint too"}
    tool = bodies.openai["messages"][2]
    assert tool == {"role": "tool", "tool_call_id": "c1", "content": "5 passed"}


def test_parallel_results_recorded_in_any_order_follow_their_calls(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("look around")
    s.append.entry(asks(call("a", "ls"), call("b", "cat"), call("c", "pwd")))
    s.append.tool_result("c", "/repo")
    s.append.entry({"type": "note", "text": "a file changed"})
    s.append.tool_result("a", "x.py")
    answers = [(m["toolCallId"], m["content"]) for m in s.conversation.context().messages[2:5]]
    assert answers == [("a", "x.py"), ("b", MISSING_RESULT), ("c", "/repo")]
    assert s.conversation.context().messages[5]["kind"] == "note"
    sent(s.conversation.context())


def test_a_result_after_a_note_is_paired_through_the_cli(tmp_path: Path) -> None:
    """A note that landed while the tool ran (here appended by a harness; restore itself waits
    for the result) does not separate the result from its call."""
    guard = UserStateGuard()
    repo = init_repo(tmp_path / "repo")
    guard.watch(repo.path)
    sh = Shell(repo.path)
    sh.run("init")
    task = sh.json("user", "run the tests")["id"]
    sh.append(asks(call("c1")))
    repo.write("src/app.py", "print('changed while the tests ran')\n")
    sh.run("restore", task, "--yes", code=1)  # the conversation waits for c1's result
    sh.append({"type": "note", "text": "src/app.py was edited by hand", "source": "user"})
    sh.run("tool", "c1", "5 passed")
    body = orjson.loads(sh.run("context", "--format", "anthropic").stdout)
    result = body["messages"][2]["content"][0]
    assert result == {"type": "tool_result", "tool_use_id": "c1", "content": "5 passed"}
    assert "edited by hand" in body["messages"][2]["content"][1]["text"]
    assert sh.run("fsck").returncode == 0
    guard.verify()


def test_tool_refuses_a_call_left_behind_by_fork_and_names_its_branch(tmp_path: Path) -> None:
    sh = Shell(tmp_path)
    sh.run("init")
    root = sh.json("user", "run the tests")["id"]
    made = sh.append(asks(call("c1")))
    asked = orjson.loads(made.stdout)["ids"][0]
    sh.run("fork", root, "no, do something else")
    before = sh.session_file().read_bytes()
    refused = sh.run("tool", "c1", "5 passed", code=1)
    stderr = refused.stderr.decode()
    assert f"Tool call c1 was made on another branch (entry {asked})" in stderr
    assert f"--on-call-branch` files it under {asked}" in stderr
    assert sh.session_file().read_bytes() == before


def test_tool_refuses_after_another_shell_switched_away(tmp_path: Path) -> None:
    s = new(tmp_path)
    first = s.append.user("run the tests").id
    s.append.entry(asks(call("c1")))
    other = Session.open(tmp_path, session=s.id, store_dir=tmp_path / "store")
    other.moves.switch(first)
    again = Session.open(tmp_path, session=s.id, store_dir=tmp_path / "store")
    with pytest.raises(RefusedError, match="another branch"):
        again.append.tool_result("c1", "5 passed")
    # the session that still builds on the old leaf is told the leaf moved
    with pytest.raises(RefusedError, match="moved the active leaf"):
        s.append.tool_result("c1", "5 passed")


def test_on_call_branch_files_the_result_there_and_keeps_the_leaf(tmp_path: Path) -> None:
    sh = Shell(tmp_path)
    sh.run("init")
    root = sh.json("user", "run the tests")["id"]
    asked = orjson.loads(sh.append(asks(call("c1"))).stdout)["ids"][0]
    sh.run("fork", root, "meanwhile, another idea")
    leaf = sh.json("status")["leaf"]
    done = sh.run("tool", "c1", "5 passed", "--on-call-branch")
    assert f"the active leaf stays at {leaf}" in done.stdout.decode()
    assert sh.json("status")["leaf"] == leaf
    result = sh.json("tree")["entries"][-1]
    assert result["parentId"] == asked and result["content"] == "5 passed"
    there = sh.json("context", result["id"])["messages"]
    assert [m["role"] for m in there] == ["user", "assistant", "tool"]
    assert there[2]["content"] == "5 passed"
    assert [m["content"] for m in sh.json("context")["messages"]] == [
        "run the tests",
        "meanwhile, another idea",
    ]


def test_an_unknown_call_id_is_refused(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("hi")
    size = s.conversation.file.path.stat().st_size
    with pytest.raises(NotFoundError, match="made a tool call 'nope'"):
        s.append.tool_result("nope", "output")
    with pytest.raises(InvalidEntryError, match="no assistant message in this session made"):
        s.append.entry({"type": "message", "role": "tool", "toolCallId": "nope", "content": "x"})
    assert s.conversation.file.path.stat().st_size == size
    sh = Shell(tmp_path)
    refused = sh.run("--store", "store", "tool", "nope", "output", code=1)
    assert b"No assistant message in this session made a tool call 'nope'." in refused.stderr
    assert s.conversation.file.path.stat().st_size == size


def test_append_with_the_calls_parent_keeps_the_active_leaf(tmp_path: Path) -> None:
    sh = Shell(tmp_path)
    sh.run("init")
    root = sh.json("user", "run the tests")["id"]
    asked = orjson.loads(sh.append(asks(call("c1"))).stdout)["ids"][0]
    sh.run("fork", root, "another idea")
    leaf = sh.json("status")["leaf"]
    result = {"type": "message", "role": "tool", "toolCallId": "c1", "content": "5 passed"}
    made = orjson.loads(sh.append({**result, "parentId": asked}).stdout)
    assert made["leaf"] == leaf == sh.json("status")["leaf"]
    assert sh.json("show", made["ids"][0])["entry"]["parentId"] == asked


def test_append_of_a_result_for_a_call_elsewhere_says_where_to_file_it(tmp_path: Path) -> None:
    sh = Shell(tmp_path)
    sh.run("init")
    root = sh.json("user", "run the tests")["id"]
    asked = orjson.loads(sh.append(asks(call("c1"))).stdout)["ids"][0]
    sh.run("fork", root, "another idea")
    result = {"type": "message", "role": "tool", "toolCallId": "c1", "content": "5 passed"}
    stderr = sh.append(result, code=1).stderr.decode()
    assert "answers tool call 'c1', which was made on another branch" in stderr
    assert f'"parentId": "{asked}"' in stderr
    off_path = {**result, "parentId": root}
    stderr = sh.append(off_path, code=1).stderr.decode()
    assert "not on its path" in stderr


def test_a_result_whose_call_was_compacted_away_is_reported(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("run the tests")
    s.append.entry(asks(call("c1")))
    kept = s.append.user("while that runs: hello").id
    s.append.tool_result("c1", "5 passed")
    s.append.entry({"type": "compaction", "summary": "tests were started", "firstKeptId": kept})
    ctx = s.conversation.context()
    assert all(m["role"] != "tool" for m in ctx.messages)
    assert [d["what"] for d in ctx.dropped] == ["tool result for call c1"]
    bodies = sent(ctx)
    assert bodies.anthropic_dropped[0]["what"] == "tool result for call c1"


def test_a_reply_recorded_block_by_block_is_answered_after_its_last_block(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("read both files")
    # one reply streamed as one entry per block (as Claude Code records it), then the results
    s.append.entry({"type": "message", "role": "assistant", "content": [call("r1", "Read")]})
    s.append.entry({"type": "message", "role": "assistant", "content": [call("r2", "Read")]})
    s.append.tool_result("r1", "first")
    s.append.tool_result("r2", "second")
    s.append.entry({"type": "message", "role": "assistant", "content": "both read"})
    bodies = sent(s.conversation.context())
    turns = [(m["role"], [b["type"] for b in m["content"]]) for m in bodies.anthropic["messages"]]
    assert turns == [
        ("user", ["text"]),
        ("assistant", ["tool_use", "tool_use"]),
        ("user", ["tool_result", "tool_result"]),
        ("assistant", ["text"]),
    ]
    openai = bodies.openai["messages"]
    assert [c["id"] for c in openai[1]["tool_calls"]] == ["r1", "r2"]
    assert [(m["role"], m.get("tool_call_id")) for m in openai[2:]] == [
        ("tool", "r1"),
        ("tool", "r2"),
        ("assistant", None),
    ]


def test_a_reply_after_a_result_stays_after_it(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("run it")
    s.append.entry({"type": "message", "role": "assistant", "content": [call("c1")]})
    s.append.tool_result("c1", "5 passed")
    s.append.entry({"type": "message", "role": "assistant", "content": "all green"})
    assert [(m["role"], m["content"]) for m in s.conversation.context().messages][2:] == [
        ("tool", "5 passed"),
        ("assistant", "all green"),
    ]


TS = "2026-01-01T00:00:00.000Z"


class _Watched(dict):  # type: ignore[type-arg]
    """A record that counts how often its content is read."""

    contents_read = 0

    def get(self, key: Any, default: Any = None) -> Any:
        if key == "content":
            _Watched.contents_read += 1
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        if key == "content":
            _Watched.contents_read += 1
        return super().__getitem__(key)


def test_fsck_reads_no_calls_of_a_session_without_tool_results(tmp_path: Path) -> None:
    """Where no entry is a tool result, no call can be missing one's: fsck does not gather
    the calls of every assistant message (a third of fsck on a long session), and where one
    is, it still finds the result no call made."""
    from convgit.session import verify

    s = new(tmp_path)
    for n in range(50):
        s.append.user(f"ask {n}")
        s.append.records([asks(text=f"reply {n}")])
    s.reload()
    found = s.conversation.tree
    found.entries.update((ident, _Watched(r)) for ident, r in found.entries.items())
    _Watched.contents_read = 0
    assert verify.problems(found, s.track.read_sidecar()) == []
    assert _Watched.contents_read == 0
    result = {"type": "message", "id": "0a0a0a0a", "parentId": s.conversation.leaf, "ts": TS}
    result.update(role="tool", toolCallId="c9", content="x")
    with s.conversation.file.path.open("ab") as f:  # append refuses a result no call made
        f.write(orjson.dumps(result) + b"\n")
    s.reload()
    (orphan,) = verify.problems(s.conversation.tree, s.track.read_sidecar())
    assert "for call c9, which no assistant message made" in orphan.what
