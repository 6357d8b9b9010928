"""convgit live beside the real pi CLI, its extension installed by `convgit hooks install pi`:
every prompt, reply and tool call lands in the tree as pi's session has it, each turn's
snapshot is what `git add -A` stages at its end (a bash edit included), a reply resumed with
`convgit resume` continues as a branch below it, the files change only when restored, and a
hook that fails never changes what pi does. The user's git state is guarded by `project`."""

from __future__ import annotations

import json
import shlex
import sys
import threading
import time
from pathlib import Path
from typing import Any

from convgit.base import locks
from tests.agents.hooked import (
    ORACLE,
    assert_each_turn_has_gits_snapshot,
    calls_of,
    convgit,
    convgit_json,
    hook_log,
    path_messages,
    records,
    reply_text,
)
from tests.agents.runners import Pi
from tests.agents.script import call, say
from tests.agents.server import ModelServer
from tests.polling import wait_until
from tests.workspace.gitrepo import GitRepo

# An extension of the user's own: git's answer to `git add -A` at each agent_end, logged.
ORACLE_EXTENSION = """
import { spawnSync } from "node:child_process";
export default function (pi: any) {
  pi.on("agent_end", async (event: any, ctx: any) => {
    const last = [...event.messages].reverse().find((m: any) => m.role === "assistant");
    const blocks = last ? last.content.filter((b: any) => b.type === "text") : [];
    const text = blocks.map((b: any) => b.text).join("");
    const input = JSON.stringify({ last_assistant_message: text, cwd: ctx.cwd });
    spawnSync("sh", ["-c", COMMAND], { input });
  });
}
"""


def user_extension(project: Path, log: Path) -> Path:
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(ORACLE)} {shlex.quote(str(log))}"
    path = project / ".pi" / "extensions" / "oracle.ts"
    path.parent.mkdir(parents=True)
    path.write_text(f"const COMMAND = {json.dumps(command)};\n{ORACLE_EXTENSION}")
    return path


def pi_messages(path: Path) -> list[tuple[str, str]]:
    """The conversation as pi's session file holds it: (role, text | call id | result id)."""
    found = []
    for line in records(path):
        message = line.get("message")
        if line.get("type") != "message" or not isinstance(message, dict):
            continue
        if message["role"] == "toolResult":
            found.append(("result", message["toolCallId"]))
            continue
        content = message["content"]
        if isinstance(content, str):
            found.append((message["role"], content))
            continue
        for block in content:
            if block["type"] == "text" and block["text"]:
                found.append((message["role"], block["text"]))
            elif block["type"] == "toolCall":
                found.append(("call", block["id"]))
    return found


