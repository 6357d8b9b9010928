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
    return [m["content"] for m in session.context(ref).messages]


def lines(session: Session) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in session.file.path.read_bytes().splitlines()]


def test_two_replies_under_one_user_message_replay_only_their_branch(tmp_path: Path) -> None:
    s = new(tmp_path)
    question = s.append_user("fix the bug").id
    a = s.append_assistant("plan A").id
    s.retry(a)
    b = s.append_assistant("plan B").id
    assert s.tree.entries[a]["parentId"] == question == s.tree.entries[b]["parentId"]
    assert contents(s, a) == ["fix the bug", "plan A"]
    assert contents(s, b) == ["fix the bug", "plan B"]
    assert contents(s) == ["fix the bug", "plan B"]


def test_switching_back_and_appending_keeps_old_branches(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append_user("task")
    a = s.append_assistant("plan A").id
    s.retry(a)
    b = s.append_assistant("plan B").id
    s.switch(a)
    follow = s.append_user("A failed, why?").id
    assert s.tree.entries[follow]["parentId"] == a
    again = reopen(s)
    assert {a, b, follow} <= set(again.tree.entries)
    assert contents(again) == ["task", "plan A", "A failed, why?"]
    assert contents(again, b) == ["task", "plan B"]


def test_a_switch_with_no_message_after_it_survives_reopening(tmp_path: Path) -> None:
    s = new(tmp_path)
    first = s.append_user("one").id
    s.append_assistant("two")
    s.switch(first)
    assert reopen(s).leaf == first
    assert lines(s)[-1]["type"] == "leaf"


def test_model_change_acts_only_on_its_own_path(tmp_path: Path) -> None:
    s = new(tmp_path)
    root = s.append_user("hi").id
    s.append({"type": "model", "provider": "acme", "model": "big"})
    changed = s.append_assistant("on big").id
    s.switch(root)
    plain = s.append_assistant("on default").id
    assert s.context(changed).model == {"provider": "acme", "model": "big"}
    assert s.context(plain).model is None


def test_thinking_level_is_a_setting_not_a_message(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append_user("hi")
    s.append({"type": "thinking", "level": "high"})
    ctx = s.context()
    assert ctx.thinking == "high"
    assert contents(s) == ["hi"]


def test_compaction_replaces_what_it_summarises_on_its_path_only(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append_user("u1")
    a1 = s.append_assistant("a1").id
    u2 = s.append_user("u2").id
    s.append_assistant("a2")
    s.append({"type": "compaction", "summary": "talked about u1", "firstKeptId": u2})
    s.append_user("u3")
    ctx = s.context()
    kinds = [(m["role"], m.get("kind")) for m in ctx.messages]
    assert kinds[0] == ("user", "compaction")
    assert "talked about u1" in ctx.messages[0]["content"]
    assert [m["content"] for m in ctx.messages[1:]] == ["u2", "a2", "u3"]
    # a sibling branch from before the compaction still sees everything
    assert contents(s, a1) == ["u1", "a1"]


def test_compaction_without_first_kept_id_summarises_everything_before_it(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append_user("u1")
    s.append_assistant("a1")
    s.append({"type": "compaction", "summary": "S", "firstKeptId": None})
    s.append_user("u2")
    messages = s.context().messages
    assert messages[0]["kind"] == "compaction"
    assert [m["content"] for m in messages[1:]] == ["u2"]


def test_branch_summary_acts_only_on_the_new_branch(tmp_path: Path) -> None:
    s = new(tmp_path)
    q = s.append_user("task").id
    a = s.append_assistant("plan A failed").id
    s.fork(q, "try plan B", summary="plan A fails because of X")
    ctx = s.context()
    assert [m.get("kind") for m in ctx.messages] == [None, "branch_summary", None]
    assert "plan A fails because of X" in ctx.messages[1]["content"]
    summary = next(r for r in s.tree.entries.values() if r["type"] == "branch_summary")
    assert summary["fromId"] == a and summary["parentId"] == q
    assert all(m.get("kind") != "branch_summary" for m in s.context(a).messages)


def test_fork_without_text_moves_the_leaf_only(tmp_path: Path) -> None:
    s = new(tmp_path)
    q = s.append_user("task").id
    s.append_assistant("reply")
    before = len(s.tree.entries)
    assert s.fork(q) == q
    assert s.leaf == q and len(s.tree.entries) == before


def test_edit_makes_a_sibling_and_keeps_the_original(tmp_path: Path) -> None:
    s = new(tmp_path)
    q = s.append_user("tpyo").id
    s.append_assistant("what?")
    fixed = s.edit(q, "typo")
    assert s.tree.entries[fixed]["parentId"] is None and q in s.tree.entries
    assert contents(s) == ["typo"]


def test_edit_refuses_non_messages(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append_user("x")
    model = s.append({"type": "model", "provider": "p", "model": "m"}).id
    with pytest.raises(RefusedError):
        s.edit(model, "no")


def test_retry_of_a_reply_makes_the_next_reply_its_sibling(tmp_path: Path) -> None:
    s = new(tmp_path)
    q = s.append_user("q").id
    first = s.append_assistant("first").id
    assert s.retry(first) == q
    second = s.append_assistant("second").id
    assert s.tree.children[q] == [first, second]


def test_tool_calls_stay_paired(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append_user("list files")
    calls = [
        {"type": "tool_call", "id": "c1", "name": "ls", "input": {}},
        {"type": "tool_call", "id": "c2", "name": "cat", "input": {"p": "x"}},
    ]
    s.append_assistant([{"type": "text", "text": "looking"}, *calls])
    s.append_tool_result("c1", "a.txt")
    # a result for a call nobody made can only come from a file written elsewhere: append refuses it
    orphan = {**_entry("0a0a0a0a", s.leaf, "orphan result"), "role": "tool", "toolCallId": "zz"}
    with s.file.path.open("ab") as f:
        f.write(orjson.dumps(orphan) + b"\n")
    s = reopen(s)
    s.append_user("and?")
    messages = s.context().messages
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
    s.append_user("hi")
    s.append({"type": "future_thing", "payload": [1, 2]})
    s.append({"type": "message", "role": "assistant", "content": "ok", "mood": "happy"})
    again = reopen(s)
    assert [e.type for e in again.path()] == ["message", "future_thing", "message"]
    assert again.path()[-1].extra == {"mood": "happy"}
    assert contents(again) == ["hi", "ok"]


def test_references(tmp_path: Path) -> None:
    s = new(tmp_path)
    a = s.append_user("a").id
    b = s.append_assistant("b").id
    c = s.append_user("c").id
    s.label(b, "good")
    assert s.resolve("@") == c
    assert s.resolve("@~2") == a
    assert s.resolve("root") == a
    assert s.resolve("good") == b
    assert s.resolve("good~1") == a
    assert s.resolve(c[:6]) == c
    with pytest.raises(NotFoundError):
        s.resolve("@~9")
    with pytest.raises(NotFoundError):
        s.resolve("nolabel")


def test_ambiguous_prefix_is_refused(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append_many(
        [
            {"type": "message", "id": "abc1", "parentId": None, "role": "user", "content": "x"},
            {"type": "message", "id": "abc2", "parentId": "abc1", "role": "user", "content": "y"},
        ]
    )
    with pytest.raises(AmbiguousRefError):
        s.resolve("abc")


def test_a_stale_session_gets_leaf_moved_error(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append_user("one")
    other = reopen(s)
    other.append_assistant("two")
    with pytest.raises(LeafMovedError):
        s.append_user("three")
    assert len(reopen(s).tree.entries) == 2
    forced = s.append_user("three anyway", force=True)
    assert forced.parent_id == s.tree.path()[0]
    s.refresh()
    assert s.append_user("four").parent_id == forced.id


def test_append_validates_every_entry_before_writing_any(tmp_path: Path) -> None:
    s = new(tmp_path)
    size = s.file.path.stat().st_size
    with pytest.raises(InvalidEntryError):
        s.append_many(
            [
                {"type": "message", "role": "user", "content": "fine"},
                {"type": "message", "role": "robot", "content": "bad role"},
            ]
        )
    assert s.file.path.stat().st_size == size


def test_label_can_be_cleared(tmp_path: Path) -> None:
    s = new(tmp_path)
    a = s.append_user("a").id
    s.label(a, "x")
    s.label(a, None)
    assert reopen(s).tree.labels == {}


def test_name_is_kept(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.rename("experiment 1")
    assert reopen(s).display_name == "experiment 1"


def _write_session(tmp_path: Path, records: list[dict[str, Any]]) -> Session:
    s = new(tmp_path)
    with s.file.path.open("ab") as f:
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
    for read in (s.context, s.path, s.all_entries, lambda: s.resolve("@")):
        with pytest.raises(CorruptStoreError, match=words):
            read()
    with pytest.raises(CorruptStoreError):
        s.append_user("more")


def test_torn_last_line_is_ignored_then_quarantined_by_the_next_writer(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append_user("kept")
    with s.file.path.open("ab") as f:
        f.write(b'{"type":"message","id":"dead","par')
    again = reopen(s)
    assert contents(again) == ["kept"]
    again.append_user("after")
    data = s.file.path.read_bytes()
    assert data.endswith(b"\n") and b"dead" not in data
    quarantined = [orjson.loads(x) for x in s.file.quarantine_path.read_bytes().splitlines()]
    assert quarantined[0]["text"] == '{"type":"message","id":"dead","par'
    assert contents(reopen(s)) == ["kept", "after"]


def test_a_byte_order_mark_is_tolerated(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.append_user("hi")
    s.file.path.write_bytes(b"\xef\xbb\xbf" + s.file.path.read_bytes())
    again = reopen(s)
    assert contents(again) == ["hi"]
    again.append_user("more")
    assert contents(reopen(s)) == ["hi", "more"]


def test_repair_quarantines_bad_lines_and_keeps_a_backup(tmp_path: Path) -> None:
    s = _write_session(tmp_path, [_entry("a", None), _entry("b", "zz"), _entry("c", "b")])
    original = s.file.path.read_bytes()
    report = s.repair()
    assert report.moved == 2 and report.backup is not None
    assert report.backup.read_bytes() == original
    assert not s.problems()
    assert list(s.tree.entries) == ["a"]
    moved = [orjson.loads(x) for x in s.file.quarantine_path.read_bytes().splitlines()]
    assert [m["line"] for m in moved] == [3, 4]


def test_future_format_version_is_refused(tmp_path: Path) -> None:
    s = new(tmp_path)
    s.file.path.write_bytes(s.file.path.read_bytes().replace(b'"v":1', b'"v":2'))
    with pytest.raises(CorruptStoreError, match="format v2"):
        reopen(s)


def test_no_current_session_says_how_to_start_one(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError) as info:
        Session.open(tmp_path, store_dir=tmp_path / "store")
    assert info.value.hint == "convgit init"


def test_newest_leaf_is_where_the_branch_was_last_written(tmp_path: Path) -> None:
    s = new(tmp_path)
    task = s.append_user("task").id
    plan = s.append_assistant("plan A").id
    assert s.tree.newest_leaf(plan) == plan  # nothing below: the entry itself
    s.append_user("still failing")
    old_end = s.append_assistant("a long attempt").id
    s.append_user("and now?")
    deepest = s.append_assistant("the longest branch ends here").id
    assert s.tree.newest_leaf(plan) == deepest
    edited = s.edit(old_end, "a second, shorter attempt")  # newer, and shallower than `deepest`
    assert s.tree.newest_leaf(plan) == edited
    assert s.tree.newest_leaf(task) == edited
    s.switch(deepest)
    later = s.append_user("back on the long branch").id  # an older fork, written to last
    assert s.tree.newest_leaf(task) == later
    assert s.tree.newest_leaf(edited) == edited


def test_open_tool_calls_are_those_a_note_would_cut_off(tmp_path: Path) -> None:
    s = new(tmp_path)
    question = s.append_user("list files").id
    calls = [
        {"type": "tool_call", "id": "c1", "name": "ls", "input": {}},
        {"type": "tool_call", "id": "c2", "name": "cat", "input": {"p": "x"}},
    ]
    asked = s.append_assistant([{"type": "text", "text": "looking"}, *calls]).id
    assert s.tree.open_tool_calls(asked) == ["c1", "c2"]
    first = s.append_tool_result("c1", "a.txt").id
    assert s.tree.open_tool_calls(first) == ["c2"]
    second = s.append_tool_result("c2", "x").id
    assert s.tree.open_tool_calls(second) == []
    assert s.tree.open_tool_calls(question) == []
    assert s.tree.open_tool_calls(s.append_assistant("done").id) == []
