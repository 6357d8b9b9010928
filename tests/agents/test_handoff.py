"""A path written as any agent's own session and read back by that agent's importer gives the
same path back (issue 36): the same prompts, replies, calls and results, the thinking the
agent's format keeps, the ids of the agent's own messages where its format keeps them; another
agent's calls come back as the target's counterparts (or as text, with their results, where it
has none), and the model each reply names is the one that produced it. On every fixture of
every agent and on the real sample transcripts, in this process (the live round trips with the
real CLIs are in test_handoff_live.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from convgit.agents import registry, writing
from convgit.agents.handoff import Handoff
from convgit.conversation import branching
from convgit.conversation.tree import Tree
from convgit.session import Session
from tests.agents import handoffs
from tests.agents.handoffs import AGENTS, SAMPLE_FOLDERS, imported, round_trip, said_view


def _ref(session: Session) -> str | None:
    """The deepest entry of the active path a branch may start from (not inside a tool run)."""
    tree = session.conversation.tree
    if tree.leaf is None:
        return None
    for node in reversed(tree.path(tree.leaf)):
        if branching.refusal(tree, node, "x") is None:
            return node
    return None


def _check(session: Session, target: str, what: str) -> None:
    ref = _ref(session)
    if ref is None:
        return
    handoff, _, back = round_trip(session, ref, target)
    keeps = writing.writer(target).KEEPS
    for message in handoff.said:  # another agent's thinking, where only the target's own stays
        if keeps.thinking == "own" and message.agent != target:
            message.parts = [p for p in message.parts if p["type"] != "thinking"]
    thinking = keeps.thinking != "none"
    expected = said_view(handoff.said, thinking, keeps.errors)
    got = handoffs.tree_view(back, back.leaf, thinking, keeps.errors)
    assert got == expected, f"{what} -> {target}"
    _check_calls(handoff, back, target, what)
    if keeps.ids:
        _check_ids(handoff, back, target, what)
    if keeps.usage:
        _check_models(handoff, back, target, what)


def _check_calls(handoff: Handoff, back: Tree, target: str, what: str) -> None:
    """Every call read back is one of the target's tools, or one of the target's own calls."""
    tools = writing.writer(target).TOOLS.names()
    own = {str(p["id"]) for m in handoff.said if m.agent == target for p in m.calls()}
    for entry in back.entries.values():
        for part in entry.get("content") if isinstance(entry.get("content"), list) else []:
            if part.get("type") == "tool_call" and entry["role"] == "assistant":
                assert part["name"] in tools or part["id"] in own, f"{what} -> {target}: {part}"


def _check_ids(handoff: Handoff, back: Tree, target: str, what: str) -> None:
    """The target's own prompts and results keep their entries' ids (a message with nothing
    a writer knows, such as Gemini CLI's echo of a call's answers, is not written)."""
    mine = [
        m.entry
        for m in handoff.said
        if m.agent == target and m.role in ("user", "tool") and (m.parts or m.role == "tool")
    ]
    assert [e for e in mine if e not in back.entries] == [], f"{what} -> {target}"


def _check_models(handoff: Handoff, back: Tree, target: str, what: str) -> None:
    """Each reply read back names the model that produced it (its agent's own words for it)."""
    said = {
        m.producer.model
        for m in handoff.said
        if m.producer is not None and (m.text().strip() or m.calls())
    }
    found = {str(r["model"]) for r in back.entries.values() if r["type"] == "model"}
    for entry in back.entries.values():
        value = writing.native_value(back, entry) if entry.get("role") == "assistant" else None
        produced = None if value is None else writing.writer(target).produced(value)
        if produced is not None:
            found.add(produced.model)
    assert said <= found, f"{what} -> {target}: {said - found}"


@pytest.mark.parametrize("target", AGENTS)
def test_every_fixture_written_as_each_agent_reads_back_the_same(
    tmp_path: Path, target: str
) -> None:
    for number, (agent, file) in enumerate(handoffs.sources()):
        session = imported(agent, file, tmp_path / str(number))
        _check(session, target, f"{agent} {file.name}")


@pytest.mark.parametrize("target", AGENTS)
def test_every_real_sample_written_as_each_agent_reads_back_the_same(
    samples: Path, tmp_path: Path, target: str
) -> None:
    number = 0
    for folder, agent in SAMPLE_FOLDERS.items():
        for file in sorted((samples / folder).glob("*.json*")):
            if file.parent.name == "subagents" or "sidechain" in file.name:
                continue  # a subagent's file: imported with its session
            number += 1
            session = imported(agent, file, tmp_path / str(number))
            _check(session, target, f"{agent} {file.name}")


# -- tools: a call as the target's counterpart ---------------------------------------------------


def _said(source: str, target: str, name: str, given: Any, cwd: str = "/w") -> Any:
    found = writing.say_call(name, given, source, target, cwd)
    return None if found is None else (found[0].name, found[1])


def test_an_edit_is_each_agents_own_edit() -> None:
    claude = {"file_path": "/w/a.txt", "old_string": "one", "new_string": "two"}
    assert _said("claude-code", "pi", "Edit", claude) == (
        "edit",
        {"path": "/w/a.txt", "edits": [{"oldText": "one", "newText": "two"}]},
    )
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n"
    assert _said("claude-code", "codex", "Edit", claude) == ("apply_patch", {"input": patch})
    assert _said("codex", "claude-code", "apply_patch", {"input": patch}) == ("Edit", claude)
    assert _said("claude-code", "gemini", "Edit", claude) == (
        "replace",
        {"file_path": "/w/a.txt", "old_string": "one", "new_string": "two",
         "instruction": "Replace old_string by new_string in the file."},
    )  # fmt: skip
    assert _said("claude-code", "opencode", "Edit", claude) == (
        "edit",
        {"filePath": "/w/a.txt", "oldString": "one", "newString": "two"},
    )
    assert _said("claude-code", "copilot", "Edit", claude) == (
        "edit",
        {"path": "/w/a.txt", "old_str": "one", "new_str": "two"},
    )
    assert _said("claude-code", "qwen", "Edit", claude) == (
        "edit",
        {"file_path": "/w/a.txt", "old_string": "one", "new_string": "two"},
    )
    two = {"path": "a.txt", "edits": [{"oldText": "a", "newText": "b"}] * 2}
    assert _said("pi", "claude-code", "edit", two) is None  # Claude Code's Edit makes one


def test_a_write_a_shell_a_read_and_a_search_are_each_agents_own() -> None:
    write = {"file_path": "/w/n.txt", "content": "one\ntwo\n"}
    added = "*** Begin Patch\n*** Add File: n.txt\n+one\n+two\n*** End Patch\n"
    assert _said("claude-code", "codex", "Write", write) == ("apply_patch", {"input": added})
    assert _said("codex", "copilot", "apply_patch", {"input": added}) == (
        "create",
        {"path": "/w/n.txt", "file_text": "one\ntwo\n"},
    )
    shell = {"cmd": "ls -a", "workdir": "/w"}
    assert _said("codex", "gemini", "exec_command", shell) == (
        "run_shell_command",
        {"command": "ls -a"},
    )
    assert _said("codex", "opencode", "exec_command", shell) == (
        "bash",
        {"command": "ls -a", "description": "ls -a"},
    )
    read = {"file_path": "/w/n.txt", "offset": 3, "limit": 2}
    assert _said("claude-code", "gemini", "Read", read) == (
        "read_file",
        {"file_path": "/w/n.txt", "start_line": 3, "end_line": 4},
    )
    assert _said("claude-code", "opencode", "Read", read) == (
        "read",
        {"filePath": "/w/n.txt", "offset": 2, "limit": 2},
    )
    assert _said("claude-code", "codex", "Read", read) == (
        "exec_command",
        {"cmd": "sed -n '3,4p' /w/n.txt"},
    )
    search = {"pattern": "TODO", "path": "/w/src", "glob": "*.py"}
    assert _said("claude-code", "gemini", "Grep", search) == (
        "grep_search",
        {"pattern": "TODO", "dir_path": "/w/src", "include_pattern": "*.py"},
    )
    assert _said("claude-code", "codex", "Grep", search) == (
        "exec_command",
        {"cmd": "rg -n TODO -g '*.py' src"},
    )


def test_every_agent_declares_a_tool_of_each_kind() -> None:
    for agent in AGENTS:
        kinds = writing.writer(agent).TOOLS.kinds()
        assert kinds >= {"write", "edit", "shell", "read", "search"}, agent


def test_a_call_without_a_counterpart_is_text_and_its_result_a_message(tmp_path: Path) -> None:
    """Claude Code's Task (a subagent) is no tool of pi's: pi is given both as text it reads,
    after the results of the reply's other calls, and never a call to a tool it lacks."""
    lines = [
        {"type": "user", "uuid": "p1", "parentUuid": None, "sessionId": "s1",
         "message": {"role": "user", "content": "Review it."}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "p1", "sessionId": "s1",
         "message": {"model": "claude-opus-4-5", "id": "m1", "role": "assistant", "content": [
             {"type": "tool_use", "id": "t1", "name": "Task", "input": {"prompt": "review"}},
             {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "ls"}}]}},
        {"type": "user", "uuid": "r1", "parentUuid": "a1", "sessionId": "s1", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                         "content": "Looks good."}]}},
        {"type": "user", "uuid": "r2", "parentUuid": "r1", "sessionId": "s1", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2",
                                         "content": "a.txt"}]}},
        {"type": "assistant", "uuid": "a2", "parentUuid": "r2", "sessionId": "s1",
         "message": {"model": "claude-opus-4-5", "id": "m2", "role": "assistant",
                     "content": [{"type": "text", "text": "Reviewed."}]}},
    ]  # fmt: skip
    file = tmp_path / "s1.jsonl"
    file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    session = imported("claude-code", file, tmp_path / "store")
    handoff, native, _ = round_trip(session, "a2", "pi")
    assert [(m.role, m.text()) for m in handoff.said] == [
        ("user", "Review it."),
        ("assistant", '[A call of Task (call t1): {"prompt":"review"}]'),
        ("tool", "a.txt"),
        ("user", "[The result of Task (call t1)]:\nLooks good."),
        ("assistant", "Reviewed."),
    ]
    sent = [json.loads(line) for line in native.data.splitlines()[1:]]
    calls = [b for s in sent for b in s.get("message", {}).get("content", []) if "name" in b]
    assert [(c["name"], c["arguments"]) for c in calls] == [("bash", {"command": "ls"})]
    models = [s["message"].get("model") for s in sent if s.get("type") == "message"]
    assert "claude-opus-4-5" in models  # what produced the replies, not "convgit"/"unknown"