def test_three_turns_are_recorded_snapshotted_and_a_resumed_reply_continues_as_a_branch(
    model_server: ModelServer, pi: Pi, project: GitRepo, tmp_path: Path
) -> None:
    oracle_log = tmp_path / "oracle.jsonl"
    theirs = user_extension(project.path, oracle_log)
    mine = theirs.read_bytes()
    installed = convgit(project.path, "hooks", "install", "pi")
    assert "installed convgit's hooks" in installed
    ours = project.path / ".pi" / "extensions" / "convgit.ts"
    assert ours.is_file() and theirs.read_bytes() == mine
    assert "installed" in convgit(project.path, "hooks", "status")

    model_server.expect(
        call("write", {"path": "notes.txt", "content": "one\n"}),
        say("I wrote notes.txt."),
        call("edit", {"path": "notes.txt", "edits": [{"oldText": "one", "newText": "two"}]}),
        say("I edited notes.txt."),
        call("bash", {"command": "echo three > made-by-bash.txt && rm README.md"}),
        say("I ran the command."),
    )
    prompts = ["Write notes.txt", "Edit notes.txt", "Run the command"]
    first = pi.run(prompts[0])
    assert first.transcript is not None
    for prompt in prompts[1:]:
        pi.run(prompt, resume=first.transcript)
    assert (project.path / "made-by-bash.txt").read_text() == "three\n"
    assert all("problem" not in line for line in hook_log(project))

    # one convgit session for the pi session, its tree pi's conversation
    (found,) = convgit_json(project.path, "sessions")["sessions"]
    assert found["agent"] == "pi" and found["agent_session_id"] == first.session_id
    path = convgit_json(project.path, "log")["entries"]
    assert path_messages(path) == pi_messages(first.transcript)
    users = [reply_text(e) for e in path if e["type"] == "message" and e["role"] == "user"]
    assert users == prompts
    messages = [e for e in path if e["type"] == "message"]
    calls = [(p["name"], p["id"]) for e in messages for p in calls_of(e)]
    assert [name for name, _ in calls] == ["write", "edit", "bash"]
    pi_ids = {line["id"] for line in records(first.transcript) if line.get("type") == "message"}
    assert pi_ids <= {e["id"] for e in path}  # entries are pi's own ids

    # each turn's reply has the snapshot git stages at that turn's end (the bash edit too)
    replies = assert_each_turn_has_gits_snapshot(project, project.path, path, oracle_log)
    start = convgit_json(project.path, "show", messages[0]["id"])["snapshot"]
    assert "notes.txt" not in project.tree_paths(start["tree"])  # the files before pi wrote

    # resume at the first reply: pi is sent that turn and nothing after it
    before = project.digest()
    resumed = convgit_json(project.path, "resume", replies[0]["id"])
    assert resumed["agent"] == "pi" and resumed["command"] == f"pi --session {resumed['path']}"
    assert project.digest() == before, "resume without --restore changed files"
    model_server.expect(say("Back at the first reply."))
    again = pi.run("Start over from here", resume=Path(resumed["path"]))
    assert again.output == "Back at the first reply."
    sent = model_server.scripted[-1]
    assert sent.prompts() == ["Write notes.txt", "Start over from here"]
    assert sent.replies() == ["I wrote notes.txt."]
    assert [c.name for c in sent.calls()] == ["write"]

    # the hooks alone recorded its turn: a sibling branch of the second prompt, same session
    assert len(convgit_json(project.path, "sessions")["sessions"]) == 1
    tree = {e["id"]: e for e in convgit_json(project.path, "tree")["entries"]}
    user_entries = [e for e in tree.values() if e.get("role") == "user"]
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
    assert project.oracle() == records(oracle_log)[0]["tree"]
    convgit(project.path, "restore", "--undo", "--yes")
    assert project.digest() == before

    # uninstall takes convgit's extension out, and nothing else
    convgit(project.path, "hooks", "uninstall", "pi")
    assert not ours.exists() and theirs.read_bytes() == mine


def test_a_failing_hook_leaves_pi_as_it_was_and_the_next_turn_catches_up(
    model_server: ModelServer, pi: Pi, project: GitRepo
) -> None:
    convgit(project.path, "hooks", "install", "pi")
    model_server.expect(say("One."), say("Two."), say("Three."))
    first = pi.run("turn one")
    assert first.transcript is not None and first.stderr == ""
    assert convgit_json(project.path, "status")["hook_failures"] == []

    # the store is locked past the hooks' wait: every event of the turn fails, pi goes on
    lock = project.path / ".git" / "convgit" / "locks" / f"agent-pi-{first.session_id}.lock"
    with locks.held(lock, 5):
        second = pi.run("turn two", resume=first.transcript)
    assert second.returncode == 0 and second.output == "Two."
    assert [json.loads(line)["type"] for line in second.stdout.splitlines()] == [
        json.loads(line)["type"] for line in first.stdout.splitlines()
    ]
    told = second.stderr.splitlines()  # print mode: pi's stderr is where the user looks
    assert [line.split()[3] for line in told] == ["UserPromptSubmit", "Stop"]
    assert all(line.startswith("convgit's hook at") and "lock" in line for line in told)
    failures = convgit_json(project.path, "status")["hook_failures"]
    assert [(f["agent"], f["event"]) for f in failures] == [
        ("pi", "UserPromptSubmit"),
        ("pi", "Stop"),
    ]
    logged = convgit_json(project.path, "log")["entries"]
    assert "Two." not in [reply_text(e) for e in logged if e["type"] == "message"]

    # the next turn succeeds: the failures are gone, turn two came in with it
    third = pi.run("turn three", resume=first.transcript)
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


