"""OpenCode exports through the real CLI: each fixture of fixtures/opencode/ imports as its
README says, and a path `convgit resume` hands back (OpenCode's messages copied under ids of
their own, convgit's own as OpenCode's) is read again as the entries it came from."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agents.reading.agentfiles import Store

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "opencode"


def texts(store: Store, session: str) -> list[tuple[str, str]]:
    found = []
    for entry in store.log(session):
        content = entry["content"]
        kinds = [p["type"] for p in content] if isinstance(content, list) else ["text"]
        found.append((entry["role"], ",".join(kinds)))
    return found


def test_each_fixture_imports_as_its_readme_says(tmp_path: Path) -> None:
    store = Store(tmp_path / "work")
    first = store.import_("opencode", FIXTURES / "write-then-bash.json")
    assert (first["new"], first["notes"]) == (8, [])
    assert store.import_("opencode", FIXTURES / "write-then-bash.json")["new"] == 0
    assert [role for role, _ in texts(store, first["session"])] == [
        "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant",
    ]  # fmt: skip

    unfinished = store.import_("opencode", FIXTURES / "reply-still-being-written.json")
    assert unfinished["new"] == 4
    assert "left for the next import" in unfinished["notes"][0]["what"]
    finished = store.import_("opencode", FIXTURES / "reasoning-and-two-tool-calls.json")
    assert finished["session"] == unfinished["session"] and finished["new"] == 1
    assert texts(store, finished["session"]) == [
        ("user", "text"),
        ("assistant", "thinking,tool_call,tool_call"),
        ("tool", "text"),
        ("tool", "text"),
        ("assistant", "text"),
    ]
    errors = [e["isError"] for e in store.log(finished["session"]) if e["role"] == "tool"]
    assert errors == [False, True]


def test_a_reply_a_finished_one_follows_is_imported_as_interrupted(tmp_path: Path) -> None:
    """A reply OpenCode never finished (it was killed) that a finished reply follows will never
    finish: it is imported as it is, marked interrupted and noted, and the later turn comes in
    (a reply still being written at the end waits: test above)."""
    store = Store(tmp_path / "work")
    found = store.import_("opencode", FIXTURES / "reply-killed-then-another-turn.json")
    path = store.log(found["session"])
    assert [e.get("role") or e["kind"] for e in path] == [
        "user", "assistant", "opencode.interrupted", "user", "assistant",
    ]  # fmt: skip
    assert [e["parentId"] for e in path] == [None, *(e["id"] for e in path[:-1])]
    assert [c["type"] for c in path[1]["content"]] == ["tool_call"]  # unanswered
    (note,) = found["notes"]
    assert "msg_24ec8cb250001aaaaaaaaaaaa" in note["what"]
    assert note["what"].endswith("imported as interrupted")
    assert found["leaf"] == path[-1]["id"]
    said = [m["content"] for m in store.context(found["session"], "openai")["messages"]]
    assert said[0] == "turn one" and said[-2:] == ["turn two", "Two."]
    assert store.import_("opencode", FIXTURES / "reply-killed-then-another-turn.json")["new"] == 0


def test_a_file_part_and_an_api_error_are_kept_not_replayed(tmp_path: Path) -> None:
    store = Store(tmp_path / "work")
    found = store.import_("opencode", FIXTURES / "file-part-and-api-error.json")
    assert texts(store, found["session"]) == [
        ("user", "text,opencode.file"),
        ("assistant", "opencode.error"),
    ]


def test_what_is_not_an_export_is_refused_in_one_sentence(tmp_path: Path) -> None:
    store = Store(tmp_path / "work")
    for name in ("bad-no-messages.json", "bad-truncated.json"):
        words = store.refused("opencode", FIXTURES / name)
        assert "is not an OpenCode session file" in words
    assert store.json("sessions")["sessions"] == []


def test_a_resumed_path_is_read_again_as_the_entries_it_came_from(tmp_path: Path) -> None:
    store = Store(tmp_path / "work")
    session = store.import_("opencode", FIXTURES / "write-then-bash.json")["session"]
    store.run("user", "A prompt convgit wrote.")
    store.run("assistant", "A reply convgit wrote.")
    path = store.log(session)
    resumed = store.json("resume", path[-1]["id"])
    new = resumed["agent_session_id"]
    assert resumed["command"] == f"opencode import {resumed['path']} && opencode --session {new}"
    written = json.loads(Path(resumed["path"]).read_text())
    assert written["info"]["id"] == new
    assert written["info"]["directory"] == "/home/user/project"
    messages = written["messages"]
    roles = ["user", "assistant", "assistant"] * 2 + ["user", "assistant"]
    assert [m["info"]["role"] for m in messages] == roles
    originals = {p["id"] for m in json.loads((FIXTURES / "write-then-bash.json").read_text())[
        "messages"] for p in [m["info"], *m["parts"]]}  # fmt: skip
    copied = {p["id"] for m in messages for p in [m["info"], *m["parts"]]}
    assert not copied & originals  # ids of their own: OpenCode's database keys
    assert all(p["sessionID"] == new for m in messages for p in [m["info"], *m["parts"]])

    # what OpenCode imports is what the session has: nothing new, no second session
    again = store.import_("opencode", Path(resumed["path"]))
    assert again["session"] == session and again["new"] == 0
    assert len(store.json("sessions")["sessions"]) == 1
