"""`append` validates everything it writes against the tree as it will be: compaction anchors,
branch-summary sources, reference-safe ids, message parts. Nothing is written when anything is
refused, and the session stays readable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from convgit import Session
from convgit.base.errors import InvalidEntryError
from tests.clirun import Shell
from tests.request_bodies import PNG


@pytest.fixture
def sh(tmp_path: Path) -> Shell:
    shell = Shell(tmp_path)
    shell.run("init")
    return shell


@pytest.fixture
def s(tmp_path: Path) -> Session:
    return Session.create(tmp_path, store_dir=tmp_path / "store", snapshots=False)


def message(role: str, content: Any, **more: Any) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": content, **more}


def refused(sh: Shell, *records: dict[str, Any]) -> str:
    """Append ``records`` with the CLI, expect a refusal that wrote nothing and left the session
    readable, and return its sentence."""
    before = sh.session_file().read_bytes()
    done = sh.append(*records, code=1)
    assert sh.session_file().read_bytes() == before
    sh.run("log")  # nothing half-written, nothing for repair
    assert sh.run("fsck").returncode == 0
    return done.stderr.decode()


def refused_by_library(s: Session, *records: dict[str, Any]) -> str:
    size = s.conversation.file.path.stat().st_size
    with pytest.raises(InvalidEntryError) as info:
        s.append.entries(records)
    assert s.conversation.file.path.stat().st_size == size
    assert not s.problems()
    return info.value.message


def test_compactions_keeping_from_nowhere_another_branch_or_themselves_are_refused(
    sh: Shell,
) -> None:
    root = sh.json("user", "one")["id"]
    other = sh.json("assistant", "plan A")["id"]
    sh.run("fork", root, "plan B")
    compaction = {"type": "compaction", "summary": "s"}
    stderr = refused(sh, {**compaction, "firstKeptId": "0badf00d"})
    assert "Entry 1 keeps from 0badf00d, which does not exist; nothing was appended." in stderr
    stderr = refused(sh, {**compaction, "firstKeptId": other})
    assert f"Entry 1 keeps from {other}, which is not before it on its path" in stderr
    stderr = refused(sh, {**compaction, "id": "c0mpact", "firstKeptId": "c0mpact"})
    assert "Entry 1 keeps from itself" in stderr


def test_a_compaction_may_keep_from_an_entry_of_its_own_batch(sh: Shell) -> None:
    sh.json("user", "one")
    made = orjson.loads(
        sh.append(
            message("user", "two", id="k2"),
            message("assistant", "three"),
            {"type": "compaction", "summary": "one happened", "firstKeptId": "k2"},
        ).stdout
    )
    assert len(made["ids"]) == 3
    contents = [m["content"] for m in sh.json("context")["messages"]]
    assert contents[1:] == ["two", "three"]


def test_a_branch_summary_from_nowhere_is_refused(s: Session) -> None:
    s.append.user("one")
    stderr = refused_by_library(s, {"type": "branch_summary", "fromId": "0badf00d", "summary": "s"})
    assert "summarises a branch from 0badf00d, which does not exist" in stderr


def test_an_id_references_could_misread_is_refused_by_the_cli(sh: Shell) -> None:
    first = sh.json("user", "one")["id"]
    stderr = refused(sh, message("user", "two", id="x~1"))
    assert "Entry 1 has the id 'x~1', which references could misread" in stderr
    assert sh.json("show", "@")["entry"]["id"] == first


@pytest.mark.parametrize(
    "ident", ["x~1", "root", "@", "has space", "Upper", "-opt", "a@b", "a/b", "safety", "replaced"]
)
def test_ids_references_could_misread_are_refused(s: Session, ident: str) -> None:
    s.append.user("one")
    stderr = refused_by_library(s, message("user", "two", id=ident))
    assert f"has the id {ident!r}, which references could misread" in stderr


def test_the_ref_folders_words_are_no_entry_ids_so_every_entry_can_have_a_snapshot(
    sh: Shell,
) -> None:
    """``refs/convgit/<sid>/safety`` cannot stand beside the saved states' ``…/safety/<time>``
    (nor ``replaced`` beside the replaced snapshots'): such an id is refused at the append, in
    one sentence naming the words, and nothing is written."""
    first = sh.json("user", "one")["id"]
    for word in ("safety", "replaced"):
        stderr = refused(sh, message("user", "two", id=word))
        assert f"has the id {word!r}, which references could misread" in stderr
        assert "'replaced', 'root' or 'safety'" in stderr
    assert sh.json("show", "@")["entry"]["id"] == first


@pytest.mark.parametrize(
    "ident", ["3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b", "a1b2c3d4", "msg_01", "0"], ids=str
)
def test_agents_own_ids_are_accepted_and_resolve_to_themselves(s: Session, ident: str) -> None:
    s.append.user("one")
    s.append.entry(message("user", "two", id=ident))
    assert s.conversation.entry(ident).id == ident


def test_tool_call_arguments_are_stored_as_input(sh: Shell) -> None:
    sh.json("user", "list files")
    content = [
        {"type": "tool_call", "id": "c1", "name": "ls", "arguments": '{"dir": "."}'},
        {"type": "tool_call", "id": "c2", "name": "cat", "arguments": {"path": "a.txt"}},
    ]
    ident = orjson.loads(sh.append(message("assistant", content)).stdout)["ids"][0]
    stored = sh.json("show", ident)["entry"]["content"]
    assert stored == [
        {"type": "tool_call", "id": "c1", "name": "ls", "input": {"dir": "."}},
        {"type": "tool_call", "id": "c2", "name": "cat", "input": {"path": "a.txt"}},
    ]
    openai = orjson.loads(sh.run("context", "--format", "openai").stdout)
    functions = [c["function"] for c in openai["messages"][1]["tool_calls"]]
    assert [orjson.loads(f["arguments"]) for f in functions] == [{"dir": "."}, {"path": "a.txt"}]
    anthropic = orjson.loads(sh.run("context", "--format", "anthropic").stdout)
    uses = [b["input"] for b in anthropic["messages"][1]["content"] if b["type"] == "tool_use"]
    assert uses == [{"dir": "."}, {"path": "a.txt"}]


@pytest.mark.parametrize(
    ("part", "words"),
    [
        ({"input": "ls -l"}, "whose 'input' is not a JSON object"),
        ({"input": [1, 2]}, "whose 'input' is not a JSON object"),
        ({"arguments": "not json"}, "whose 'arguments' is not a JSON object"),
        ({"arguments": "[1]"}, "whose 'arguments' is not a JSON object"),
        ({"input": {}, "arguments": "{}"}, "gives both 'input' and 'arguments'"),
        ({}, "without an 'input' object"),
    ],
    ids=["string", "array", "not-json", "json-array", "both", "neither"],
)
def test_a_tool_call_whose_arguments_are_no_object_is_refused(
    s: Session, part: dict[str, Any], words: str
) -> None:
    s.append.user("go")
    tool_call = {"type": "tool_call", "id": "c1", "name": "ls", **part}
    assert words in refused_by_library(s, message("assistant", [tool_call]))


@pytest.mark.parametrize(
    ("role", "part", "words"),
    [
        ("user", {}, "needs either a 'url' or base64 'data'"),
        ("user", {"data": PNG, "mediaType": "image/bmp"}, "'mediaType' is not one of"),
        ("user", {"data": "not base64!", "mediaType": "image/png"}, "'data' is not base64"),
        ("user", {"url": "file:///etc/passwd"}, "not an http(s) or data: URL"),
        ("user", {"url": "data:text/plain;base64,aGk="}, "data: URL is not base64 image"),
        ("assistant", {"url": "https://example.com/a.png"}, "in an assistant message"),
    ],
    ids=["nothing", "bmp", "bad-base64", "file-url", "data-url-text", "assistant"],
)
def test_malformed_images_are_refused(
    s: Session, role: str, part: dict[str, Any], words: str
) -> None:
    s.append.user("look")
    assert words in refused_by_library(s, message(role, [{"type": "image", **part}]))


def test_thinking_and_tool_calls_belong_to_assistants(s: Session) -> None:
    s.append.user("go")
    thinking = [{"type": "thinking", "thinking": "hm"}]
    assert "thinking part 1 in a user message" in refused_by_library(s, message("user", thinking))
    calls = [{"type": "tool_call", "id": "c1", "name": "ls", "input": {}}]
    assert "tool_call part 1 in a tool message" in refused_by_library(
        s, message("tool", calls, toolCallId="c1")
    )
    unsigned = [{"type": "thinking", "thinking": "hm", "signature": 7}]
    assert "'signature' is not a string" in refused_by_library(s, message("assistant", unsigned))


def test_one_refused_record_in_a_batch_writes_none_of_it(sh: Shell) -> None:
    sh.json("user", "one")
    stderr = refused(
        sh,
        message("assistant", "two"),
        message("user", "three"),
        {"type": "compaction", "summary": "s", "firstKeptId": "0badf00d"},
    )
    assert "Entry 3 keeps from 0badf00d" in stderr


def test_text_that_is_not_utf8_is_refused_by_the_library(tmp_path: Path) -> None:
    s = Session.create(tmp_path, store_dir=tmp_path / "store", snapshots=False)
    s.append.user("fine")
    size = s.conversation.file.path.stat().st_size
    with pytest.raises(InvalidEntryError, match="Entry 1 cannot be written as JSON"):
        s.append.user("bad \udcff byte")
    assert s.conversation.file.path.stat().st_size == size
    assert [m["content"] for m in s.conversation.context().messages] == ["fine"]
