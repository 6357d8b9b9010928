"""convgit live beside the real GitHub Copilot CLI, its hooks installed by `convgit hooks install
copilot` (``.github/hooks/convgit.json``, kept out of git): every prompt, reply and tool call
lands in the tree, each turn's snapshot is what `git add -A` stages at its agentStop (a shell
edit included), a resume at an earlier reply sends the model exactly that path, a turn the CLI
was killed in is caught up by the next, and a hook that fails is told once, as the CLI's own
warning, never to the model. The user's git state is guarded by `project`."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from convgit.base import locks
from tests.agents.hooked import (
    ROOT,
    THREE_REPLIES,
    assert_each_turn_has_gits_snapshot,
    calls_of,
    convgit,
    convgit_json,
    hook_log,
    path_messages,
    records,
    reply_text,
)
from tests.agents.runners import Copilot
from tests.agents.script import call, say
from tests.agents.server import ModelServer
from tests.polling import wait_until
from tests.workspace.gitrepo import GitRepo

# A hook of the user's own, in a hooks file of its own: git's answer to `git add -A` at the
# turn's end, logged with the reply the events file ends with (once the CLI has written it).
ORACLE = f"""
import json, sys
sys.path.insert(0, {str(ROOT)!r})
from pathlib import Path
from tests.workspace.gitrepo import oracle_tree
import time
event = json.load(sys.stdin)
# the CLI writes the file behind its hooks (a new session's file may not be there yet): wait for
# this hook's start after the last prompt
ours = b'"timestamp":%d,' % event["timestamp"]
transcript = Path(event["transcriptPath"])
for _ in range(1000):  # 20 s at most (its timeout is 30): a loaded machine writes it late
    lines = transcript.read_bytes().splitlines() if transcript.exists() else []
    if any(ours in line for line in lines if b'"hookType":"agentStop"' in line):
        break
    time.sleep(0.02)
said = [json.loads(line) for line in open(event["transcriptPath"])]
replies = [e["data"]["content"] for e in said if e["type"] == "assistant.message"]
with open(sys.argv[1], "a") as log:
    log.write(json.dumps({{"reply": replies[-1], "tree": oracle_tree(Path(event["cwd"]))}}) + "\\n")
"""
# the CLI puts the time in front of each prompt it sends
_NOW = re.compile(r"<current_datetime>[^<]*</current_datetime>\n\n")


def user_hooks(project: Path, log: Path) -> bytes:
    """The user's own hooks file, in the CLI's documented shape; its bytes."""
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(ORACLE)} {shlex.quote(str(log))}"
    hooks = {"agentStop": [{"type": "command", "bash": command, "timeoutSec": 30}]}
    path = project / ".github" / "hooks" / "oracle.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": 1, "hooks": hooks}, indent=2) + "\n")
    return path.read_bytes()


def session_messages(events: Path) -> list[tuple[str, str]]:
    """The conversation as the CLI's events file holds it: (role, text | call id | result's
    call id), in order."""
    found: list[tuple[str, str]] = []
    for event in records(events):
        data = event["data"]
        if event["type"] == "user.message":
            found.append(("user", data["content"]))
        elif event["type"] == "assistant.message":
            if data["content"]:
                found.append(("assistant", data["content"]))
            found += [("call", r["toolCallId"]) for r in data.get("toolRequests") or []]
        elif event["type"] == "tool.execution_complete":
            found.append(("result", data["toolCallId"]))
    return found


def sent_prompts(items: list[Any]) -> list[str]:
    """The user's texts a request carried, without the time the CLI puts in front."""
    return [_NOW.sub("", i.text) for i in items if i.kind in ("prompt", "context")]


def warnings(run_stdout: str) -> list[str]:
    """The warnings the CLI showed the user (``session.warning`` events of its output)."""
    found = []
    for line in run_stdout.splitlines():
        with_data = json.loads(line) if line.startswith("{") else {}
        if with_data.get("type") == "session.warning":
            found.append(str(with_data["data"]["message"]))
    return found


def said(project: GitRepo) -> list[str]:
    path = convgit_json(project.path, "log")["entries"]
    texts = [reply_text(e) for e in path if e.get("role") in ("user", "assistant")]
    return [t for t in texts if t]


