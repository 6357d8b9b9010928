"""GitHub Copilot CLI events files (fixtures/copilot/, written by the real CLI) import through the
CLI as a line of entries by event id: each prompt, reply and tool result, the model where it
changes, every other event kept; an import continues where the last one stopped, a rewound file
branches where the CLI went on, and a path `convgit resume` hands back is read again as the
entries it came from."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from convgit import NotACopilotSessionError
from convgit.agents.copilot import reading as copilot
from convgit.agents.reading import Cursor, Known
from tests.agents.reading.agentfiles import (
    Store,
    anthropic_sound,
    counts,
    forks,
    native,
    openai_sound,
    sound_tree,
    texts,
)

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "copilot"

# what each fixture makes, read from the file by hand
SHAPES = {
    "two-turns-create-edit-bash.jsonl": {"user": 2, "model": 2, "assistant": 5, "tool": 3},
    "apply-patch-custom-tool.jsonl": {"user": 1, "model": 1, "assistant": 2, "tool": 1},
    "failed-tool.jsonl": {"user": 1, "model": 1, "assistant": 2, "tool": 1},
    "killed-then-resumed.jsonl": {"user": 2, "model": 1, "assistant": 2, "tool": 1},
}


def events(name: str) -> list[dict[str, Any]]:
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
def test_each_fixture_imports_as_a_line_of_its_events(tmp_path: Path, name: str) -> None:
    store = Store(tmp_path / "work")
    found = store.import_("copilot", FIXTURES / name)
    assert found["notes"] == [] and found["kept"] == {}
    assert found["new"] == found["entries"] == sum(SHAPES[name].values())
    entries = store.entries(found["session"])
    sound_tree(entries)
    store.fsck_clean(found["session"])
    assert counts(entries) == SHAPES[name] and forks(entries) == {}
    assert [e["parentId"] for e in entries] == [None, *(e["id"] for e in entries[:-1])]
    # every entry is the event of the same id, kept as it was (a reply's model: in the reply's)
    for entry in entries:
        if entry["native"].get("in") is not None:
            assert entry["id"] == f"model-{entry['native']['in']}"
        else:
            assert json.loads(native(entry) or b"{}")["id"] == entry["id"]
    start = events(name)[0]
    assert found["agent_session_id"] == start["data"]["sessionId"]
    assert store.import_("copilot", FIXTURES / name)["new"] == 0
    openai_sound(store.context(found["session"], "openai"))
    anthropic_sound(store.context(found["session"], "anthropic"))


def test_the_conversation_is_the_clis_prompts_replies_calls_and_results(tmp_path: Path) -> None:
    store = Store(tmp_path / "work")
    two = store.import_("copilot", FIXTURES / "two-turns-create-edit-bash.jsonl")
    entries = store.entries(two["session"])
    assert said(entries) == [
        ("user", "Write notes.txt, then edit it"),
        ("call", "create"), ("tool", "call_0_0"),
        ("call", "edit"), ("tool", "call_1_0"),
        ("assistant", "I wrote and edited notes.txt."),
        ("user", "Run the command"),
        ("assistant", "Running it."), ("call", "bash"), ("tool", "call_3_0"),
        ("assistant", "I ran the command."),
    ]  # fmt: skip
    models = [e["model"] for e in entries if e["type"] == "model"]
    assert models == ["claude-sonnet-4.6", "claude-haiku-4.5"]

    patch = store.import_("copilot", FIXTURES / "apply-patch-custom-tool.jsonl")
    parts = [p for e in store.entries(patch["session"]) if e["type"] == "message"
             for p in e["content"] if isinstance(p, dict)]  # fmt: skip
    (call,) = [p for p in parts if p["type"] == "tool_call"]
    assert call["name"] == "apply_patch"
    assert call["input"] == {"input": "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n"}

    failed = store.import_("copilot", FIXTURES / "failed-tool.jsonl")
    (result,) = [e for e in store.entries(failed["session"]) if e.get("role") == "tool"]
    assert result["isError"] is True and "ENOENT" in texts(result)[0]

    killed = store.import_("copilot", FIXTURES / "killed-then-resumed.jsonl")
    (interrupted,) = [e for e in store.entries(killed["session"]) if e.get("role") == "tool"]
    assert interrupted["isError"] is True
    assert texts(interrupted)[0].startswith("Tool execution was interrupted")


def test_an_import_goes_on_where_the_last_stopped_and_waits_for_a_torn_line(
    tmp_path: Path,
) -> None:
    whole = Store(tmp_path / "whole")
    at_once = whole.import_("copilot", FIXTURES / "two-turns-create-edit-bash.jsonl")
    store = Store(tmp_path / "work")
    growing = tmp_path / "events.jsonl"
    lines = (FIXTURES / "two-turns-create-edit-bash.jsonl").read_bytes().splitlines(keepends=True)
    growing.write_bytes(b"".join(lines[:12]) + lines[12][:40])  # the CLI writing line 13
    first = store.import_("copilot", growing)
    assert [n["line"] for n in first["notes"]] == [13]
    assert "left for the next import" in first["notes"][0]["what"]
    growing.write_bytes(b"".join(lines))
    second = store.import_("copilot", growing)
    assert first["new"] + second["new"] == at_once["new"] and second["notes"] == []
    assert store.entries(first["session"]) == whole.entries(at_once["session"])

    torn = store.import_("copilot", FIXTURES / "torn-last-line.jsonl")
    assert torn["new"] == 5 and "left for the next import" in torn["notes"][0]["what"]


def test_a_rewound_file_branches_where_the_cli_went_on(tmp_path: Path) -> None:
    """``/rewind`` takes the events after a point out of the file and the CLI writes on: the
    file is read again, nothing the session has is added twice, and the new turn hangs below the
    point, beside the turn rewound."""
    name = "two-turns-create-edit-bash.jsonl"
    store = Store(tmp_path / "work")
    path = tmp_path / "events.jsonl"
    path.write_bytes((FIXTURES / name).read_bytes())
    first = store.import_("copilot", path)
    found = events(name)
    end = next(i for i, e in enumerate(found) if e["type"] == "session.shutdown")
    again = []
    for event in found[end + 1 :]:  # the second turn once more, as new events
        event = {**event, "id": str(uuid.uuid5(uuid.NAMESPACE_URL, event["id"]))}
        if event["type"] == "user.message":
            event["data"] = {**event["data"], "content": "Run another command"}
        again.append(event)
    kept = (FIXTURES / name).read_bytes().splitlines(keepends=True)[: end + 1]
    path.write_bytes(b"".join(kept) + b"".join(json.dumps(e).encode() + b"\n" for e in again))
    second = store.import_("copilot", path)
    assert (first["new"], second["new"]) == (12, 5)  # the second turn again; the first not again
    entries = store.entries(first["session"])
    reply = next(e for e in entries if texts(e) == ["I wrote and edited notes.txt."])
    assert set(forks(entries)) == {reply["id"]}  # the two second turns, each a branch there
    assert second["leaf"] == entries[-1]["id"]
    path = [t for e in store.log(first["session"]) if e.get("role") in ("user", "assistant")
            for t in texts(e)]  # fmt: skip
    assert path == ["Write notes.txt, then edit it", "I wrote and edited notes.txt.",
                    "Run another command", "Running it.", "I ran the command."]  # fmt: skip


def test_what_is_not_an_events_file_is_refused_in_one_sentence(tmp_path: Path) -> None:
    store = Store(tmp_path / "work")
    bad = FIXTURES / "bad-no-session-start.jsonl"
    words = store.refused("copilot", bad)
    assert "is not a GitHub Copilot CLI session file: no record in it names its session" in words
    assert store.sessions() == []
    with pytest.raises(NotACopilotSessionError, match=r"its first line is not a session\.start"):
        copilot.parse(bad.read_bytes(), Cursor(), Known())  # what a hook's import meets


def test_a_resumed_path_is_read_again_as_the_entries_it_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("COPILOT_HOME", str(home))  # where the CLI of a session never imported is
    store = Store(tmp_path / "work")
    name = "two-turns-create-edit-bash.jsonl"
    session = store.import_("copilot", FIXTURES / name)["session"]
    path = store.log(session)
    reply = next(e for e in path if texts(e) == ["I wrote and edited notes.txt."])
    resumed = store.json("resume", reply["id"])
    new = resumed["agent_session_id"]
    assert resumed["path"] == str(home / "session-state" / new / "events.jsonl")
    assert resumed["command"] == f"copilot --resume={new}"
    written = [json.loads(line) for line in Path(resumed["path"]).read_text().splitlines()]
    assert written[0]["type"] == "session.start" and written[0]["data"]["sessionId"] == new
    on_path = [e for e in store.log(session, reply["id"]) if "in" not in e["native"]]
    assert [e["id"] for e in written[1:]] == [e["id"] for e in on_path]  # the events, their ids
    originals = {e["id"]: e for e in events(name)}
    assert all(e == originals[e["id"]] for e in written[1:])  # as the CLI wrote them

    # what the CLI resumes is what the session has: nothing new, no second session
    again = store.import_("copilot", Path(resumed["path"]))
    assert again["session"] == session and again["new"] == 0
    assert len(store.sessions()) == 1

    # an entry convgit wrote has no event of the CLI's
    store.run("user", "A prompt convgit wrote.")
    mine = store.log(session)[-1]["id"]
    # the CLI's own records cannot hold it: the path is written by its writer (issue 36)
    handed = store.json("resume", mine)
    assert "A prompt convgit wrote." in Path(handed["path"]).read_text()
