"""Each agent's reader (``IMPORTER.parse`` of convgit/agents/<agent>/reading.py) on a few
lines of that agent's format written here as bytes: one quirk per test, no file, no store, no
process. tests/agents/reading/ imports the fixtures end to end through the CLI; this is the
layer below."""

from __future__ import annotations

import json
from typing import Any

import pytest

from convgit.agents.reading import Batch, Cursor, Known
from convgit.agents.registry import importer
from convgit.base.errors import NotAPiSessionError, NotARolloutError


def parse(agent: str, data: bytes) -> Batch:
    return importer(agent).parse(data, Cursor(), Known())


def shape(batch: Batch) -> list[tuple[Any, ...]]:
    """Each record as (type, id or key, parent or the entry it stands at, role)."""
    return [
        (r["type"], r.get("id", r.get("key")), r.get("parentId", r.get("at")), r.get("role"))
        for r in batch.records
    ]


def line(value: dict[str, Any]) -> bytes:
    return json.dumps(value).encode() + b"\n"


# -- Claude Code -----------------------------------------------------------------------------------

_CLAUDE = {"isSidechain": False, "sessionId": "s1", "cwd": "/p", "version": "2.1.79"}


def claude_user(uuid: str, parent: str | None, content: Any, **more: Any) -> bytes:
    return line(
        {
            "parentUuid": parent,
            "type": "user",
            "uuid": uuid,
            "timestamp": "2026-03-01T10:00:01.000Z",
            "message": {"role": "user", "content": content},
            **_CLAUDE,
            **more,
        }
    )


def claude_reply(uuid: str, parent: str, content: Any, model: str = "claude-opus-4-5") -> bytes:
    message = {"model": model, "id": f"msg_{uuid}", "type": "message", "role": "assistant"}
    return line(
        {
            "parentUuid": parent,
            "type": "assistant",
            "uuid": uuid,
            "timestamp": "2026-03-01T10:00:02.000Z",
            "message": {**message, "content": content},
            **_CLAUDE,
        }
    )


def claude_other(uuid: str, parent: str, kind: str) -> bytes:
    return line(
        {
            "parentUuid": parent,
            "type": kind,
            "uuid": uuid,
            "timestamp": "2026-03-01T10:00:03.000Z",
            "data": {},
            **_CLAUDE,
        }
    )