def test_three_turns_are_recorded_snapshotted_and_a_resumed_reply_continues_as_a_branch(
    model_server: ModelServer, copilot: Copilot, project: GitRepo, tmp_path: Path
) -> None:
    oracle_log = tmp_path / "oracle.jsonl"
    theirs = user_hooks(project.path, oracle_log)
    exclude = project.path / ".git" / "info" / "exclude"
    excluded = exclude.read_bytes()
    installed = convgit(project.path, "hooks", "install", "copilot")
    assert "installed convgit's hooks in .github/hooks/convgit.json" in installed
    assert "added /.github/hooks/convgit.json to .git/info/exclude" in installed
    untracked = project.git("status", "--porcelain", "--untracked-files=all").splitlines()
    assert untracked == ["?? .github/hooks/oracle.json"]  # convgit's file is no litter
    status = convgit_json(project.path, "hooks", "status", "copilot")["agents"]["copilot"]
    assert [(s["scope"], s["state"], s["problem"]) for s in status] == [
        ("project", "installed", None),
        ("user", "not installed", None),
    ]

    notes = str(project.path / "notes.txt")
    model_server.expect(
        call("create", {"path": notes, "file_text": "one\n"}),
        say(THREE_REPLIES[0]),
        call("edit", {"path": notes, "old_str": "one", "new_str": "two"}),
        say(THREE_REPLIES[1]),
        call("bash", {"command": "echo three > made-by-bash.txt && rm README.md"}),
        say(THREE_REPLIES[2]),
    )
    prompts = ["Write notes.txt", "Edit notes.txt", "Run the command"]
    first = copilot.run(prompts[0])
    for prompt in prompts[1:]:
        copilot.run(prompt, resume=first.session_id)
    assert first.transcript is not None
    assert (project.path / "notes.txt").read_text() == "two\n"
    assert (project.path / "made-by-bash.txt").read_text() == "three\n"
    assert all("problem" not in line for line in hook_log(project)), hook_log(project)

    # one convgit session for the CLI's session, its tree the events file's conversation
    (found,) = convgit_json(project.path, "sessions")["sessions"]
    assert found["agent"] == "copilot" and found["agent_session_id"] == first.session_id
    path = convgit_json(project.path, "log")["entries"]
    assert path_messages(path) == session_messages(first.transcript)
    calls = [c["name"] for e in path if e["type"] == "message" for c in calls_of(e)]
    assert calls == ["create", "edit", "bash"]
    replies = assert_each_turn_has_gits_snapshot(project, project.path, path, oracle_log)
    # the first prompt has the files as they were before the CLI touched them
    prompt_entry = next(e for e in path if reply_text(e) == prompts[0])
    start = convgit_json(project.path, "show", prompt_entry["id"])["snapshot"]
    assert "notes.txt" not in project.tree_paths(start["tree"])
    assert convgit_json(project.path, "status")["files"]["changed"] == []

    # resume at the first reply: a session of the CLI's holding that path, which the model is
    # sent and nothing more
    before = project.digest()
    resumed = convgit_json(project.path, "resume", replies[0]["id"])
    assert resumed["agent"] == "copilot" and resumed["written"] is True
    new = resumed["agent_session_id"]
    assert Path(resumed["path"]) == copilot.copilot_home / "session-state" / new / "events.jsonl"
    assert resumed["command"] == f"copilot --resume={new}"
    assert project.digest() == before, "resume without --restore changed files"
    model_server.expect(say("Back at the first reply."))
    again = copilot.run("Start over from here", resume=new)
    sent = model_server.scripted[-1]
    assert sent_prompts(sent.items()) == ["Write notes.txt", "Start over from here"]
    assert sent.replies() == [THREE_REPLIES[0]]
    assert [c.name for c in sent.calls()] == ["create"]
    assert [r.call_id for r in sent.results()] == [c.call_id for c in sent.calls()]
    assert again.output == "Back at the first reply." and again.transcript == Path(resumed["path"])

    # its turn is a branch below the first reply, a sibling of the second prompt
    assert len(convgit_json(project.path, "sessions")["sessions"]) == 1
    tree = convgit_json(project.path, "tree")["entries"]
    users = {reply_text(e): e for e in tree if e.get("role") == "user"}
    assert users["Start over from here"]["parentId"] == replies[0]["id"]
    assert users[prompts[1]]["parentId"] == replies[0]["id"]
    assert said(project) == [prompts[0], THREE_REPLIES[0], "Start over from here",
                             "Back at the first reply."]  # fmt: skip
    assert project.digest() == before, "the resumed turn changed files"
    assert all("problem" not in line for line in hook_log(project)), hook_log(project)

    # uninstall takes out convgit's file and its line in info/exclude, and nothing of the user's
    convgit(project.path, "hooks", "uninstall", "copilot")
    assert not (project.path / ".github" / "hooks" / "convgit.json").exists()
    assert (project.path / ".github" / "hooks" / "oracle.json").read_bytes() == theirs
    assert exclude.read_bytes() == excluded


