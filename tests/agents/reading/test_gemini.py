"""Gemini CLI chat files import through the CLI as a line of messages by id: each message with
its thoughts, each tool call with the result Gemini keeps inside the message, what the user
saw but the model did not kept aside; Gemini rewrites the whole file, and each newer version
adds only what is new: more messages, a call a message gained, a branch after a rewind."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from convgit.agents.gemini import reading as gemini
from convgit.agents.reading import Cursor, Known
from tests.agents.reading.agentfiles import (
    Store,
    anthropic_sound,
    counts,
    forks,
    openai_sound,
    placeholders,
    role,
    sound_tree,
    texts,
    thinking,
)

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "gemini"


@dataclass(frozen=True)
class Shape:
    """What reading the document by hand says."""

    kinds: dict[str, int]
    leaf: str  # the last message's id


SHAPES = {
    # 2 prompts; 4 replies, two of them a read_file and a write_file call with their results
    "gemini_session_thoughts_read-file.json": Shape(
        {"user": 2, "model": 1, "assistant": 6, "tool": 2}, "9de7645b-d4b9-4865-a494-d8b945433383"
    ),
    # 1 prompt, 11 replies with 9 tool calls (all answered), an "update available" info
    "gemini_session_tool-calls_info-msg_13-messages.json": Shape(
        {"user": 1, "model": 1, "assistant": 20, "tool": 9, "custom gemini.info": 1},
        "be76806e-a07a-4906-ad3d-d889ee683b13",
    ),
    # a write_file call, then Gemini's own "System: Please continue." as the second prompt
    "gemini_session_write-file.json": Shape(
        {"user": 2, "model": 1, "assistant": 3, "tool": 1}, "bb58d15c-8703-44cf-aa1f-8ac945f39452"
    ),
}


def _messages(path: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(path.read_text())["messages"]
    return found


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_chat_imports_as_its_messages_in_order(
    samples: Path, tmp_path: Path, name: str
) -> None:
    path = samples / "gemini-cli" / name
    shape = SHAPES[name]
    store = Store(tmp_path / "store")
    result = store.import_("gemini", path)
    assert result["new"] == result["entries"] == sum(shape.kinds.values())
    assert result["notes"] == [] and result["kept"] == {}
    entries = store.entries(result["session"])
    sound_tree(entries)
    store.fsck_clean(result["session"])
    assert counts(entries) == shape.kinds
    assert forks(entries) == {} and result["leaf"] == shape.leaf
    by_id = {e["id"]: e for e in entries}
    messages = _messages(path)
    assert [m["id"] for m in messages] == [e["id"] for e in entries if e["id"] in
                                           {m["id"] for m in messages}]  # fmt: skip
    for message in messages:
        entry = by_id[message["id"]]
        if message["type"] in ("user", "gemini") and message["content"]:
            assert texts(entry) == [message["content"]]
        said = [t["description"] for t in message.get("thoughts", [])]
        assert all(any(d in t for t in thinking(entry)) for d in said)
        for call in message.get("toolCalls", []):
            (made,) = [e for e in entries for p in e.get("content") or [] if
                       isinstance(p, dict) and p.get("id") == call["id"]]  # fmt: skip
            assert made["content"][0]["input"] == call["args"]
            (answer,) = [e for e in entries if e.get("toolCallId") == call["id"]]
            output = call["result"][0]["functionResponse"]["response"]["output"]
            assert texts(answer) == [output]
    for fmt, sound in (("openai", openai_sound), ("anthropic", anthropic_sound)):
        sound(store.context(result["session"], fmt))
    assert placeholders(store.context(result["session"], "openai")) == 0
    assert store.import_("gemini", path)["new"] == 0


# -- a document Gemini rewrites -------------------------------------------------------------


def test_each_rewrite_adds_only_what_is_new_where_it_belongs(tmp_path: Path) -> None:
    chat = tmp_path / "session-2026-01-10T02-08-0b1e2d3c.json"
    store = Store(tmp_path / "store", real=False)
    news = []
    for version in ("rewrite-1-of-3.json", "rewrite-2-of-3.json", "rewrite-3-of-3.json"):
        shutil.copyfile(FIXTURES / version, chat)
        news.append(store.import_("gemini", chat)["new"])
    assert news == [5, 5, 3]  # +g2 u2 g3 (call, result); +the call g3 gained, its result, g4
    result = store.import_("gemini", chat)
    assert result["new"] == 0 and result["leaf"] == "g4"
    entries = store.entries(result["session"])
    assert forks(entries) == {}
    shell, read = "run_shell_command-1", "read_file-1"
    assert [e["id"] for e in entries][-6:] == [
        "g3", gemini._part_id("call", shell), gemini._part_id("result", shell),
        gemini._part_id("call", read), gemini._part_id("result", read), "g4",
    ]  # fmt: skip
    # the grown message keeps both of its texts: the first import's, and the newer one beside
    lines = tmp_path / "store" / ".convgit" / "sessions" / f"{result['session']}.jsonl"
    records = [json.loads(x) for x in lines.read_text().splitlines()]
    beside = [r for r in records if r["type"] == "native" and r["key"].startswith("g3@")]
    assert [r["at"] for r in beside] == ["g3"]
    assert len(json.loads(beside[0]["text"])["toolCalls"]) == 2
    openai_sound(store.context(result["session"], "openai"))
    assert placeholders(store.context(result["session"], "openai")) == 0


def test_a_rewind_makes_a_branch_from_the_last_message_it_kept(tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    store = Store(tmp_path / "store", real=False)
    shutil.copyfile(FIXTURES / "rewrite-2-of-3.json", chat)
    store.import_("gemini", chat)
    shutil.copyfile(FIXTURES / "rewind-after-rewrite-2.json", chat)
    result = store.import_("gemini", chat)
    assert result["new"] == 2 and result["leaf"] == "g5"
    entries = store.entries(result["session"])
    assert forks(entries) == {"g2": {"u2", "u3"}}
    said = [m["content"] for m in store.context(result["session"], "openai")["messages"]]
    assert said[-2:] == ["Make it about blue instead.", "Rewriting docs/red.md about blue."]
    assert "Also check it exists." not in said


def test_a_chat_written_as_json_lines_keeps_every_version_and_the_rewound_branch(
    tmp_path: Path,
) -> None:
    """Newer Gemini CLI: the message written again as it gains a call, its result and its
    token counts, then a rewind to u2 and another exchange; read as Gemini reads it back."""
    path = FIXTURES / "jsonl-updates-and-rewind.jsonl"
    store = Store(tmp_path / "store", real=False)
    result = store.import_("gemini", path)
    entries = store.entries(result["session"])
    call, answer = (
        gemini._part_id("call", "write_file-1"),
        gemini._part_id("result", "write_file-1"),
    )
    assert [(e["id"], e["parentId"]) for e in entries] == [
        ("u1", None), ("model-g1", "u1"), ("g1", "model-g1"), (call, "g1"), (answer, call),
        ("u2", answer), ("g2", "u2"), ("u3", answer), ("g3", "u3"),
    ]  # fmt: skip
    assert result["leaf"] == "g3" and result["notes"] == []
    said = [m["content"] for m in store.context(result["session"], "openai")["messages"]]
    assert said[-2:] == ["Make it about blue instead.", "Rewriting it about blue."]
    # every line is kept: the first version of g1 on its entry, the later ones beside it
    session_file = tmp_path / "store" / ".convgit" / "sessions" / f"{result['session']}.jsonl"
    kept = [json.loads(x) for x in session_file.read_text().splitlines()[1:]]
    texts_kept = [r["text"] for r in kept if r["type"] == "native"]
    texts_kept += [r["native"]["text"] for r in kept if "text" in r.get("native", {})]
    assert sorted(texts_kept) == sorted(path.read_text().splitlines())
    assert store.import_("gemini", path)["new"] == 0


@pytest.mark.parametrize("lines", [5, 7, 10])
def test_json_lines_read_as_they_grow_make_one_tree(tmp_path: Path, lines: int) -> None:
    path = FIXTURES / "jsonl-updates-and-rewind.jsonl"
    whole = path.read_bytes().splitlines(keepends=True)
    growing = tmp_path / "session-2026-02-01T10-00-0b1e2d3c.jsonl"
    growing.write_bytes(b"".join(whole[:lines]) + whole[lines][: len(whole[lines]) // 2])
    store = Store(tmp_path / "store", real=False)
    first = store.import_("gemini", growing)
    assert [n["line"] for n in first["notes"]] == [lines + 1]
    shutil.copyfile(path, growing)
    second = store.import_("gemini", growing)
    once = Store(tmp_path / "once", real=False)
    one = once.import_("gemini", path)
    assert [(e["id"], e["parentId"]) for e in store.entries(second["session"])] == [
        (e["id"], e["parentId"]) for e in once.entries(one["session"])
    ]
    assert second["leaf"] == "g3"


def test_a_resumed_chat_keeps_one_line_of_messages(tmp_path: Path) -> None:
    """Gemini CLI 0.61's ``--resume`` writes the history again (``$set`` of every message): a
    call's message without its ``toolCalls`` (the call as a part), and the answers once more as
    ``<id>_response``. The next prompt still follows the last reply; nothing branches."""
    answer = {"functionResponse": {"id": "w__1", "name": "write_file", "response": {"output": 1}}}
    call = {"id": "w__1", "name": "write_file", "args": {"file_path": "a"}, "status": "success",
            "result": [answer]}  # fmt: skip
    u1 = {"id": "u1", "type": "user", "content": [{"text": "Write a"}]}
    g1 = {"id": "g1", "type": "gemini", "content": "", "model": "m", "toolCalls": [call]}
    r1 = {"id": "r1", "type": "user", "content": [answer]}
    g2 = {"id": "g2", "type": "gemini", "content": "Wrote a.", "model": "m"}
    again = {"id": "g1", "type": "gemini", "content": [{"functionCall": {"id": "w__1"}}]}
    echo = {"id": "g1_response", "type": "user", "content": [answer]}
    header = {"sessionId": "s1", "projectHash": "x", "kind": "main"}
    lines = [
        header, u1, g1, r1, g2,
        header, {"$set": {"messages": []}}, {"$set": {"sessionId": "s1"}},
        {"$set": {"messages": [u1, again, echo, r1, {**g2, "content": [{"text": "Wrote a."}]}]}},
        {"id": "u3", "type": "user", "content": [{"text": "And b"}]},
        {"id": "g3", "type": "gemini", "content": "Wrote b.", "model": "m"},
    ]  # fmt: skip
    path = tmp_path / "session-2026-12-02T07-11-s1.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    store = Store(tmp_path / "store", real=False)
    result = store.import_("gemini", path)
    entries = store.entries(result["session"])
    made, answered = gemini._part_id("call", "w__1"), gemini._part_id("result", "w__1")
    assert [(e["id"], e["parentId"]) for e in entries] == [
        ("u1", None), ("model-g1", "u1"), ("g1", "model-g1"), (made, "g1"), (answered, made),
        ("r1", answered), ("g2", "r1"), ("u3", "g2"), ("g3", "u3"),
    ]  # fmt: skip
    assert result["leaf"] == "g3"
    assert store.import_("gemini", path)["new"] == 0


# -- quirks ------------------------------------------------------------------------------------


def _batch(name: str) -> list[dict[str, Any]]:
    batch = gemini.parse((FIXTURES / name).read_bytes(), Cursor(), Known())
    return [r for r in batch.records if "parentId" in r]


def test_thoughts_are_thinking_parts_before_the_text() -> None:
    entries = _batch("thoughts-and-tool-calls.json")
    reply = next(e for e in entries if e["id"] == "g2")
    assert reply["content"] == [
        {"type": "thinking", "thinking": "**Summarising**\n\nTwo short items."},
        {"type": "text", "text": "Two items: buy milk, call Bob."},
    ]
    assert entries[1] == {**entries[1], "type": "model", "provider": "google",
                          "model": "gemini-2.5-pro"}  # fmt: skip


def test_parallel_calls_come_before_their_results() -> None:
    entries = _batch("parallel-tool-calls.json")
    assert [role(e) for e in entries] == [
        "user", "model", "assistant", "assistant", "assistant", "tool", "tool", "assistant"
    ]  # fmt: skip


def test_a_failed_call_is_an_error_result_and_a_cancelled_one_stays_unanswered(
    tmp_path: Path,
) -> None:
    entries = _batch("tool-call-error-and-cancelled.json")
    (result,) = [e for e in entries if role(e) == "tool"]
    assert result["isError"] and texts(result) == ["rm: build: Permission denied"]
    store = Store(tmp_path / "store", real=False)
    sid = store.import_("gemini", FIXTURES / "tool-call-error-and-cancelled.json")["session"]
    request = store.context(sid, "openai")
    openai_sound(request)
    assert placeholders(request) == 1


def test_what_the_user_saw_is_kept_and_not_replayed(tmp_path: Path) -> None:
    entries = _batch("info-warning-error-messages.json")
    assert [role(e) for e in entries] == [
        "custom gemini.info", "user", "custom gemini.warning", "custom gemini.error",
        "model", "assistant",
    ]  # fmt: skip
    store = Store(tmp_path / "store", real=False)
    sid = store.import_("gemini", FIXTURES / "info-warning-error-messages.json")["session"]
    said = [m["content"] for m in store.context(sid, "openai")["messages"]]
    assert said == ["Hello.", "Hello! How can I help?"]


def test_content_as_parts_keeps_each_part() -> None:
    entries = _batch("content-as-parts.json")
    assert texts(entries[0]) == ["What is in ", "this file?"]
    assert texts(entries[2]) == ["It is empty."]


def test_an_unknown_message_type_is_kept_and_reported(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", real=False)
    result = store.import_("gemini", FIXTURES / "unknown-message-type.json")
    assert list(result["kept"]) == ["message type compression"]
    store.fsck_clean(result["session"])


REFUSED = {
    "bad-not-json.json": "bad-not-json.json is not a Gemini CLI session file",
    "bad-not-an-object.json": "bad-not-an-object.json is not a Gemini CLI session file",
    "bad-truncated-document.json": "is not a Gemini CLI session file",
    "bad-no-messages.json": "it has no messages list",
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_file_that_is_no_chat_is_refused_in_one_sentence(tmp_path: Path, name: str) -> None:
    store = Store(tmp_path / "store", real=False)
    assert REFUSED[name] in store.refused("gemini", FIXTURES / name)
    assert all(s["entries"] == 0 for s in store.sessions())


def _kept_texts(store_folder: Path, session: str) -> list[str]:
    """Every text the session keeps of the chat's lines: on entries and beside them."""
    path = store_folder / ".convgit" / "sessions" / f"{session}.jsonl"
    records = [json.loads(x) for x in path.read_text().splitlines()[1:]]
    found = [r["text"] for r in records if r["type"] == "native"]
    return found + [r["native"]["text"] for r in records if "text" in r.get("native", {})]


