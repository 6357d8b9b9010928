"""Qwen Code chat files (fixtures/qwen/, written by the real CLI) import through the CLI as Qwen's
own uuid tree: each record an entry below its parent, prompts, replies, calls and results, the
system records kept as custom entries; an import continues where the last one stopped, a record
re-rooted by a rewind is a branch, a message in fragments is read as Qwen reads it, and a path
`convgit resume` hands back is read again as the entries it came from."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from convgit import NotAQwenSessionError
from convgit.agents.qwen import reading as qwen
from convgit.agents.reading import Cursor, Known
from tests.agents.reading.agentfiles import (
    Store,
    anthropic_sound,
    counts,
    forks,
    native,
    openai_sound,
    placeholders,
    sound_tree,
    texts,
)

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "qwen"
ATTRIBUTION, TELEMETRY = (
    "custom qwen.system/attribution_snapshot",
    "custom qwen.system/ui_telemetry",
)

# what each fixture makes, read from the file by hand
SHAPES = {
    "two-turns-write-read-edit-shell.jsonl": {
        "user": 2, "assistant": 6, "tool": 4, "model": 1, ATTRIBUTION: 4, TELEMETRY: 10,
    },
    "parallel-tool-calls.jsonl": {
        "user": 1, "assistant": 2, "tool": 2, "model": 1, ATTRIBUTION: 2, TELEMETRY: 4,
    },
    "failed-tool.jsonl": {
        "user": 1, "assistant": 2, "tool": 1, "model": 1, ATTRIBUTION: 1, TELEMETRY: 3,
    },
    "killed-then-resumed.jsonl": {
        "user": 2, "assistant": 2, "model": 1, ATTRIBUTION: 2, TELEMETRY: 2,
    },
}  # fmt: skip


def chat(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / name).read_text().splitlines()]


def said(entries: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Each message as (role, its text | call name | answered call id)."""
    found = []
    for entry in entries:
        if entry["type"] != "message":
            continue
        if entry["role"] == "tool":
            found.append(("tool", entry["toolCallId"]))
            continue
        found += [(entry["role"], text) for text in texts(entry) if text]
        content = entry["content"] if isinstance(entry["content"], list) else []
        found += [("call", p["name"]) for p in content if p.get("type") == "tool_call"]
    return found


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_fixture_imports_as_qwens_own_tree(tmp_path: Path, name: str) -> None:
    store = Store(tmp_path / "work")
    found = store.import_("qwen", FIXTURES / name)
    assert found["notes"] == [] and found["kept"] == {}
    assert found["new"] == found["entries"] == sum(SHAPES[name].values())
    entries = store.entries(found["session"])
    sound_tree(entries)
    store.fsck_clean(found["session"])
    assert counts(entries) == SHAPES[name] and forks(entries) == {}
    # every entry is the record of its uuid, below its parentUuid's (a reply's model entry
    # first, in the reply's record)
    records = {r["uuid"]: r for r in chat(name)}
    ids = {e["id"] for e in entries}
    for entry in entries:
        if entry["native"].get("in") is not None:
            assert entry["id"] == f"model-{entry['native']['in']}"
            assert entry["parentId"] == records[entry["native"]["in"]]["parentUuid"]
            continue
        record = records[entry["id"]]
        assert json.loads(native(entry) or b"{}") == record
        model = f"model-{entry['id']}"
        assert entry["parentId"] == (model if model in ids else record["parentUuid"])
    assert found["agent_session_id"] == chat(name)[0]["sessionId"]
    assert found["leaf"] == chat(name)[-1]["uuid"]
    assert store.import_("qwen", FIXTURES / name)["new"] == 0
    openai_sound(store.context(found["session"], "openai"))
    anthropic_sound(store.context(found["session"], "anthropic"))


def test_the_conversation_is_qwens_prompts_replies_calls_and_results(tmp_path: Path) -> None:
    store = Store(tmp_path / "work")
    two = store.import_("qwen", FIXTURES / "two-turns-write-read-edit-shell.jsonl")
    assert said(store.log(two["session"])) == [
        ("user", "Write notes.txt"), ("call", "write_file"), ("tool", "call_0_0"),
        ("assistant", "I wrote notes.txt."),
        ("user", "Edit it, then run the command"),
        ("call", "read_file"), ("tool", "call_2_0"), ("call", "edit"), ("tool", "call_3_0"),
        ("assistant", "Now the shell."), ("call", "run_shell_command"), ("tool", "call_4_0"),
        ("assistant", "I edited it and ran the command."),
    ]  # fmt: skip

    parallel = store.import_("qwen", FIXTURES / "parallel-tool-calls.jsonl")
    assert said(store.log(parallel["session"]))[1:6] == [
        ("assistant", "Two at once."), ("call", "write_file"), ("call", "run_shell_command"),
        ("tool", "call_0_0"), ("tool", "call_0_1"),
    ]  # fmt: skip

    failed = store.import_("qwen", FIXTURES / "failed-tool.jsonl")
    (result,) = [e for e in store.entries(failed["session"]) if e.get("role") == "tool"]
    assert result["isError"] is True and "has not been read in this session" in texts(result)[0]

    killed = store.import_("qwen", FIXTURES / "killed-then-resumed.jsonl")
    assert said(store.log(killed["session"])) == [
        ("user", "Start the long job"), ("call", "run_shell_command"),
        ("user", "What happened?"), ("assistant", "The job was stopped."),
    ]  # fmt: skip
    assert placeholders(store.context(killed["session"], "openai")) == 1  # as Qwen sends it


