"""One convgit session per Claude Code session, with the real CLI: a forked Claude session is
a branch of it, a session outside git keeps the conversation only, a subagent's work is a side
branch and a compaction an entry, and per-tool snapshots are taken when config.toml asks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agents.hooked import (
    calls_of,
    convgit,
    convgit_json,
    oracle_command,
    records,
    reply_text,
    session_records,
)
from tests.agents.runners import ClaudeCode
from tests.agents.script import call, say
from tests.agents.server import ModelServer
from tests.workspace.gitrepo import GitRepo


def test_a_forked_claude_session_is_a_branch_of_the_same_convgit_session(
    model_server: ModelServer, claude_code: ClaudeCode, project: GitRepo
) -> None:
    convgit(project.path, "hooks", "install", "claude-code")
    model_server.expect(say("First."), say("In the fork."), say("In the original."))
    first = claude_code.run("start")
    fork = claude_code.run("try another way", "--fork-session", resume=first.session_id)
    assert fork.session_id != first.session_id
    claude_code.run("go on as before", resume=first.session_id)

    (found,) = convgit_json(project.path, "sessions")["sessions"]
    assert found["agent_session_id"] == first.session_id
    assert found["agent_sessions"] == [fork.session_id]
    tree = convgit_json(project.path, "tree")["entries"]
    reply = next(e for e in tree if e.get("role") == "assistant" and reply_text(e) == "First.")
    below = {reply_text(e): e for e in tree if e.get("parentId") == reply["id"]}
    assert set(below) == {"try another way", "go on as before"}  # a branch at the fork point
    (forked,) = session_records(project.path, "agent_session")
    assert forked["agentSession"] == fork.session_id and forked["how"] == "fork"
    assert forked["from"] == reply["id"]
    fork_reply = next(e for e in tree if reply_text(e) == "In the fork.")
    assert fork_reply["parentId"] == below["try another way"]["id"]
    assert convgit_json(project.path, "show", fork_reply["id"])["snapshot"] is not None


def test_outside_git_the_conversation_is_kept_without_snapshots(
    model_server: ModelServer,
    claude_code: ClaudeCode,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Outside git the session lives in the per-user store (keyed by folder), not in a
    `.convgit` of every folder Claude runs in; a folder that never had a turn gets nothing."""
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_DATA_HOME", str(xdg))  # for convgit here and Claude's hooks
    plain = tmp_path / "plain"
    plain.mkdir()
    convgit(plain, "hooks", "install", "claude-code")
    model_server.expect(
        call("Write", {"file_path": str(plain / "a.txt"), "content": "a\n"}), say("Wrote a.")
    )
    run = claude_code.run("Write a.txt", cwd=plain, env={"XDG_DATA_HOME": str(xdg)})
    assert not (plain / ".convgit").exists()
    (store,) = (xdg / "convgit" / "folders").iterdir()
    assert (store / "sessions").is_dir()
    (found,) = convgit_json(plain, "sessions")["sessions"]
    assert found["agent_session_id"] == run.session_id and found["snapshots"] is False
    path = convgit_json(plain, "log")["entries"]
    assert [reply_text(e) for e in path if e["role"] != "tool"] == ["Write a.txt", "", "Wrote a."]
    assert "no git repository" in convgit(plain, "status")
    log = (store / "logs" / "hooks.log").read_text()
    assert "problem" not in log


