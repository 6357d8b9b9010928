"""convgit live beside the real OpenCode CLI, its plugin installed by `convgit hooks install
opencode`: every prompt, reply and tool call lands in the tree as OpenCode's session has it,
each turn's snapshot is what `git add -A` stages at its end (a bash edit included), a reply
resumed with `convgit resume` continues as a branch below it, the files change only when
restored, and a hook that fails never changes what OpenCode does. The user's git state is
guarded by `project`."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from convgit.base import locks
from tests.agents.hooked import (
    ORACLE,
    THREE_REPLIES,
    assert_each_turn_has_gits_snapshot,
    calls_of,
    convgit,
    convgit_json,
    hook_log,
    path_messages,
    reply_text,
)
from tests.agents.runners import OpenCode
from tests.agents.script import call, say
from tests.agents.server import ModelServer
from tests.polling import wait_until
from tests.workspace.gitrepo import GitRepo

# A plugin of the user's own: git's answer to `git add -A` at each session.idle, logged with
# the turn's last text (the last text part OpenCode finished).
ORACLE_PLUGIN = """
import { spawnSync } from "node:child_process"
export const Oracle = async ({ directory }) => {
  let last = null
  return {
    event: async ({ event }) => {
      const part = event.properties?.part
      if (event.type === "message.part.updated" && part?.type === "text" && part.time?.end) {
        last = part.text
      }
      if (event.type !== "session.idle") return
      const input = JSON.stringify({ last_assistant_message: last, cwd: directory })
      spawnSync("sh", ["-c", COMMAND], { input })
    },
  }
}
"""


def user_plugin(project: Path, log: Path) -> Path:
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(ORACLE)} {shlex.quote(str(log))}"
    path = project / ".opencode" / "plugins" / "oracle.js"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"const COMMAND = {json.dumps(command)}\n{ORACLE_PLUGIN}")
    return path


def opencode_messages(db: Path, session: str) -> list[tuple[str, str]]:
    """The conversation as OpenCode's database holds it: (role, text | call id | result id)."""
    found: list[tuple[str, str]] = []
    with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as connection:
        messages = connection.execute(
            "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id",
            (session,),
        ).fetchall()
        for ident, data in messages:
            role = json.loads(data)["role"]
            parts = connection.execute(
                "SELECT data FROM part WHERE message_id = ? ORDER BY id", (ident,)
            ).fetchall()
            results = []
            for (text,) in parts:
                part = json.loads(text)
                if part["type"] == "text" and part["text"]:
                    found.append((role, part["text"]))
                elif part["type"] == "tool":
                    found.append(("call", part["callID"]))
                    results.append(("result", part["callID"]))
            found += results
    return found