def test_an_import_goes_on_where_the_last_stopped_and_waits_for_a_torn_line(
    tmp_path: Path,
) -> None:
    name = "two-turns-write-read-edit-shell.jsonl"
    whole = Store(tmp_path / "whole")
    at_once = whole.import_("qwen", FIXTURES / name)
    store = Store(tmp_path / "work")
    growing = tmp_path / "chat.jsonl"
    lines = (FIXTURES / name).read_bytes().splitlines(keepends=True)
    growing.write_bytes(b"".join(lines[:12]) + lines[12][:40])  # Qwen writing line 13
    first = store.import_("qwen", growing)
    assert [n["line"] for n in first["notes"]] == [13]
    growing.write_bytes(b"".join(lines))
    second = store.import_("qwen", growing)
    assert first["new"] + second["new"] == at_once["new"] and second["notes"] == []
    assert store.entries(first["session"]) == whole.entries(at_once["session"])

    torn = Store(tmp_path / "torn").import_("qwen", FIXTURES / "torn-last-line.jsonl")
    assert torn["new"] == 8 and "left for the next import" in torn["notes"][0]["what"]


def test_a_rewound_chat_and_a_message_in_fragments_are_read_as_qwen_reads_them(
    tmp_path: Path,
) -> None:
    """``/rewind`` re-roots the next turn at an earlier record (its ``parentUuid``): a branch.
    A record written again under its uuid (a fragment) is more of that message, below it, and
    what hangs below the message hangs below the fragment."""
    name = "two-turns-write-read-edit-shell.jsonl"
    records = chat(name)
    reply = next(r for r in records if r["type"] == "assistant" and r["message"]["parts"][0].get(
        "text") == "I wrote notes.txt.")  # fmt: skip
    at = records.index(reply)
    fragment = {**reply, "message": {"role": "model", "parts": [{"text": " And more."}]}}
    again = {
        **records[at + 1],
        "uuid": "11111111-2222-4333-8444-555555555555",
        "parentUuid": reply["uuid"],
        "message": {"role": "user", "parts": [{"text": "Do it another way"}]},
    }
    answer = {
        **records[-1],
        "uuid": "11111111-2222-4333-8444-666666666666",
        "parentUuid": again["uuid"],
        "message": {"role": "model", "parts": [{"text": "Another way."}]},
    }
    path = tmp_path / "chat.jsonl"
    rewritten = [*records[: at + 1], fragment, *records[at + 1 :], again, answer]
    path.write_text("".join(json.dumps(r) + "\n" for r in rewritten))
    store = Store(tmp_path / "work")
    found = store.import_("qwen", path)
    assert [n["what"] for n in found["notes"]] == [
        f"is more of the message {reply['uuid']}: read after it, as Qwen does"
    ]
    entries = {e["id"]: e for e in store.entries(found["session"])}
    more = f"{reply['uuid']}_2"
    assert entries[more]["parentId"] == reply["uuid"] and texts(entries[more]) == [" And more."]
    assert set(forks(list(entries.values()))) == {more}  # the turn and the one rewound to it
    assert found["leaf"] == answer["uuid"]
    assert [t for _, t in said(store.log(found["session"]))][-4:] == [
        "I wrote notes.txt.", " And more.", "Do it another way", "Another way.",
    ]  # fmt: skip
    assert store.import_("qwen", path)["new"] == 0  # the fragment found again by its text


def test_what_is_not_a_chat_file_is_refused_in_one_sentence(tmp_path: Path) -> None:
    store = Store(tmp_path / "work")
    bad = FIXTURES / "bad-no-uuid.jsonl"
    words = store.refused("qwen", bad)
    assert "is not a Qwen Code session file" in words
    assert store.sessions() == []
    with pytest.raises(NotAQwenSessionError, match="its first line is not a record with a uuid"):
        qwen.parse(bad.read_bytes(), Cursor(), Known())  # what a hook's import meets


def test_a_resumed_path_is_read_again_as_the_entries_it_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "qwen-home"
    monkeypatch.setenv("QWEN_HOME", str(home))  # where Qwen keeps a session never imported
    store = Store(tmp_path / "work")
    name = "two-turns-write-read-edit-shell.jsonl"
    session = store.import_("qwen", FIXTURES / name)["session"]
    reply = next(e for e in store.log(session) if texts(e) == ["I wrote notes.txt."])
    resumed = store.json("resume", reply["id"])
    new = resumed["agent_session_id"]
    folder = re.sub(r"[^A-Za-z0-9]", "-", str((tmp_path / "work").resolve()))
    assert resumed["path"] == str(home / "projects" / folder / "chats" / f"{new}.jsonl")
    assert resumed["command"] == f"qwen --resume {new}"
    written = [json.loads(line) for line in Path(resumed["path"]).read_text().splitlines()]
    originals = {r["uuid"]: r for r in chat(name)}
    on_path = [e["id"] for e in store.log(session, reply["id"]) if "in" not in e["native"]]
    assert [r["uuid"] for r in written] == on_path  # the records, their uuids
    assert all(r == {**originals[r["uuid"]], "sessionId": new} for r in written)

    # what Qwen resumes is what the session has: nothing new, no second session
    again = store.import_("qwen", Path(resumed["path"]))
    assert again["session"] == session and again["new"] == 0
    assert len(store.sessions()) == 1

    store.run("user", "A prompt convgit wrote.")
    mine = store.log(session)[-1]["id"]
    # the CLI's own records cannot hold it: the path is written by its writer (issue 36)
    handed = store.json("resume", mine)
    assert "A prompt convgit wrote." in Path(handed["path"]).read_text()