def test_a_failing_hook_is_told_once_as_the_clis_warning_and_the_next_turn_catches_up(
    model_server: ModelServer, copilot: Copilot, project: GitRepo
) -> None:
    convgit(project.path, "hooks", "install", "copilot")
    model_server.expect(say("One."), say("Two."), say("Three."))
    first = copilot.run("turn one")
    (sid,) = [s["id"] for s in convgit_json(project.path, "sessions")["sessions"]]

    # the store is locked past the hooks' wait: the turn's events fail, the CLI goes on
    lock = project.path / ".git" / "convgit" / "locks"
    with locks.held(lock / f"agent-copilot-{first.session_id}.lock", 5):
        second = copilot.run("turn two", resume=first.session_id)
    assert second.returncode == 0 and second.output == "Two."
    # told to the user by the CLI (its warning), once per failed event, never to the model
    told = warnings(second.stdout)
    assert [line.split()[3] for line in told] == ["userPromptSubmitted", "agentStop"]
    assert all("convgit's hook at" in line for line in told)
    failed = [line for line in hook_log(project) if "problem" in line]
    assert [line.split()[2] for line in failed] == ["userPromptSubmitted", "agentStop"]
    assert all("lock" in line for line in failed)
    failures = convgit_json(project.path, "status")["hook_failures"]
    assert [f["event"] for f in failures] == ["userPromptSubmitted", "agentStop"]
    assert "Two." not in said(project)

    # the next turn succeeds: the failures are gone, turn two came in with it, nothing is told
    third = copilot.run("turn three", resume=first.session_id)
    assert third.output == "Three." and warnings(third.stdout) == []
    assert convgit_json(project.path, "status")["hook_failures"] == []
    assert said(project) == ["turn one", "One.", "turn two", "Two.", "turn three", "Three."]
    leaf = convgit_json(project.path, "log")["entries"][-1]
    assert convgit_json(project.path, "show", leaf["id"])["snapshot"]["tree"] == project.oracle()
    assert [s["id"] for s in convgit_json(project.path, "sessions")["sessions"]] == [sid]
    sent = json.dumps([r.body for r in model_server.requests])
    assert "convgit" not in sent.replace(str(project.path), "")


def test_a_turn_the_cli_was_killed_in_is_caught_up_by_the_next(
    model_server: ModelServer, copilot: Copilot, project: GitRepo, tmp_path: Path
) -> None:
    """The CLI killed while its reply runs a tool never reaches agentStop: the next prompt
    imports what the killed turn wrote, closes it (its reply gets the files as they are then)
    and opens its own."""
    convgit(project.path, "hooks", "install", "copilot")
    go = tmp_path / "go"
    waits = f"echo a > a.txt; while [ ! -f {go} ]; do sleep 0.05; done"
    model_server.expect(call("bash", {"command": waits, "description": "wait"}))
    killed = subprocess.Popen(
        copilot.command("turn one", [], None),
        cwd=project.path,
        env=copilot.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    events = copilot.copilot_home / "session-state"

    def running() -> bool:  # the tool runs, and the CLI wrote so (it writes its events behind)
        written = b"".join(p.read_bytes() for p in events.glob("*/events.jsonl"))
        return (project.path / "a.txt").exists() and b'"tool.execution_start"' in written

    try:
        wait_until(running, "the bash tool to run")
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait(timeout=30)
    finally:
        go.write_text("")  # the tool's shell, in a session of its own, ends too
        if killed.poll() is None:
            os.killpg(killed.pid, signal.SIGKILL)
            killed.wait()
    (state,) = events.glob("*/events.jsonl")
    session = state.parent.name
    when_killed = project.oracle()

    model_server.expect(say("Two."))
    assert copilot.run("turn two", resume=session).output == "Two."
    path = convgit_json(project.path, "log")["entries"]
    messages = [e for e in path if e["type"] == "message"]
    assert reply_text(messages[0]) == "turn one"
    assert [c["name"] for c in calls_of(messages[1])] == ["bash"]
    assert [reply_text(e) for e in messages[-2:]] == ["turn two", "Two."]
    log = hook_log(project)
    assert all("problem" not in line for line in log), log
    assert "turn interrupted" in [line for line in log if "userPromptSubmitted" in line][-1]
    shown = convgit_json(project.path, "show", messages[1]["id"])
    assert shown["snapshot"]["tree"] == when_killed  # the killed turn's files, a.txt in them
    assert "a.txt" in project.tree_paths(when_killed)
    last = convgit_json(project.path, "show", messages[-1]["id"])
    assert last["snapshot"]["tree"] == project.oracle()
