"""The conversation track's promises, through the library API on real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from convgit import CorruptStoreError, LeafMovedError, NotFoundError, Session
from convgit.base.errors import AmbiguousRefError, InvalidEntryError, RefusedError
from convgit.conversation.replay import MISSING_RESULT


def new(tmp_path: Path) -> Session:
    return Session.create(tmp_path, store_dir=tmp_path / "store", snapshots=False)


def reopen(session: Session) -> Session:
    return Session.open(session.location.root, session=session.id, store_dir=session.location.root)


def contents(session: Session, ref: str | None = None) -> list[Any]:
    return [m["content"] for m in session.conversation.context(ref).messages]


def lines(session: Session) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in session.conversation.file.path.read_bytes().splitlines()]


def test_two_replies_under_one_user_message_replay_only_their_branch(tmp_path: Path) -> None:
    s = new(tmp_path)
    question = s.append.user("fix the bug").id
    a = s.append.assistant("plan A").id
    s.moves.retry(a)
    b = s.append.assistant("plan B").id
    assert (
        s.conversation.tree.entries[a]["parentId"]
        == question
        == s.conversation.tree.entries[b]["parentId"]
    )
    assert contents(s, a) == ["fix the bug", "plan A"]
    assert contents(s, b) == ["fix the bug", "plan B"]
    assert contents(s) == ["fix the bug", "plan B"]


def test_switching_back_and_appending_keeps_old_branches(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("task")
    a = s.append.assistant("plan A").id
    s.moves.retry(a)
    b = s.append.assistant("plan B").id
    s.moves.switch(a)
    follow = s.append.user("A failed, why?").id
    assert s.conversation.tree.entries[follow]["parentId"] == a
    again = reopen(s)
    assert {a, b, follow} <= set(again.conversation.tree.entries)
    assert contents(again) == ["task", "plan A", "A failed, why?"]
    assert contents(again, b) == ["task", "plan B"]


def test_a_switch_with_no_message_after_it_survives_reopening(tmp_path: Path) -> None:
    s = new(tmp_path)
    first = s.append.user("one").id
    s.append.assistant("two")
    s.moves.switch(first)
    assert reopen(s).conversation.leaf == first
    assert lines(s)[-1]["type"] == "leaf"


def test_model_change_acts_only_on_its_own_path(tmp_path: Path) -> None:
    s = new(tmp_path)
    root = s.append.user("hi").id
    s.append.entry({"type": "model", "provider": "acme", "model": "big"})
    changed = s.append.assistant("on big").id
    s.moves.switch(root)
    plain = s.append.assistant("on default").id
    assert s.conversation.context(changed).model == {"provider": "acme", "model": "big"}
    assert s.conversation.context(plain).model is None


def test_thinking_level_is_a_setting_not_a_message(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("hi")
    s.append.entry({"type": "thinking", "level": "high"})
    ctx = s.conversation.context()
    assert ctx.thinking == "high"
    assert contents(s) == ["hi"]


def test_compaction_replaces_what_it_summarises_on_its_path_only(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("u1")
    a1 = s.append.assistant("a1").id
    u2 = s.append.user("u2").id
    s.append.assistant("a2")
    s.append.entry({"type": "compaction", "summary": "talked about u1", "firstKeptId": u2})
    s.append.user("u3")
    ctx = s.conversation.context()
    kinds = [(m["role"], m.get("kind")) for m in ctx.messages]
    assert kinds[0] == ("user", "compaction")
    assert "talked about u1" in ctx.messages[0]["content"]
    assert [m["content"] for m in ctx.messages[1:]] == ["u2", "a2", "u3"]
    # a sibling branch from before the compaction still sees everything
    assert contents(s, a1) == ["u1", "a1"]


def test_compaction_without_first_kept_id_summarises_everything_before_it(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("u1")
    s.append.assistant("a1")
    s.append.entry({"type": "compaction", "summary": "S", "firstKeptId": None})
    s.append.user("u2")
    messages = s.conversation.context().messages
    assert messages[0]["kind"] == "compaction"
    assert [m["content"] for m in messages[1:]] == ["u2"]


def test_branch_summary_acts_only_on_the_new_branch(tmp_path: Path) -> None:
    s = new(tmp_path)
    q = s.append.user("task").id
    a = s.append.assistant("plan A failed").id
    s.moves.fork(q, "try plan B", summary="plan A fails because of X")
    ctx = s.conversation.context()
    assert [m.get("kind") for m in ctx.messages] == [None, "branch_summary", None]
    assert "plan A fails because of X" in ctx.messages[1]["content"]
    summary = next(r for r in s.conversation.tree.entries.values() if r["type"] == "branch_summary")
    assert summary["fromId"] == a and summary["parentId"] == q
    assert all(m.get("kind") != "branch_summary" for m in s.conversation.context(a).messages)


def test_fork_without_text_moves_the_leaf_only(tmp_path: Path) -> None:
    s = new(tmp_path)
    q = s.append.user("task").id
    s.append.assistant("reply")
    before = len(s.conversation.tree.entries)
    assert s.moves.fork(q) == q
    assert s.conversation.leaf == q and len(s.conversation.tree.entries) == before


def test_edit_makes_a_sibling_and_keeps_the_original(tmp_path: Path) -> None:
    s = new(tmp_path)
    q = s.append.user("tpyo").id
    s.append.assistant("what?")
    fixed = s.moves.edit(q, "typo")
    assert (
        s.conversation.tree.entries[fixed]["parentId"] is None and q in s.conversation.tree.entries
    )
    assert contents(s) == ["typo"]


def test_edit_refuses_non_messages(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("x")
    model = s.append.entry({"type": "model", "provider": "p", "model": "m"}).id
    with pytest.raises(RefusedError):
        s.moves.edit(model, "no")


def test_retry_of_a_reply_makes_the_next_reply_its_sibling(tmp_path: Path) -> None:
    s = new(tmp_path)
    q = s.append.user("q").id
    first = s.append.assistant("first").id
    assert s.moves.retry(first) == q
    second = s.append.assistant("second").id
    assert s.conversation.tree.children[q] == [first, second]


def test_tool_calls_stay_paired(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("list files")
    calls = [
        {"type": "tool_call", "id": "c1", "name": "ls", "input": {}},
        {"type": "tool_call", "id": "c2", "name": "cat", "input": {"p": "x"}},
    ]
    s.append.assistant([{"type": "text", "text": "looking"}, *calls])
    s.append.tool_result("c1", "a.txt")
    # a result for a call nobody made can only come from a file written elsewhere: append refuses it
    orphan = {
        **_entry("0a0a0a0a", s.conversation.leaf, "orphan result"),
        "role": "tool",
        "toolCallId": "zz",
    }
    with s.conversation.file.path.open("ab") as f:
        f.write(orjson.dumps(orphan) + b"\n")
    s = reopen(s)
    s.append.user("and?")
    messages = s.conversation.context().messages
    roles = [(m["role"], m.get("toolCallId")) for m in messages]
    assert roles == [
        ("user", None),
        ("assistant", None),
        ("tool", "c1"),
        ("tool", "c2"),
        ("user", None),
    ]
    assert messages[3]["isError"] is True and messages[3]["content"] == MISSING_RESULT


def test_unknown_kinds_and_fields_are_kept_and_not_replayed(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("hi")
    s.append.entry({"type": "future_thing", "payload": [1, 2]})
    s.append.entry({"type": "message", "role": "assistant", "content": "ok", "mood": "happy"})
    again = reopen(s)
    assert [e.type for e in again.conversation.path()] == ["message", "future_thing", "message"]
    assert again.conversation.path()[-1].extra == {"mood": "happy"}
    assert contents(again) == ["hi", "ok"]


def test_references(tmp_path: Path) -> None:
    s = new(tmp_path)
    a = s.append.user("a").id
    b = s.append.assistant("b").id
    c = s.append.user("c").id
    s.moves.label(b, "good")
    assert s.conversation.resolve("@") == c
    assert s.conversation.resolve("@~2") == a
    assert s.conversation.resolve("root") == a
    assert s.conversation.resolve("good") == b
    assert s.conversation.resolve("good~1") == a
    assert s.conversation.resolve(c[:6]) == c
    with pytest.raises(NotFoundError):
        s.conversation.resolve("@~9")
    with pytest.raises(NotFoundError):
        s.conversation.resolve("nolabel")


def test_ambiguous_prefix_is_refused(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.entries(
        [
            {"type": "message", "id": "abc1", "parentId": None, "role": "user", "content": "x"},
            {"type": "message", "id": "abc2", "parentId": "abc1", "role": "user", "content": "y"},
        ]
    )
    with pytest.raises(AmbiguousRefError):
        s.conversation.resolve("abc")


def test_a_stale_session_gets_leaf_moved_error(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("one")
    other = reopen(s)
    other.append.assistant("two")
    with pytest.raises(LeafMovedError):
        s.append.user("three")
    assert len(reopen(s).conversation.tree.entries) == 2
    forced = s.append.user("three anyway", force=True)
    assert forced.parent_id == s.conversation.tree.path()[0]
    s.reload()
    assert s.append.user("four").parent_id == forced.id


def test_append_validates_every_entry_before_writing_any(tmp_path: Path) -> None:
    s = new(tmp_path)
    size = s.conversation.file.path.stat().st_size
    with pytest.raises(InvalidEntryError):
        s.append.entries(
            [
                {"type": "message", "role": "user", "content": "fine"},
                {"type": "message", "role": "robot", "content": "bad role"},
            ]
        )
    assert s.conversation.file.path.stat().st_size == size


def test_label_can_be_cleared(tmp_path: Path) -> None:
    s = new(tmp_path)
    a = s.append.user("a").id
    s.moves.label(a, "x")
    s.moves.label(a, None)
    assert reopen(s).conversation.tree.labels == {}


def test_name_is_kept(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.moves.rename("experiment 1")
    assert reopen(s).conversation.name == "experiment 1"


def _write_session(tmp_path: Path, records: list[dict[str, Any]]) -> Session:
    s = new(tmp_path)
    with s.conversation.file.path.open("ab") as f:
        for record in records:
            f.write(orjson.dumps(record) + b"\n")
    return reopen(s)


def _entry(ident: str, parent: str | None, text: str = "x") -> dict[str, Any]:
    return {
        "type": "message",
        "id": ident,
        "parentId": parent,
        "ts": "2026-01-01T00:00:00.000Z",
        "role": "user",
        "content": text,
    }


@pytest.mark.parametrize(
    ("records", "words"),
    [
        ([_entry("a", None), _entry("a", None, "other")], "repeats the id of line 2"),
        ([_entry("a", None), _entry("b", "zz")], "parent zz that does not exist"),
        ([_entry("a", "b"), _entry("b", "a")], "parent cycle"),
        ([_entry("a", "a")], "parent cycle of 1"),
    ],
    ids=["duplicate-ids", "missing-parent", "cycle", "self-parent"],
)
def test_broken_trees_are_refused_not_replayed(
    tmp_path: Path, records: list[dict[str, Any]], words: str
) -> None:
    s = _write_session(tmp_path, records)
    for read in (
        s.conversation.context,
        s.conversation.path,
        s.conversation.all_entries,
        lambda: s.conversation.resolve("@"),
    ):
        with pytest.raises(CorruptStoreError, match=words):
            read()
    with pytest.raises(CorruptStoreError):
        s.append.user("more")


def test_torn_last_line_is_ignored_then_quarantined_by_the_next_writer(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("kept")
    with s.conversation.file.path.open("ab") as f:
        f.write(b'{"type":"message","id":"dead","par')
    again = reopen(s)
    assert contents(again) == ["kept"]
    again.append.user("after")
    data = s.conversation.file.path.read_bytes()
    assert data.endswith(b"\n") and b"dead" not in data
    quarantined = [
        orjson.loads(x) for x in s.conversation.file.quarantine_path.read_bytes().splitlines()
    ]
    assert quarantined[0]["text"] == '{"type":"message","id":"dead","par'
    assert contents(reopen(s)) == ["kept", "after"]


def test_a_byte_order_mark_is_tolerated(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append.user("hi")
    s.conversation.file.path.write_bytes(b"\xef\xbb\xbf" + s.conversation.file.path.read_bytes())
    again = reopen(s)
    assert contents(again) == ["hi"]
    again.append.user("more")
    assert contents(reopen(s)) == ["hi", "more"]


def test_repair_quarantines_bad_lines_and_keeps_a_backup(tmp_path: Path) -> None:
    s = _write_session(tmp_path, [_entry("a", None), _entry("b", "zz"), _entry("c", "b")])
    original = s.conversation.file.path.read_bytes()
    report = s.repair()
    assert report.moved == 2 and report.backup is not None
    assert report.backup.read_bytes() == original
    assert not s.problems()
    assert list(s.conversation.tree.entries) == ["a"]
    moved = [orjson.loads(x) for x in s.conversation.file.quarantine_path.read_bytes().splitlines()]
    assert [m["line"] for m in moved] == [3, 4]


def test_future_format_version_is_refused(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.conversation.file.path.write_bytes(
        s.conversation.file.path.read_bytes().replace(b'"v":1', b'"v":2')
    )
    with pytest.raises(CorruptStoreError, match="format v2"):
        reopen(s)


def test_no_current_session_says_how_to_start_one(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError) as info:
        Session.open(tmp_path, store_dir=tmp_path / "store")
    assert info.value.hint == "convgit init"


def test_newest_leaf_is_where_the_branch_was_last_written(tmp_path: Path) -> None:
    s = new(tmp_path)
    task = s.append.user("task").id
    plan = s.append.assistant("plan A").id
    assert s.conversation.tree.newest_leaf(plan) == plan  # nothing below: the entry itself
    s.append.user("still failing")
    old_end = s.append.assistant("a long attempt").id
    s.append.user("and now?")
    deepest = s.append.assistant("the longest branch ends here").id
    assert s.conversation.tree.newest_leaf(plan) == deepest
    edited = s.moves.edit(
        old_end, "a second, shorter attempt"
    )  # newer, and shallower than `deepest`
    assert s.conversation.tree.newest_leaf(plan) == edited
    assert s.conversation.tree.newest_leaf(task) == edited
    s.moves.switch(deepest)
    later = s.append.user("back on the long branch").id  # an older fork, written to last
    assert s.conversation.tree.newest_leaf(task) == later
    assert s.conversation.tree.newest_leaf(edited) == edited


def test_open_tool_calls_are_those_a_note_would_cut_off(tmp_path: Path) -> None:
    s = new(tmp_path)
    question = s.append.user("list files").id
    calls = [
        {"type": "tool_call", "id": "c1", "name": "ls", "input": {}},
        {"type": "tool_call", "id": "c2", "name": "cat", "input": {"p": "x"}},
    ]
    asked = s.append.assistant([{"type": "text", "text": "looking"}, *calls]).id
    assert s.conversation.tree.open_tool_calls(asked) == ["c1", "c2"]
    first = s.append.tool_result("c1", "a.txt").id
    assert s.conversation.tree.open_tool_calls(first) == ["c2"]
    second = s.append.tool_result("c2", "x").id
    assert s.conversation.tree.open_tool_calls(second) == []
    assert s.conversation.tree.open_tool_calls(question) == []
    assert s.conversation.tree.open_tool_calls(s.append.assistant("done").id) == []