def test_a_message_written_twice_in_one_history_is_read_as_gemini_reads_it(
    tmp_path: Path,
) -> None:
    """Gemini CLI 0.61, at the second ``--resume`` that starts in another minute than the chat
    file's name, writes the history again with the answers of a call (``g1_response``) twice.
    Gemini's own reader keeps the later in the earlier's place; so does the import: every turn
    comes in, the second copy named in the notes, nothing refused."""
    path = FIXTURES / "jsonl-same-id-twice-after-resumes.jsonl"
    store = Store(tmp_path / "store", real=False)
    result = store.import_("gemini", path)
    made, answered = (
        gemini._part_id("call", "write_file__c1"),
        gemini._part_id("result", "write_file__c1"),
    )
    assert [(e["id"], e["parentId"]) for e in store.entries(result["session"])] == [
        ("ctx1", None), ("u1", "ctx1"), ("model-g1", "u1"), ("g1", "model-g1"), (made, "g1"),
        (answered, made), ("r1", answered), ("g2", "r1"), ("u2", "g2"), ("g3", "u2"),
        ("u3", "g3"), ("g4", "u3"),
    ]  # fmt: skip
    assert result["leaf"] == "g4"
    (note,) = result["notes"]
    assert note["line"] == 13
    assert "message 5 of the list with the id of message 4 (g1_response)" in note["what"]
    said = [m["content"] for m in store.context(result["session"], "openai")["messages"]]
    assert said[-4:] == ["Read it back.", "It says a.", "Thanks.", "You are welcome."]
    store.fsck_clean(result["session"])
    assert store.import_("gemini", path)["new"] == 0


@pytest.mark.parametrize(
    ("name", "entries", "line", "what"),
    [
        ("duplicate-message-id.json", ["u1", "model-g1", "g1"], 29,
         "has message 3 of the document with the id of message 2 (g1): read in its place"),
        ("message-without-id.json", ["u1"], 13,
         "has message 2 of the document without an id: skipped, as Gemini CLI skips it"),
    ],
)  # fmt: skip
def test_a_message_gemini_skips_or_reads_in_anothers_place_is_named_and_kept(
    tmp_path: Path, name: str, entries: list[str], line: int, what: str
) -> None:
    """A chat document whose message has no id, or the id of one before it: read as Gemini
    CLI reads it back (skipped; in the earlier one's place), named in the notes, its text
    kept; the rest imports."""
    store = Store(tmp_path / "store", real=False)
    result = store.import_("gemini", FIXTURES / name)
    assert [e["id"] for e in store.entries(result["session"])] == entries
    (note,) = result["notes"]
    assert note["line"] == line and note["what"].startswith(what)
    document = json.loads((FIXTURES / name).read_text())
    kept = [json.loads(text) for text in _kept_texts(tmp_path / "store", result["session"])]
    assert all(message in kept for message in document["messages"])