CALL = [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cat nope"}}]


def test_claude_a_failed_tool_result_is_a_tool_message_with_is_error() -> None:
    failed = [
        {"type": "tool_result", "tool_use_id": "t1", "content": "no such file", "is_error": True}
    ]
    batch = parse(
        "claude-code",
        claude_user("p1", None, "Cat it.")
        + claude_reply("a1", "p1", CALL)
        + claude_user("r1", "a1", failed),
    )
    _, reply, result = batch.records
    assert reply["content"] == [
        {"type": "tool_call", "id": "t1", "name": "Bash", "input": {"command": "cat nope"}}
    ]
    assert (result["role"], result["toolCallId"], result["isError"]) == ("tool", "t1", True)
    assert result["content"] == "no such file" and result["parentId"] == "a1"


def test_claude_a_prompt_submitted_again_below_an_earlier_reply_is_a_branch() -> None:
    """/rewind: Claude writes the new prompt below the reply it went back to."""
    batch = parse(
        "claude-code",
        claude_user("p1", None, "Name it.")
        + claude_reply("a1", "p1", "Atlas.")
        + claude_user("p2", "a1", "Shorter.")
        + claude_reply("a2", "p2", "Ox.")
        + claude_user("p3", "a1", "Longer, then."),
    )
    assert [(r["id"], r["parentId"]) for r in batch.records][2:] == [
        ("p2", "a1"),
        ("a2", "p2"),
        ("p3", "a1"),
    ]
    assert batch.leaf == "p3"


def test_claude_a_synthetic_reply_is_kept_and_is_no_entry() -> None:
    """The "No response requested." Claude writes on resume is no reply of the model's."""
    batch = parse(
        "claude-code",
        claude_user("p1", None, "Hi.")
        + claude_reply("a1", "p1", "Hello.")
        + claude_reply("s1", "a1", "No response requested.", model="<synthetic>")
        + claude_user("p2", "s1", "Go on."),
    )
    assert shape(batch) == [
        ("message", "p1", None, "user"),
        ("message", "a1", "p1", "assistant"),
        ("native", "s1", "a1", None),
        ("message", "p2", "a1", "user"),  # below the entry the stub stands at
    ]
    assert batch.report.kept == {"assistant/synthetic": [3]}


def test_claude_a_record_outside_the_conversation_is_kept_where_it_stands() -> None:
    batch = parse(
        "claude-code",
        claude_user("p1", None, "Hi.")
        + claude_reply("a1", "p1", "Hello.")
        + claude_other("g1", "a1", "progress")
        + claude_user("p2", "g1", "Go on."),
    )
    assert shape(batch)[2:] == [("native", "g1", "a1", None), ("message", "p2", "a1", "user")]
    native = batch.records[2]
    assert json.loads(native["text"])["type"] == "progress"  # its exact text


def test_claude_a_line_still_being_written_is_left_for_the_next_import() -> None:
    whole = claude_user("p1", None, "Hi.") + claude_reply("a1", "p1", "Hello.")
    batch = parse("claude-code", whole + b'{"parentUuid": "a1", "type": "us')
    assert [r["id"] for r in batch.records] == ["p1", "a1"]
    assert batch.cursor.offset == len(whole)
    why = "is incomplete (still being written?): left for the next import"
    assert batch.report.notes == [(3, why)]


# -- Codex ---------------------------------------------------------------------------------------


def codex(kind: str, payload: dict[str, Any]) -> bytes:
    return line({"timestamp": "2026-04-20T07:00:01.000Z", "type": kind, "payload": payload})


CODEX_META = codex(
    "session_meta",
    {
        "id": "019da9c0-0000-7000-8000-0000000000a2",
        "timestamp": "2026-04-20T07:00:00.000Z",
        "cwd": "/p",
        "originator": "codex-tui",
        "cli_version": "0.121.0",
    },
)


def codex_user(text: str) -> bytes:
    content = [{"type": "input_text", "text": text}]
    return codex("response_item", {"type": "message", "role": "user", "content": content})


def codex_call(call: str, cmd: str) -> bytes:
    arguments = json.dumps({"cmd": cmd})
    payload = {"type": "function_call", "name": "exec_command", "arguments": arguments}
    return codex("response_item", {**payload, "call_id": call})


def codex_output(call: str, output: str) -> bytes:
    payload = {"type": "function_call_output", "call_id": call, "output": output}
    return codex("response_item", payload)


def test_codex_context_it_marks_as_such_is_no_user_prompt() -> None:
    """An older rollout (no user_message events): every user message is a prompt, but for
    those Codex marks as context."""
    batch = parse(
        "codex",
        CODEX_META
        + codex_user("<environment_context>cwd /p</environment_context>")
        + codex_user("Go."),
    )
    kinds = [(r["type"], r.get("kind"), r.get("role")) for r in batch.records if "id" in r]
    assert kinds == [("custom", "codex.instructions", None), ("message", None, "user")]


def test_codex_a_user_message_no_event_mirrors_is_no_user_prompt() -> None:
    batch = parse(
        "codex",
        CODEX_META
        + codex_user("Injected by a tool, never typed.")
        + codex_user("Go.")
        + codex("event_msg", {"type": "user_message", "message": "Go."}),
    )
    kinds = [(r["type"], r.get("role")) for r in batch.records if "id" in r]
    assert kinds == [("custom", None), ("message", "user")]


def test_codex_outputs_pair_with_their_calls_by_call_id_in_any_order() -> None:
    batch = parse(
        "codex",
        CODEX_META
        + codex_user("Branch and status.")
        + codex_call("call_A", "git branch")
        + codex_call("call_B", "git status")
        + codex_output("call_B", "M a.py")
        + codex_output("call_A", "main"),
    )
    results = [(r["toolCallId"], r["content"]) for r in batch.records if r.get("role") == "tool"]
    assert results == [("call_B", "M a.py"), ("call_A", "main")]
    calls = [p["id"] for r in batch.records if r.get("role") == "assistant" for p in r["content"]]
    assert calls == ["call_A", "call_B"]


def test_codex_a_line_written_twice_in_a_row_is_imported_once() -> None:
    batch = parse(
        "codex",
        CODEX_META
        + codex_user("List.")
        + codex_call("call_A", "ls")
        + codex_output("call_A", "a.txt")
        + codex_output("call_A", "a.txt"),
    )
    assert [r["role"] for r in batch.records if r["type"] == "message"] == [
        "user",
        "assistant",
        "tool",
    ]
    assert batch.report.notes == [(5, "repeats line 4 exactly: imported once")]


def test_codex_a_file_without_session_meta_is_refused() -> None:
    with pytest.raises(NotARolloutError, match="not a Codex rollout"):
        parse("codex", codex_user("Go."))


# -- pi ------------------------------------------------------------------------------------------

PI_HEADER = line(
    {
        "type": "session",
        "version": 3,
        "id": "019c1a00-0000-7000-8000-000000000007",
        "timestamp": "2026-03-01T10:00:00.000Z",
        "cwd": "/p",
    }
)


def pi(ident: str, parent: str | None, role: str, text: str) -> bytes:
    return line(
        {
            "type": "message",
            "id": ident,
            "parentId": parent,
            "timestamp": "2026-03-01T10:00:01.000Z",
            "message": {"role": role, "content": [{"type": "text", "text": text}]},
        }
    )


def test_pi_the_active_leaf_is_the_last_entry_even_on_an_earlier_branch() -> None:
    batch = parse(
        "pi",
        PI_HEADER
        + pi("e1", None, "user", "Pick a name.")
        + pi("e2", "e1", "assistant", "Atlas?")
        + pi("e3", "e1", "assistant", "Ox?")  # a retry: the newer branch
        + pi("e4", "e2", "user", "Back to Atlas."),  # then back on the first one
    )
    assert batch.leaf == "e4"


def test_pi_two_objects_on_one_line_are_two_entries() -> None:
    data = PI_HEADER + pi("e1", None, "user", "q").rstrip(b"\n") + pi("e2", "e1", "assistant", "a")
    assert [(r["id"], r["parentId"]) for r in parse("pi", data).records[1:]] == [
        ("e1", None),
        ("e2", "e1"),
    ]


def test_pi_an_entry_whose_parent_is_nowhere_is_a_root_as_pi_reads_it() -> None:
    batch = parse("pi", PI_HEADER + pi("e1", None, "user", "q") + pi("e5", "gone", "user", "r"))
    assert batch.records[-1]["parentId"] is None
    why = "(entry e5) has a parent gone that is not in the file: a root, as pi reads it"
    assert batch.report.notes == [(3, why)]


def test_pi_one_id_for_two_different_records_is_refused_naming_both_lines() -> None:
    words = "Line 3 of this pi session uses the id e1 of line 2"
    with pytest.raises(NotAPiSessionError, match=words):
        parse("pi", PI_HEADER + pi("e1", None, "user", "q") + pi("e1", None, "user", "other"))


# -- Gemini CLI ----------------------------------------------------------------------------------

GEMINI_META = {
    "sessionId": "0b1e2d3c-0000-4000-8000-00000000000c",
    "projectHash": "7e",
    "startTime": "2026-02-01T10:00:00.000Z",
    "lastUpdated": "2026-02-01T10:00:00.000Z",
}


def gemini(ident: str, kind: str, content: Any, **more: Any) -> dict[str, Any]:
    return {
        "id": ident,
        "timestamp": "2026-02-01T10:00:01.000Z",
        "type": kind,
        "content": content,
        **more,
    }


def test_gemini_messages_after_a_rewind_branch_from_the_last_one_kept() -> None:
    lines = [
        GEMINI_META,
        gemini("u1", "user", "one"),
        gemini("g1", "gemini", "A"),
        gemini("u2", "user", "two"),
        gemini("g2", "gemini", "B"),
        {"$rewindTo": "u2"},  # u2 and what followed are undone
        gemini("u3", "user", "three"),
    ]
    batch = parse("gemini", b"".join(line(v) for v in lines))
    parents = {r["id"]: r["parentId"] for r in batch.records if "id" in r}
    assert parents["u2"] == "g1" and parents["g2"] == "u2"  # the branch left behind
    assert parents["u3"] == "g1" and batch.leaf == "u3"


def test_gemini_what_the_cli_showed_the_user_is_kept_and_is_no_message() -> None:
    lines = [GEMINI_META, gemini("u1", "user", "one"), gemini("w1", "warning", "Careful.")]
    batch = parse("gemini", b"".join(line(v) for v in lines))
    (warning,) = [r for r in batch.records if r.get("id") == "w1"]
    assert batch.report.kept == {} and batch.report.notes == []  # a type it knows
    assert (warning["type"], warning["kind"], warning["parentId"]) == (
        "custom",
        "gemini.warning",
        "u1",
    )


def test_gemini_a_call_and_its_result_inside_one_message_become_entries_in_a_line() -> None:
    """In the whole-document form, a call records its result inside the message; a call
    cancelled before it ran has none, and stays unanswered."""
    read = {
        "id": "read-1",
        "name": "read_file",
        "args": {"file_path": "n.txt"},
        "status": "success",
        "timestamp": "2026-02-01T10:00:02.000Z",
        "result": [{"functionResponse": {"id": "read-1", "response": {"output": "hello"}}}],
    }
    cancelled = {
        "id": "sh-2",
        "name": "shell",
        "args": {},
        "status": "cancelled",
        "timestamp": "2026-02-01T10:00:02.000Z",
    }
    document = {
        **GEMINI_META,
        "messages": [
            gemini("u1", "user", "Read it."),
            gemini("g1", "gemini", "", toolCalls=[read, cancelled]),
        ],
    }
    batch = parse("gemini", json.dumps(document, indent=2).encode())
    entries = [r for r in batch.records if r["type"] == "message"]
    assert [(r["role"], r.get("toolCallId")) for r in entries] == [
        ("user", None),
        ("assistant", None),
        ("assistant", None),
        ("assistant", None),
        ("tool", "read-1"),
    ]
    assert [p["id"] for r in entries[2:4] for p in r["content"]] == ["read-1", "sh-2"]
    assert entries[-1]["content"] == "hello"


# -- Qwen Code -------------------------------------------------------------------------------------


def qwen(uuid: str, parent: str | None, kind: str, parts: Any = None, **more: Any) -> bytes:
    """A line of Qwen Code's chat file: Gemini's parts in a tree of uuids, as Claude Code's."""
    record = {"uuid": uuid, "parentUuid": parent, "sessionId": "q1", "type": kind, **more}
    record |= {"timestamp": "2026-12-07T06:08:11.071Z", "cwd": "/p", "version": "0.24.4"}
    if parts is not None:
        record["message"] = {"role": "model" if kind == "assistant" else "user", "parts": parts}
    return line(record)


QWEN_CALL = {"id": "c1", "name": "read_file", "args": {"file_path": "/p/a.txt"}}
QWEN_TURN = (
    qwen("u1", None, "user", [{"text": "Read a.txt"}])
    + qwen("a1", "u1", "assistant", [{"functionCall": QWEN_CALL}], model="scripted")
    + qwen(
        "r1",
        "a1",
        "tool_result",
        [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "one\n"}}}],
        toolCallResult={"callId": "c1", "status": "success"},
    )
    + qwen("a2", "r1", "assistant", [{"text": "It says one."}], model="scripted")
)