def opencode_import(opencode: OpenCode, path: Path) -> str:
    """`opencode import FILE` in the project, as the command `convgit resume` printed says."""
    done = subprocess.run(
        [*opencode.binary(), "import", str(path)],
        cwd=opencode.cwd,
        env=opencode.env({"PWD": str(opencode.cwd)}),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout + done.stderr


def test_three_turns_are_recorded_snapshotted_and_a_resumed_reply_continues_as_a_branch(
    model_server: ModelServer, opencode: OpenCode, project: GitRepo, tmp_path: Path
) -> None:
    oracle_log = tmp_path / "oracle.jsonl"
    theirs = user_plugin(project.path, oracle_log)
    mine = theirs.read_bytes()
    installed = convgit(project.path, "hooks", "install", "opencode")
    assert "installed convgit's hooks" in installed
    ours = project.path / ".opencode" / "plugins" / "convgit.js"
    assert ours.is_file() and theirs.read_bytes() == mine
    assert "installed" in convgit(project.path, "hooks", "status")

    model_server.expect(
        call("write", {"filePath": "notes.txt", "content": "one\n"}),
        say("I wrote notes.txt."),
        call("edit", {"filePath": "notes.txt", "oldString": "one", "newString": "two"}),
        say("I edited notes.txt."),
        call("bash", {"command": "echo three > made-by-bash.txt && rm README.md"}),
        say("I ran the command."),
    )
    prompts = ["Write notes.txt", "Edit notes.txt", "Run the command"]
    first = opencode.run(prompts[0])
    for prompt in prompts[1:]:
        opencode.run(prompt, resume=first.session_id)
    assert (project.path / "notes.txt").read_text() == "two\n"
    assert (project.path / "made-by-bash.txt").read_text() == "three\n"
    assert all("problem" not in line for line in hook_log(project))

    # one convgit session for the OpenCode session, its tree OpenCode's conversation
    (found,) = convgit_json(project.path, "sessions")["sessions"]
    assert found["agent"] == "opencode" and found["agent_session_id"] == first.session_id
    path = convgit_json(project.path, "log")["entries"]
    assert path_messages(path) == opencode_messages(opencode.database, first.session_id)
    users = [reply_text(e) for e in path if e["type"] == "message" and e["role"] == "user"]
    assert users == prompts
    messages = [e for e in path if e["type"] == "message"]
    calls = [p["name"] for e in messages for p in calls_of(e)]
    assert calls == ["write", "edit", "bash"]

    # each turn's reply has the snapshot git stages at that turn's end (the bash edit too)
    replies = assert_each_turn_has_gits_snapshot(project, project.path, path, oracle_log)
    assert [reply_text(r) for r in replies] == THREE_REPLIES
    oracle = [json.loads(line) for line in oracle_log.read_text().splitlines()]
    start = convgit_json(project.path, "show", messages[0]["id"])["snapshot"]
    assert "notes.txt" not in project.tree_paths(start["tree"])  # the files before it wrote

    # resume at the first reply: OpenCode is sent that turn and nothing after it
    before = project.digest()
    resumed = convgit_json(project.path, "resume", replies[0]["id"])
    new = resumed["agent_session_id"]
    assert resumed["agent"] == "opencode"
    assert resumed["command"] == f"opencode import {resumed['path']} && opencode --session {new}"
    assert project.digest() == before, "resume without --restore changed files"
    assert f"Imported session: {new}" in opencode_import(opencode, Path(resumed["path"]))
    model_server.expect(say("Back at the first reply."))
    again = opencode.run("Start over from here", resume=new)
    assert again.output == "Back at the first reply."
    sent = model_server.scripted[-1]
    assert sent.prompts() == ["Write notes.txt", "Start over from here"]
    assert sent.replies() == ["I wrote notes.txt."]
    assert [c.name for c in sent.calls()] == ["write"]

    # the hooks alone recorded its turn: a sibling branch of the second prompt, same session
    assert len(convgit_json(project.path, "sessions")["sessions"]) == 1
    tree = {e["id"]: e for e in convgit_json(project.path, "tree")["entries"]}
    user_entries = [e for e in tree.values() if e.get("role") == "user"]
    assert len(user_entries) == 4  # the copied prompt is the first one's entry
    new_prompt = next(e for e in user_entries if reply_text(e) == "Start over from here")
    second = next(e for e in user_entries if reply_text(e) == "Edit notes.txt")
    assert new_prompt["parentId"] == second["parentId"] == replies[0]["id"]
    log = convgit_json(project.path, "log")["entries"]
    assert reply_text(log[-1]) == "Back at the first reply."
    assert project.digest() == before, "the resumed turn changed files"
    assert convgit_json(project.path, "show", log[-1]["id"])["snapshot"]["tree"] == (
        project.oracle()
    )

    # restore brings the first reply's files back (saved first, undoable)
    convgit(project.path, "restore", replies[0]["id"], "--yes")
    assert project.oracle() == oracle[0]["tree"]
    convgit(project.path, "restore", "--undo", "--yes")
    assert project.digest() == before

    # uninstall takes convgit's plugin out, and nothing else
    convgit(project.path, "hooks", "uninstall", "opencode")
    assert not ours.exists() and theirs.read_bytes() == mine


def test_a_failing_hook_leaves_opencode_as_it_was_and_the_next_turn_catches_up(
    model_server: ModelServer, opencode: OpenCode, project: GitRepo
) -> None:
    convgit(project.path, "hooks", "install", "opencode")
    model_server.expect(say("One."), say("Two."), say("Three."))
    first = opencode.run("turn one")
    assert first.output == "One." and first.stderr == ""
    assert convgit_json(project.path, "status")["hook_failures"] == []

    # the store is locked past the hooks' wait: every event of the turn fails, OpenCode goes on
    name = f"agent-opencode-{first.session_id}.lock"
    with locks.held(project.path / ".git" / "convgit" / "locks" / name, 5):
        second = opencode.run("turn two", resume=first.session_id)
    assert second.returncode == 0 and second.output == "Two."
    assert [json.loads(line)["type"] for line in second.stdout.splitlines()] == [
        json.loads(line)["type"] for line in first.stdout.splitlines()
    ]
    told = second.stderr.splitlines()  # `opencode run`: stderr is where the user looks
    assert [line.split()[3] for line in told] == ["chat.message", "session.idle"]
    assert all(line.startswith("convgit's hook at") and "lock" in line for line in told)
    failures = convgit_json(project.path, "status")["hook_failures"]
    assert [(f["agent"], f["event"]) for f in failures] == [
        ("opencode", "chat.message"),
        ("opencode", "session.idle"),
    ]

    # the next turn succeeds: the failures are gone, turn two came in with it
    third = opencode.run("turn three", resume=first.session_id)
    assert third.output == "Three." and third.stderr == ""  # told once already
    assert convgit_json(project.path, "status")["hook_failures"] == []
    path = convgit_json(project.path, "log")["entries"]
    assert [reply_text(e) for e in path if e["type"] == "message"] == [
        "turn one",
        "One.",
        "turn two",
        "Two.",
        "turn three",
        "Three.",
    ]
    assert convgit_json(project.path, "show", path[-1]["id"])["snapshot"]["tree"] == (
        project.oracle()
    )


def test_a_subagents_session_is_no_session_of_its_own_and_its_edits_are_the_turns(
    model_server: ModelServer, opencode: OpenCode, project: GitRepo
) -> None:
    convgit(project.path, "hooks", "install", "opencode")
    task = {"description": "make a file", "prompt": "Write sub.txt", "subagent_type": "general"}
    model_server.expect(
        call("task", task),
        call("write", {"filePath": "sub.txt", "content": "sub\n"}),  # the subagent's session
        say("Subagent done."),
        say("Main done."),
    )
    done = opencode.run("Delegate it")
    assert done.output == "Main done." and (project.path / "sub.txt").read_text() == "sub\n"
    assert all("problem" not in line for line in hook_log(project))
    (found,) = convgit_json(project.path, "sessions")["sessions"]
    assert found["agent_session_id"] == done.session_id
    path = convgit_json(project.path, "log")["entries"]
    assert [c["name"] for e in path if e["type"] == "message" for c in calls_of(e)] == ["task"]
    assert reply_text(path[-1]) == "Main done."
    shown = convgit_json(project.path, "show", path[-1]["id"])
    assert shown["snapshot"]["tree"] == project.oracle()
    assert "sub.txt" in project.tree_paths(shown["snapshot"]["tree"])


def test_a_reply_killed_midway_is_imported_as_interrupted_and_the_next_turn_comes_in(
    model_server: ModelServer, opencode: OpenCode, project: GitRepo, tmp_path: Path
) -> None:
    """OpenCode killed while its reply runs a tool leaves that message unfinished in its
    database for good; once a later reply finishes, it is imported as interrupted (as OpenCode
    itself sends it to the model again) and the later turn comes in."""
    convgit(project.path, "hooks", "install", "opencode")
    go = tmp_path / "go"
    waits = f"echo a > a.txt; while [ ! -f {go} ]; do sleep 0.05; done"
    model_server.expect(call("bash", {"command": waits, "description": "wait"}))
    killed = subprocess.Popen(
        opencode.command("turn one", [], None),
        cwd=project.path,
        env=opencode.env({"PWD": str(project.path)}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until(lambda: (project.path / "a.txt").exists(), "the bash tool to run")
        os.killpg(killed.pid, signal.SIGKILL)
        out, _ = killed.communicate(timeout=30)
    finally:
        go.write_text("")  # the tool's shell, in a session of its own, ends too
        if killed.poll() is None:
            os.killpg(killed.pid, signal.SIGKILL)
            killed.wait()
    (session,) = {json.loads(line)["sessionID"] for line in out.decode().splitlines()}

    model_server.expect(say("Two."))
    assert opencode.run("turn two", resume=session).output == "Two."
    sent = model_server.scripted[-1]
    assert [c.name for c in sent.calls()] == ["bash"]  # OpenCode goes on from that reply

    path = convgit_json(project.path, "log")["entries"]
    kinds = [e.get("role") or e.get("kind") for e in path]
    assert kinds == ["user", "assistant", "opencode.interrupted", "user", "assistant"]
    assert [reply_text(path[n]) for n in (0, 3, 4)] == ["turn one", "turn two", "Two."]
    assert [c["name"] for c in calls_of(path[1])] == ["bash"]
    log = hook_log(project)
    assert all("problem" not in line for line in log), log
    assert "imported as interrupted" in log[-1]
    shown = convgit_json(project.path, "show", path[-1]["id"])
    assert shown["snapshot"]["tree"] == project.oracle()


def test_a_hook_killed_midway_loses_nothing_and_the_next_turn_catches_up(
    model_server: ModelServer, opencode: OpenCode, project: GitRepo
) -> None:
    """Each hook process of a turn is killed (SIGKILL) halfway through its first append to
    the store, a torn line left behind; OpenCode goes on, and the next turn's hooks record both
    turns whole: the torn line set aside, nothing lost, fsck clean."""
    convgit(project.path, "hooks", "install", "opencode")
    model_server.expect(say("One."), say("Two."), say("Three."))
    first = opencode.run("turn one")
    sessions = project.path / ".git" / "convgit" / "sessions"
    (session_file,) = [p for p in sessions.glob("*.jsonl") if p.stem.isalnum()]

    second = opencode.run("turn two", resume=first.session_id, env={"CONVGIT_FAULT": "append:torn"})
    assert second.returncode == 0 and second.output == "Two."
    assert not session_file.read_bytes().endswith(b"\n")  # a hook died mid-line
    logged = convgit_json(project.path, "log")["entries"]
    assert "Two." not in [reply_text(e) for e in logged if e["type"] == "message"]

    third = opencode.run("turn three", resume=first.session_id)
    assert third.output == "Three."
    path = convgit_json(project.path, "log")["entries"]
    said = [reply_text(e) for e in path if e["type"] == "message"]
    assert said == ["turn one", "One.", "turn two", "Two.", "turn three", "Three."]
    assert convgit_json(project.path, "fsck")["ok"]
    assert session_file.read_bytes().endswith(b"\n")  # the torn line set aside
    assert convgit_json(project.path, "show", path[-1]["id"])["snapshot"]["tree"] == (
        project.oracle()
    )


def test_two_sessions_at_once_each_record_their_own_turn(
    model_server: ModelServer, opencode: OpenCode, project: GitRepo
) -> None:
    """Two OpenCode sessions run their turns at the same moment in one checkout, their hooks
    racing for the store: each turn lands whole in its own convgit session, no hook fails,
    fsck is clean."""
    convgit(project.path, "hooks", "install", "opencode")
    model_server.expect(say("A."), say("B."))
    runs: dict[str, Any] = {}

    def turn(prompt: str) -> None:
        runs[prompt] = opencode.run(prompt)

    threads = [threading.Thread(target=turn, args=(p,)) for p in ("left turn", "right turn")]
    # the second starts once the first is past its start: two OpenCode processes starting at
    # once in a fresh home, the second exits with OpenCode's own "Unexpected error" before it
    # asks the model anything; from then on their turns and hooks run at the same moment
    threads[0].start()
    wait_until(lambda: model_server.requests, "the first OpenCode to ask the model")
    threads[1].start()
    for thread in threads:
        thread.join()
    assert {run.output for run in runs.values()} == {"A.", "B."}
    found = convgit_json(project.path, "sessions")["sessions"]
    assert sorted(s["agent_session_id"] for s in found) == sorted(
        run.session_id for run in runs.values()
    )
    for prompt, run in runs.items():
        (sid,) = [s["id"] for s in found if s["agent_session_id"] == run.session_id]
        path = convgit_json(project.path, "-s", sid, "log")["entries"]
        assert [reply_text(e) for e in path if e["type"] == "message"] == [prompt, run.output]
    assert all("problem" not in line for line in hook_log(project)), hook_log(project)
    assert convgit_json(project.path, "status")["hook_failures"] == []
    assert convgit_json(project.path, "fsck")["ok"]