def test_subagent_work_is_a_side_branch_and_a_compaction_an_entry(
    model_server: ModelServer, claude_code: ClaudeCode, project: GitRepo
) -> None:
    convgit(project.path, "hooks", "install", "claude-code")
    task = {"description": "write", "prompt": "Write sub.txt", "subagent_type": "general-purpose"}
    model_server.expect(
        call("Agent", {**task, "run_in_background": False}),
        call("Write", {"file_path": str(project.path / "sub.txt"), "content": "sub\n"}),
        say("The subagent wrote sub.txt."),
        say("Main: done."),
        say("<summary>The user had a subagent write sub.txt.</summary>"),  # /compact's request
        say("Went on."),
    )
    first = claude_code.run("Have a subagent write sub.txt")
    assert first.output == "Main: done."
    tree = convgit_json(project.path, "tree")["entries"]
    caller = next(e for e in tree if any(p["name"] == "Agent" for p in calls_of(e)))
    side = [e for e in tree if (e.get("native") or {}).get("subagent")]
    assert reply_text(side[0]) == "Write sub.txt" and side[0]["parentId"] == caller["id"]
    assert [reply_text(e) for e in side][-1] == "The subagent wrote sub.txt."
    main = [e["id"] for e in convgit_json(project.path, "log")["entries"]]
    assert not {e["id"] for e in side} & set(main)  # the main path never replays it
    snapshot = convgit_json(project.path, "show", side[-1]["id"])["snapshot"]
    assert "sub.txt" in project.tree_paths(snapshot["tree"])

    claude_code.run("/compact", resume=first.session_id)
    # Claude writes the compaction after its hooks: the next turn's Stop imports it
    assert claude_code.run("Go on", resume=first.session_id).output == "Went on."
    (compaction,) = [
        e for e in convgit_json(project.path, "tree")["entries"] if e["type"] == "compaction"
    ]
    assert "The user had a subagent write sub.txt." in compaction["summary"]
    assert convgit_json(project.path, "context")["messages"][0]["content"].startswith(
        "The conversation before this point was compacted"
    )


def test_per_tool_snapshots_are_taken_when_config_asks(
    model_server: ModelServer, claude_code: ClaudeCode, project: GitRepo, tmp_path: Path
) -> None:
    oracle_log = tmp_path / "oracle.jsonl"
    command = oracle_command(oracle_log)
    (project.path / ".claude").mkdir()
    (project.path / ".claude" / "settings.local.json").write_text(
        json.dumps(
            {"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": command}]}]}}
        )
    )
    store = project.path / ".git" / "convgit"
    store.mkdir(parents=True, exist_ok=True)
    (store / "config.toml").write_text("[hooks]\ntool_snapshots = true\n")
    convgit(project.path, "hooks", "install", "claude-code")  # PostToolUse on Bash too
    model_server.expect(
        call("Write", {"file_path": str(project.path / "a.txt"), "content": "a\n"}),
        call("Bash", {"command": "echo b > b.txt"}),
        say("Both done."),
    )
    claude_code.run("Write a.txt, then make b.txt")
    path = convgit_json(project.path, "log")["entries"]
    callers = [e for e in path if calls_of(e)]
    trees = [o["tree"] for o in records(oracle_log)]
    assert len(callers) == len(trees) == 2
    for caller, tree in zip(callers, trees, strict=True):
        assert convgit_json(project.path, "show", caller["id"])["snapshot"]["tree"] == tree
    assert "b.txt" not in project.tree_paths(trees[0]) and "b.txt" in project.tree_paths(trees[1])
    assert convgit_json(project.path, "show", path[-1]["id"])["snapshot"]["tree"] == trees[1]


def test_claudes_turns_never_take_over_the_session_the_user_chose(
    model_server: ModelServer, claude_code: ClaudeCode, project: GitRepo
) -> None:
    """The user records a conversation of their own with `convgit user`; a Claude session in
    the same working tree is recorded in a session of its own, and the user's next `convgit
    user` still goes into theirs."""
    convgit(project.path, "hooks", "install", "claude-code")
    convgit(project.path, "init")
    convgit(project.path, "user", "my own question")
    mine = convgit_json(project.path, "status")["session"]
    model_server.expect(say("Claude's answer."))
    run = claude_code.run("a prompt to Claude")
    convgit(project.path, "user", "my next question")

    assert convgit_json(project.path, "status")["session"] == mine
    texts = [reply_text(e) for e in convgit_json(project.path, "log")["entries"]]
    assert texts == ["my own question", "my next question"]
    (claudes,) = [
        s
        for s in convgit_json(project.path, "sessions")["sessions"]
        if s.get("agent_session_id") == run.session_id
    ]
    assert claudes["entries"] == 2 and claudes["current"] is False