def test_qwen_a_call_and_its_result_are_a_line_of_entries_the_result_answering_the_call() -> None:
    batch = parse("qwen", QWEN_TURN)
    assert shape(batch) == [
        ("message", "u1", None, "user"),
        ("model", "model-a1", "u1", None),
        ("message", "a1", "model-a1", "assistant"),
        ("message", "r1", "a1", "tool"),
        ("message", "a2", "r1", "assistant"),
    ]
    call, result = batch.records[2], batch.records[3]
    assert call["content"][0]["id"] == "c1" and call["content"][0]["name"] == "read_file"
    assert result["toolCallId"] == "c1" and result["content"] == "one\n"
    assert batch.leaf == "a2"


def test_qwen_its_own_records_stay_in_the_tree_where_it_wrote_them() -> None:
    data = (
        qwen("u1", None, "user", [{"text": "Hi"}])
        + qwen("s1", "u1", "system", subtype="attribution_snapshot", systemPayload={})
        + qwen("a1", "s1", "assistant", [{"text": "Hello."}], model="scripted")
    )
    assert shape(parse("qwen", data)) == [
        ("message", "u1", None, "user"),
        ("custom", "s1", "u1", None),
        ("model", "model-a1", "s1", None),
        ("message", "a1", "model-a1", "assistant"),
    ]