def test_a_call_id_made_twice_is_told_apart(tmp_path: Path) -> None:
    file = handoffs.FIXTURES / "codex" / "repeated-call-id.jsonl"
    session = imported("codex", file, tmp_path / "store")
    handoff, _, _ = round_trip(session, str(_ref(session)), "claude-code")
    ids = [p["id"] for m in handoff.said for p in m.calls()]
    assert len(ids) == len(set(ids)) and any(i.endswith("-2") for i in ids)


# -- the command line ----------------------------------------------------------------------------


def test_export_writes_the_path_as_every_agents_own_session(tmp_path: Path) -> None:
    """``convgit export --format AGENT`` for every agent, of a Claude Code session: each file is
    one its agent's importer recognises as its own."""
    from convgit.agents.recognise import agent_of

    store = tmp_path / "store"
    file = handoffs.FIXTURES / "claude-code" / "parallel-tool-results.jsonl"
    env = {"PYTHONPATH": str(handoffs.ROOT), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}

    def convgit(*args: str) -> bytes:
        done = subprocess.run(
            [sys.executable, "-m", "convgit", "--store", str(store), *args],
            capture_output=True, env=env, check=True,
        )  # fmt: skip
        return done.stdout

    convgit("init")
    convgit("import", "claude-code", str(file))
    for agent in AGENTS:
        data = convgit("export", "--format", agent)
        assert agent_of(data) == agent
    assert registry.names("writing") == sorted(AGENTS)
