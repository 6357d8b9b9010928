"""Retries are idempotent, sessions are found by name, and long texts come from stdin, through
the real CLI (a process of its own) on a conversation-only store."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests import clirun
from tests.workspace.cli import convgit, one_sentence


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    place = tmp_path / "plain"
    place.mkdir()
    convgit(place, "init", "--name", "fix add")
    return place


def entries(folder: Path) -> list[dict[str, object]]:
    return convgit(folder, "tree", "--json").json()["entries"]


@pytest.mark.parametrize("command", ["user", "assistant", "tool"])
def test_sending_an_entry_again_with_its_id_is_a_no_op(folder: Path, command: str) -> None:
    args = ["call-1", "output"] if command == "tool" else ["the text"]
    if command == "tool":  # a result answers a call on the active path
        call = {"type": "tool_call", "id": "call-1", "name": "pytest", "input": {}}
        reply = {"type": "message", "role": "assistant", "content": [call], "id": "asks"}
        convgit(folder, "append", input=orjson.dumps(reply) + b"\n")
    before = [e["id"] for e in entries(folder)]
    first = convgit(folder, command, "--id", f"{command}-1", *args, "--json").json()
    again = convgit(folder, command, "--id", f"{command}-1", *args, "--json").json()
    assert first["id"] == again["id"] == f"{command}-1" and first["ts"] == again["ts"]
    assert [e["id"] for e in entries(folder)] == [*before, f"{command}-1"]


def test_the_same_id_with_other_content_is_refused(folder: Path) -> None:
    convgit(folder, "user", "--id", "turn-1", "hello")
    error = convgit(folder, "user", "--id", "turn-1", "hello again", code=1).stderr
    assert "repeats the id turn-1 with other content; nothing was appended" in one_sentence(error)
    assert len(entries(folder)) == 1
    error = convgit(folder, "user", "--id", "no spaces please", "x", code=2).stderr
    assert "cannot be an entry id" in one_sentence(error)


def test_append_with_an_id_is_recorded_once(folder: Path) -> None:
    line = orjson.dumps({"type": "message", "role": "assistant", "content": "a reply"}) + b"\n"
    first = convgit(folder, "append", "--id", "reply-7", "--json", input=line).json()
    again = convgit(folder, "append", "--id", "reply-7", "--json", input=line).json()
    assert first["ids"] == again["ids"] == ["reply-7"]
    assert [e["id"] for e in entries(folder)] == ["reply-7"]
    error = convgit(folder, "append", "--id", "two", input=line + line, code=2).stderr
    assert "--id names one entry" in one_sentence(error)


def test_a_batch_sent_again_appends_nothing_twice(folder: Path) -> None:
    lines = b"".join(
        orjson.dumps({"type": "message", "role": role, "content": f"{role} text", "id": ident})
        + b"\n"
        for role, ident in (("user", "u1"), ("assistant", "a1"))
    )
    first = convgit(folder, "append", "--json", input=lines).json()
    again = convgit(folder, "append", "--json", input=lines).json()
    assert first["ids"] == again["ids"] == ["u1", "a1"]
    more = lines + orjson.dumps({"type": "message", "role": "user", "content": "next"}) + b"\n"
    grown = convgit(folder, "append", "--json", input=more).json()
    assert grown["ids"][:2] == ["u1", "a1"]
    tree = entries(folder)
    assert [e["id"] for e in tree] == grown["ids"] and tree[2]["parentId"] == "a1"


def test_dash_reads_a_text_longer_than_a_command_line_allows_from_stdin(folder: Path) -> None:
    text = "é" * 200_000  # 400 KB: more than one argument may hold (128 KiB on Linux)
    with pytest.raises(OSError):
        clirun.run("user", text, cwd=folder, code=None)
    for command in ("user", "assistant"):
        made = convgit(folder, command, "-", "--json", input=text).json()
        assert made["content"] == text
    call = {"type": "tool_call", "id": "call-9", "name": "pytest", "input": {}}
    reply = {"type": "message", "role": "assistant", "content": [call]}
    convgit(folder, "append", input=orjson.dumps(reply) + b"\n")  # the call the result answers
    result = convgit(folder, "tool", "call-9", "-", "--json", input="tool output\n").json()
    assert result["content"] == "tool output\n" and result["toolCallId"] == "call-9"


def test_use_makes_a_session_current_by_id_prefix_or_name(folder: Path) -> None:
    first = convgit(folder, "sessions", "--json").json()["sessions"][0]["id"]
    second = convgit(folder, "init", "--name", "plan B", "--json").json()["id"]
    assert convgit(folder, "status", "--json").json()["session"] == second
    assert convgit(folder, "use", "fix add").stdout == f"session {first} is current\n"
    assert convgit(folder, "status", "--json").json()["session"] == first
    convgit(folder, "use", second[:6])
    assert convgit(folder, "status", "--json").json()["session"] == second
    assert convgit(folder, "--session", "fix add", "status", "--json").json()["session"] == first
    convgit(folder, "init", "--name", "plan B")
    error = convgit(folder, "--session", "plan B", "log", code=1).stderr
    assert "2 sessions are named 'plan B'" in one_sentence(error)
    error = convgit(folder, "use", "nobody", code=1).stderr
    assert one_sentence(error) == "convgit: There is no session 'nobody' here."