# -- every reader that only appends: an import in two goes where one import goes ----------------

APPENDED = {
    "claude-code": claude_user("p1", None, "Hi.")
    + claude_reply("a1", "p1", CALL)
    + claude_other("g1", "a1", "progress")
    + claude_user("r1", "g1", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]),
    "codex": CODEX_META
    + codex_user("List.")
    + codex_call("call_A", "ls")
    + codex_output("call_A", "a.txt"),
    "pi": PI_HEADER
    + pi("e1", None, "user", "q")
    + pi("e2", "e1", "assistant", "x")
    + pi("e3", "e1", "assistant", "y")
    + pi("e4", "e2", "user", "back"),
    "qwen": QWEN_TURN,
}


def _known(records: list[dict[str, Any]]) -> Known:
    """What a session holds after appending ``records``."""
    return Known(
        entries={r["id"]: r for r in records if "id" in r and "parentId" in r},
        kept={r["key"]: r for r in records if r["type"] == "native"},
    )


@pytest.mark.parametrize("agent", sorted(APPENDED))
def test_an_import_cut_anywhere_then_continued_gives_what_one_import_gives(agent: str) -> None:
    data = APPENDED[agent]
    reader = importer(agent)
    assert reader.appends
    whole = reader.parse(data, Cursor(), Known())
    for cut in range(data.index(b"\n") + 1, len(data), 3):  # any cut after the first line
        first = reader.parse(data[:cut], Cursor(), Known())
        rest = reader.parse(data[first.cursor.offset :], first.cursor, _known(first.records))
        assert first.records + rest.records == whole.records, cut
        assert (rest.leaf or first.leaf) == whole.leaf, cut