def test_a_hook_killed_midway_loses_nothing_and_the_next_turn_catches_up(
    model_server: ModelServer, pi: Pi, project: GitRepo
) -> None:
    """Each hook process of a turn is killed (SIGKILL) halfway through its first append to
    the store, a torn line left behind; pi goes on, and the next turn's hooks record both
    turns whole: the torn lines set aside, nothing lost, fsck clean."""
    convgit(project.path, "hooks", "install", "pi")
    model_server.expect(say("One."), say("Two."), say("Three."))
    first = pi.run("turn one")
    assert first.transcript is not None
    sessions = project.path / ".git" / "convgit" / "sessions"
    (session_file,) = [p for p in sessions.glob("*.jsonl") if p.stem.isalnum()]

    second = pi.run("turn two", resume=first.transcript, env={"CONVGIT_FAULT": "append:torn"})
    assert second.returncode == 0 and second.output == "Two."
    assert not session_file.read_bytes().endswith(b"\n")  # the Stop hook died mid-line
    logged = convgit_json(project.path, "log")["entries"]
    assert "Two." not in [reply_text(e) for e in logged if e["type"] == "message"]

    third = pi.run("turn three", resume=first.transcript)
    assert third.output == "Three."
    path = convgit_json(project.path, "log")["entries"]
    assert [reply_text(e) for e in path if e["type"] == "message"] == [
        "turn one", "One.", "turn two", "Two.", "turn three", "Three.",
    ]  # fmt: skip
    assert convgit_json(project.path, "fsck")["ok"]
    assert session_file.read_bytes().endswith(b"\n")  # the torn line set aside, quarantined
    assert convgit_json(project.path, "show", path[-1]["id"])["snapshot"]["tree"] == (
        project.oracle()
    )
    assert all("problem" not in line for line in hook_log(project))


def test_a_turn_lost_to_a_slow_gcs_lock_never_gives_its_files_to_a_prompt(
    model_server: ModelServer, pi: Pi, project: GitRepo
) -> None:
    """A gc holds every session's locks for the whole of turn two, whose events time out on
    them. pi's entries name no prompt, so the files the next prompt found (turn two's work)
    were recorded as turn two's prompt snapshot, its reply getting none: restoring that prompt
    brought back a file written after it. They are the reply's, caught up at the next prompt."""
    from convgit.store.location import locate
    from convgit.upkeep import collecting

    convgit(project.path, "hooks", "install", "pi")
    made = project.path / "b.txt"
    model_server.expect(
        say("One."),
        call("write", {"path": "b.txt", "content": "bee\n"}),
        say("Wrote b."),
        say("Three."),
    )
    first = pi.run("turn one")
    assert first.transcript is not None

    def slow_gc() -> None:  # gc's own locks, held as long as a gc over a big store takes
        with collecting._locked(locate(project.path)):
            wait_until(made.exists, "turn two's file")
            time.sleep(4)  # past turn two's end, which waits 2 s

    gc = threading.Thread(target=slow_gc)
    gc.start()
    pi.run("turn two", resume=first.transcript)
    gc.join()
    pi.run("turn three", resume=first.transcript)

    path = convgit_json(project.path, "log")["entries"]

    def files_of(text: str) -> dict[str, str]:
        (entry,) = [e for e in path if e["type"] == "message" and reply_text(e) == text]
        snapshot = convgit_json(project.path, "show", entry["id"])["snapshot"]
        return {} if snapshot is None else project.tree_paths(snapshot["tree"])

    assert "b.txt" in files_of("Wrote b.")
    assert "b.txt" not in files_of("turn two") and "b.txt" not in files_of("turn three")
    assert convgit_json(project.path, "status")["hook_failures"] == []


def test_two_sessions_at_once_each_record_their_own_turn(
    model_server: ModelServer, pi: Pi, project: GitRepo
) -> None:
    """Two pi sessions run their turns at the same moment in one checkout, their hooks racing
    for the store: each turn lands whole in its own convgit session, no hook fails, fsck is
    clean."""
    convgit(project.path, "hooks", "install", "pi")
    model_server.expect(say("A."), say("B."))
    runs: dict[str, Any] = {}

    def turn(prompt: str) -> None:
        runs[prompt] = pi.run(prompt)

    threads = [threading.Thread(target=turn, args=(p,)) for p in ("left turn", "right turn")]
    for thread in threads:
        thread.start()
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
