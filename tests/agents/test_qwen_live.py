"""convgit live beside the real Qwen Code, its hooks installed by `convgit hooks install qwen`
(``.qwen/settings.json``, merged with the user's): every prompt, reply and tool call lands in the
tree, each turn's snapshot is what `git add -A` stages at its Stop (a shell edit included), a
resume at an earlier reply sends the model exactly that path, a turn Qwen was killed in is caught
up by the next, and a hook that fails is told once, as Qwen's own hook message at Stop, never to
the model. The user's git state is guarded by `project`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from convgit.base import locks
from tests.agents.hooked import (
    THREE_REPLIES,
    assert_each_turn_has_gits_snapshot,
    calls_of,
    convgit,
    convgit_json,
    hook_log,
    oracle_command,
    path_messages,
    records,
    reply_text,
)
from tests.agents.runners import Qwen
from tests.agents.script import call, say
from tests.agents.server import ModelServer
from tests.polling import wait_until
from tests.workspace.gitrepo import GitRepo


def user_settings(project: Path, log: Path) -> bytes:
    """The user's project settings before convgit: their own Stop hook (git's `git add -A` tree
    at each turn's end, the oracle) and a setting convgit knows nothing of; the file's bytes."""
    settings = {
        "ui": {"hideTips": True},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": oracle_command(log)}]}]},
    }
    path = project / ".qwen" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(settings))
    return path.read_bytes()


def session_messages(chat: Path) -> list[tuple[str, str]]:
    """The conversation on the chat file's active branch (the parentUuid chain from its last
    record): (role, text | call id | result's call id), in order."""
    found = {r["uuid"]: r for r in records(chat)}
    node: str | None = records(chat)[-1]["uuid"]
    chain = []
    while node is not None:
        chain.append(found[node])
        node = found[node]["parentUuid"]
    said: list[tuple[str, str]] = []
    for record in reversed(chain):
        parts = (record.get("message") or {}).get("parts") or []
        for part in parts:
            if record["type"] == "user" and "text" in part:
                said.append(("user", part["text"]))
            elif record["type"] == "assistant" and "text" in part and not part.get("thought"):
                said.append(("assistant", part["text"]))
            elif "functionCall" in part:
                said.append(("call", part["functionCall"]["id"]))
            elif "functionResponse" in part:
                said.append(("result", part["functionResponse"]["id"]))
    return said


def typed(body: dict[str, Any]) -> list[str]:
    """The user's texts a request carried: each text part of a user message, without those
    Qwen puts in front (``<system-reminder>``...)."""
    found = []
    for message in body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        parts = [{"text": content}] if isinstance(content, str) else content
        found += [p["text"] for p in parts if not p.get("text", "<").startswith("<")]
    return found


def said(project: GitRepo) -> list[str]:
    path = convgit_json(project.path, "log")["entries"]
    texts = [reply_text(e) for e in path if e.get("role") in ("user", "assistant")]
    return [t for t in texts if t]


def test_three_turns_are_recorded_snapshotted_and_a_resumed_reply_continues_as_a_branch(
    model_server: ModelServer, qwen: Qwen, project: GitRepo, tmp_path: Path
) -> None:
    oracle_log = tmp_path / "oracle.jsonl"
    theirs = user_settings(project.path, oracle_log)
    installed = convgit(project.path, "hooks", "install", "qwen")
    assert "installed convgit's hooks in .qwen/settings.json" in installed
    settings_path = project.path / ".qwen" / "settings.json"
    settings = json.loads(settings_path.read_text())
    assert settings["ui"] == {"hideTips": True}
    assert sorted(settings["hooks"]) == ["PostToolUse", "Stop", "UserPromptSubmit"]
    status = convgit_json(project.path, "hooks", "status", "qwen")["agents"]["qwen"]
    assert [(s["scope"], s["state"], s["problem"]) for s in status] == [
        ("project", "installed", None),
        ("user", "not installed", None),
    ]

    notes = str(project.path / "notes.txt")
    model_server.expect(
        call("write_file", {"file_path": notes, "content": "one\n"}),
        say(THREE_REPLIES[0]),
        call("read_file", {"file_path": notes}),  # Qwen edits only what this process has read
        call("edit", {"file_path": notes, "old_string": "one", "new_string": "two"}),
        say(THREE_REPLIES[1]),
        call("run_shell_command", {"command": "echo three > made-by-bash.txt && rm README.md"}),
        say(THREE_REPLIES[2]),
    )
    prompts = ["Write notes.txt", "Edit notes.txt", "Run the command"]
    first = qwen.run(prompts[0])
    for prompt in prompts[1:]:
        qwen.run(prompt, resume=first.session_id)
    assert first.transcript is not None
    assert (project.path / "notes.txt").read_text() == "two\n"
    assert (project.path / "made-by-bash.txt").read_text() == "three\n"
    assert all("problem" not in line for line in hook_log(project)), hook_log(project)

    # one convgit session for the Qwen session, its tree the chat file's
    (found,) = convgit_json(project.path, "sessions")["sessions"]
    assert found["agent"] == "qwen" and found["agent_session_id"] == first.session_id
    path = convgit_json(project.path, "log")["entries"]
    assert path_messages(path) == session_messages(first.transcript)
    calls = [c["name"] for e in path if e["type"] == "message" for c in calls_of(e)]
    assert calls == ["write_file", "read_file", "edit", "run_shell_command"]
    replies = assert_each_turn_has_gits_snapshot(project, project.path, path, oracle_log)
    prompt_entry = next(e for e in path if reply_text(e) == prompts[0])
    start = convgit_json(project.path, "show", prompt_entry["id"])["snapshot"]
    assert "notes.txt" not in project.tree_paths(start["tree"])
    assert convgit_json(project.path, "status")["files"]["changed"] == []

    # resume at the first reply: a chat file of that path, which the model is sent, no more
    before = project.digest()
    resumed = convgit_json(project.path, "resume", replies[0]["id"])
    assert resumed["agent"] == "qwen" and resumed["written"] is True
    new = resumed["agent_session_id"]
    assert Path(resumed["path"]) == first.transcript.parent / f"{new}.jsonl"
    assert resumed["command"] == f"qwen --resume {new}"
    assert project.digest() == before, "resume without --restore changed files"
    model_server.expect(say("Back at the first reply."))
    again = qwen.run("Start over from here", resume=new)
    sent = model_server.scripted[-1]
    assert sent.body is not None
    assert typed(sent.body) == ["Write notes.txt", "Start over from here"]
    assert sent.replies() == [THREE_REPLIES[0]]
    assert [c.name for c in sent.calls()] == ["write_file"]
    assert [r.call_id for r in sent.results()] == [c.call_id for c in sent.calls()]
    assert again.output == "Back at the first reply." and again.transcript == Path(resumed["path"])

    # its turn is a branch below the first reply, a sibling of the second prompt
    assert len(convgit_json(project.path, "sessions")["sessions"]) == 1
    tree = convgit_json(project.path, "tree")["entries"]
    by_id = {e["id"]: e for e in tree}
    users = {reply_text(e): e for e in tree if e.get("role") == "user"}
    assert users["Start over from here"]["parentId"] == replies[0]["id"]
    assert users[prompts[1]]["parentId"] == replies[0]["id"]
    assert by_id[replies[0]["id"]]["role"] == "assistant"
    assert said(project) == [prompts[0], THREE_REPLIES[0], "Start over from here",
                             "Back at the first reply."]  # fmt: skip
    assert project.digest() == before, "the resumed turn changed files"
    assert all("problem" not in line for line in hook_log(project)), hook_log(project)

    # Qwen rewrote the settings file at its start (its format, its `$version`): uninstall still
    # gives the user's own bytes back
    assert settings_path.read_bytes() != theirs
    convgit(project.path, "hooks", "uninstall", "qwen")
    assert settings_path.read_bytes() == theirs


def test_a_failing_hook_is_told_once_at_stop_and_the_next_turn_catches_up(
    model_server: ModelServer, qwen: Qwen, project: GitRepo
) -> None:
    convgit(project.path, "hooks", "install", "qwen")
    model_server.expect(say("One."), say("Two."), say("Three."))
    first = qwen.run("turn one")
    (sid,) = [s["id"] for s in convgit_json(project.path, "sessions")["sessions"]]

    # the store is locked past the hooks' wait: the turn's events fail, Qwen goes on and shows
    # the hook's message at Stop (print mode: on stderr), naming both failures, once
    qwen.output = "text"
    lock = project.path / ".git" / "convgit" / "locks"
    with locks.held(lock / f"agent-qwen-{first.session_id}.lock", 5):
        second = qwen.run("turn two", resume=first.session_id, check=False)
    assert (second.returncode, second.output) == (0, "Two.")
    told = [line for line in second.stderr.splitlines() if "convgit" in line]
    assert len(told) == 1 and "2 convgit hook events failed, the last at Stop" in told[0]
    failed = [line for line in hook_log(project) if "problem" in line]
    assert [line.split()[2] for line in failed] == ["UserPromptSubmit", "Stop"]
    assert all("lock" in line for line in failed)
    assert "Two." not in said(project)

    # the next turn succeeds: the failures are gone, turn two came in with it, nothing is told
    third = qwen.run("turn three", resume=first.session_id, check=False)
    assert (third.returncode, third.output) == (0, "Three.")
    assert "convgit" not in third.stderr
    assert convgit_json(project.path, "status")["hook_failures"] == []
    assert said(project) == ["turn one", "One.", "turn two", "Two.", "turn three", "Three."]
    leaf = convgit_json(project.path, "log")["entries"][-1]
    assert convgit_json(project.path, "show", leaf["id"])["snapshot"]["tree"] == project.oracle()
    assert [s["id"] for s in convgit_json(project.path, "sessions")["sessions"]] == [sid]
    sent = json.dumps([r.body for r in model_server.requests])
    assert "convgit" not in sent.replace(str(project.path), "")


def test_a_turn_qwen_was_killed_in_is_caught_up_by_the_next(
    model_server: ModelServer, qwen: Qwen, project: GitRepo, tmp_path: Path
) -> None:
    """Qwen killed while its reply runs a tool never reaches Stop: the next prompt imports what
    the killed turn wrote, closes it (its reply gets the files as they are then) and opens its
    own."""
    convgit(project.path, "hooks", "install", "qwen")
    go = tmp_path / "go"
    waits = f"echo a > a.txt; while [ ! -f {go} ]; do sleep 0.05; done"
    model_server.expect(call("run_shell_command", {"command": waits}))
    killed = subprocess.Popen(
        qwen.command("turn one", [], None),
        cwd=project.path,
        env=qwen.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    chats = qwen.chats(project.path.resolve())

    def running() -> bool:  # the tool runs, and Qwen wrote the call
        written = b"".join(p.read_bytes() for p in chats.glob("*.jsonl"))
        return (project.path / "a.txt").exists() and b'"functionCall"' in written

    try:
        wait_until(running, "the shell tool to run")
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait(timeout=30)
    finally:
        go.write_text("")  # the tool's shell, in a session of its own, ends too
        if killed.poll() is None:
            os.killpg(killed.pid, signal.SIGKILL)
            killed.wait()
    (chat,) = chats.glob("*.jsonl")
    when_killed = project.oracle()

    model_server.expect(say("Two."))
    assert qwen.run("turn two", resume=chat.stem).output == "Two."
    path = convgit_json(project.path, "log")["entries"]
    messages = [e for e in path if e["type"] == "message"]
    assert reply_text(messages[0]) == "turn one"
    assert [c["name"] for c in calls_of(messages[1])] == ["run_shell_command"]
    assert [reply_text(e) for e in messages[-2:]] == ["turn two", "Two."]
    log = hook_log(project)
    assert all("problem" not in line for line in log), log
    opened = [line for line in log if "UserPromptSubmit" in line and "turn open" in line]
    assert "turn interrupted" in opened[-1]
    shown = convgit_json(project.path, "show", messages[1]["id"])
    assert shown["snapshot"]["tree"] == when_killed  # the killed turn's files, a.txt in them
    assert "a.txt" in project.tree_paths(when_killed)
    last = convgit_json(project.path, "show", messages[-1]["id"])
    assert last["snapshot"]["tree"] == project.oracle()