# -- OpenCode --------------------------------------------------------------------------------------

_OC_SESSION = {
    "id": "ses_1",
    "slug": "s",
    "version": "1.18.33",
    "title": "t",
    "directory": "/p",
    "time": {"created": 1796210100000, "updated": 1796210100900},
    "tokens": {"input": 9},
}


def opencode(ident: str, role: str, parts: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    info = {"id": ident, "sessionID": "ses_1", "role": role, "time": {"created": 1796210100000}}
    if role == "assistant":
        info["time"]["completed"] = 1796210100001
    info.update(more)
    made = [{**p, "id": f"prt_{ident[4:]}{n}", "messageID": ident} for n, p in enumerate(parts)]
    return {"info": info, "parts": made}


def opencode_export(*messages: dict[str, Any], session: str = "ses_1") -> bytes:
    document = {"info": {**_OC_SESSION, "id": session}, "messages": list(messages)}
    return json.dumps(document, indent=2).encode()


def opencode_tool(call: str, status: str, **state: Any) -> dict[str, Any]:
    return {
        "type": "tool",
        "tool": "bash",
        "callID": call,
        "state": {"status": status, "input": {"command": "ls"}, **state},
    }


def test_opencode_a_turn_is_a_line_each_call_followed_by_its_result() -> None:
    data = opencode_export(
        opencode("msg_u1", "user", [{"type": "text", "text": "List."}]),
        opencode(
            "msg_a1",
            "assistant",
            [
                {"type": "step-start", "snapshot": "x"},
                {"type": "reasoning", "text": "ls it"},
                opencode_tool("c1", "completed", output="a b"),
                opencode_tool("c2", "error", error="denied"),
                {"type": "step-finish", "reason": "tool-calls"},
            ],
        ),
        opencode("msg_a2", "assistant", [{"type": "text", "text": "Two files."}]),
    )
    batch = parse("opencode", data)
    assert shape(batch) == [
        ("native", "ses_1", None, None),
        ("message", "msg_u1", None, "user"),
        ("message", "msg_a1", "msg_u1", "assistant"),
        ("message", "prt_a12", "msg_a1", "tool"),
        ("message", "prt_a13", "prt_a12", "tool"),
        ("message", "msg_a2", "prt_a13", "assistant"),
    ]
    reply = batch.records[2]
    assert [p["type"] for p in reply["content"]] == ["thinking", "tool_call", "tool_call"]
    assert [(r["toolCallId"], r["isError"]) for r in batch.records[3:5]] == [
        ("c1", False),
        ("c2", True),
    ]
    assert batch.records[4]["content"] == [{"type": "text", "text": "denied"}]
    assert batch.records[3]["native"] == {"key": "prt_a12", "in": "msg_a1"}
    assert batch.leaf == "msg_a2"
    kept = json.loads(batch.records[0]["text"])["info"]
    assert "tokens" not in kept and kept["time"] == {"created": 1796210100000}  # kept once


def test_opencode_a_reply_still_being_written_waits_for_the_next_import() -> None:
    unfinished = opencode("msg_a1", "assistant", [{"type": "text", "text": "Wo"}])
    del unfinished["info"]["time"]["completed"]
    data = opencode_export(
        opencode("msg_u1", "user", [{"type": "text", "text": "Hi."}]), unfinished
    )
    batch = parse("opencode", data)
    assert [r.get("id") for r in batch.records] == [None, "msg_u1"]
    assert "left for the next import" in batch.report.notes[0][1]


def test_opencode_a_running_tool_has_no_result_yet_and_an_error_reply_is_kept() -> None:
    failed = opencode("msg_a1", "assistant", [opencode_tool("c1", "running")])
    failed["info"]["error"] = {"name": "APIError", "data": {"message": "boom"}}
    batch = parse("opencode", opencode_export(failed))
    (reply,) = [r for r in batch.records if r["type"] == "message"]
    assert [p["type"] for p in reply["content"]] == ["tool_call", "opencode.error"]


def test_opencode_messages_resume_copied_are_their_originals_and_new_ones_hang_below() -> None:
    from convgit.agents.opencode.reading import copy_id

    first = parse(
        "opencode",
        opencode_export(
            opencode("msg_u1", "user", [{"type": "text", "text": "One."}]),
            opencode("msg_a1", "assistant", [opencode_tool("c1", "completed", output="x")]),
            opencode("msg_a2", "assistant", [{"type": "text", "text": "Done."}]),
            opencode("msg_u2", "user", [{"type": "text", "text": "Two."}]),
        ),
    )
    entries = {r["id"]: r for r in first.records if "parentId" in r}
    copied = []
    for message in ("msg_u1", "msg_a1", "msg_a2"):  # resumed at the reply Done.
        parts = [{**p, "id": copy_id(p["id"], "ses_2")} for p in first_parts(message)]
        value = opencode(message, "user" if message[4] == "u" else "assistant", [])
        value["info"]["id"] = copy_id(message, "ses_2")
        value["parts"] = parts
        copied.append(value)
    new = opencode("msg_u9", "user", [{"type": "text", "text": "Again."}])
    batch = importer("opencode").parse(
        opencode_export(*copied, new, session="ses_2"), Cursor(), Known(entries, {})
    )
    ids = [r["id"] for r in batch.records if "parentId" in r]
    assert ids == ["msg_u1", "msg_a1", "prt_a10", "msg_a2", "msg_u9"]
    assert batch.records[-1]["parentId"] == "msg_a2"
    assert batch.leaf == "msg_u9"


def first_parts(message: str) -> list[dict[str, Any]]:
    if message == "msg_a1":
        return [{**opencode_tool("c1", "completed", output="x"), "id": "prt_a10"}]
    text = "One." if message == "msg_u1" else "Done."
    return [{"type": "text", "text": text, "id": f"prt_{message[4:]}0"}]


def test_opencode_what_is_not_an_export_is_refused_in_one_sentence() -> None:
    from convgit.agents.opencode.reading import NotAnOpenCodeSessionError

    for data in (b'{"info": {"id": "ses_1"}}', b'{"info": {"id": "ses_1"}, "messages": ['):
        with pytest.raises(NotAnOpenCodeSessionError):
            parse("opencode", data)
