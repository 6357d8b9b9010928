"""convgit live beside the real Claude Code CLI, its hooks installed by `convgit hooks install`:
every prompt, reply and tool call lands in the tree, each turn's snapshot is what `git add -A`
stages at its Stop (a Bash edit included), any reply can be resumed in Claude as a new branch,
and the files change only when restored; a hook that fails never stops Claude, and nothing is
recorded twice. The user's git state is guarded by `project`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from tests.agents.hooked import (
    assert_each_turn_has_gits_snapshot,
    calls_of,
    claude_code_hook_command,
    convgit,
    convgit_json,
    hook_log,
    keep_events,
    oracle_command,
    path_messages,
    records,
    reply_text,
    snapshot_records,
    store_bytes,
)
from tests.agents.runners import ClaudeCode, claude_project_dir
from tests.agents.script import call, say
from tests.agents.server import ModelServer
from tests.polling import wait_until
from tests.recorded import Recorded
from tests.workspace.gitrepo import GitRepo


def user_stop_hook(project: Path, log: Path) -> dict[str, Any]:
    """The user's settings before convgit: their own Stop hook (with a timeout and a status
    message) and a setting convgit knows nothing of."""
    command = oracle_command(log)
    settings = {
        "permissions": {"allow": ["Bash(git status)"]},
        "hooks": {
            "Stop": [
                {"hooks": [{"type": "command", "command": command, "timeout": 60}]},
            ]
        },
    }
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "settings.local.json").write_text(json.dumps(settings))
    return settings


def transcript_messages(path: Path) -> list[tuple[str, str]]:
    """The conversation as the transcript holds it: (role, prompt text | reply text | tool_use
    id | tool_result id), in file order, synthetic replies left out."""
    found = []
    for line in records(path):
        message = line.get("message")
        if line.get("type") not in ("user", "assistant") or not isinstance(message, dict):
            continue
        if message.get("model") == "<synthetic>":
            continue
        content = message["content"]
        if isinstance(content, str):
            found.append((line["type"], content))
            continue
        for block in content:
            if block["type"] == "text":
                found.append((line["type"], block["text"]))
            elif block["type"] == "tool_use":
                found.append(("call", block["id"]))
            elif block["type"] == "tool_result":
                found.append(("result", block["tool_use_id"]))
    return found


def test_three_turns_are_recorded_snapshotted_and_any_reply_resumes_as_a_branch(
    model_server: ModelServer, claude_code: ClaudeCode, project: GitRepo, tmp_path: Path
) -> None:
    oracle_log = tmp_path / "oracle.jsonl"
    theirs = user_stop_hook(project.path, oracle_log)
    installed = convgit(project.path, "hooks", "install", "claude-code")
    assert "installed convgit's hooks" in installed
    settings = json.loads((project.path / ".claude" / "settings.local.json").read_text())
    assert settings["permissions"] == theirs["permissions"]
    assert theirs["hooks"]["Stop"][0] in settings["hooks"]["Stop"]

    notes = project.path / "notes.txt"
    model_server.expect(
        call("Write", {"file_path": str(notes), "content": "one\n"}),
        say("I wrote notes.txt."),
        call("Edit", {"file_path": str(notes), "old_string": "one", "new_string": "two"}),
        say("I edited notes.txt."),
        call("Bash", {"command": "echo three > made-by-bash.txt && rm README.md"}),
        say("I ran the command."),
    )
    prompts = ["Write notes.txt", "Edit notes.txt", "Run the command"]
    first = claude_code.run(prompts[0])
    for prompt in prompts[1:]:
        claude_code.run(prompt, resume=first.session_id)
    assert first.transcript is not None
    assert (project.path / "made-by-bash.txt").read_text() == "three\n"

    # one convgit session for the Claude session, its tree the transcript's conversation
    (found,) = convgit_json(project.path, "sessions")["sessions"]
    assert found["agent"] == "claude-code" and found["agent_session_id"] == first.session_id
    path = convgit_json(project.path, "log")["entries"]
    assert path_messages(path) == transcript_messages(first.transcript)
    by_role = [(e["role"], reply_text(e)) for e in path if e["type"] == "message"]
    assert [t for r, t in by_role if r == "user"] == prompts
    calls = [(p["name"], p["id"]) for e in path for p in calls_of(e)]
    assert [name for name, _ in calls] == ["Write", "Edit", "Bash"]
    results = [e for e in path if e["type"] == "message" and e["role"] == "tool"]
    assert [r["toolCallId"] for r in results] == [ident for _, ident in calls]
    for result in results:  # each result right after the reply that called it
        before = path[path.index(result) - 1]
        assert result["toolCallId"] in [p["id"] for p in calls_of(before)]
    uuids = {line["uuid"] for line in records(first.transcript) if line.get("type") == "user"}
    assert uuids <= {e["id"] for e in path}  # entries are Claude's own uuids

    # each turn's reply has the snapshot git stages at that turn's Stop (the Bash edit too)
    replies = assert_each_turn_has_gits_snapshot(project, project.path, path, oracle_log)
    # the first prompt has the files as they were before Claude touched them
    start = convgit_json(project.path, "show", path[0]["id"])["snapshot"]
    assert "notes.txt" not in project.tree_paths(start["tree"])

    # resume at the first reply: Claude is sent that turn and nothing after it
    before = project.digest()
    resumed = convgit_json(project.path, "resume", replies[0]["id"], "--agent", "claude-code")
    assert resumed["command"] == (
        f"claude -r {first.session_id} --resume-session-at {resumed['resume_at']}"
    )
    assert Path(resumed["path"]) == first.transcript
    assert project.digest() == before, "resume without --restore changed files"
    model_server.expect(say("Back at the first reply."))
    again = claude_code.run(
        "Start over from here", "--resume-session-at", resumed["resume_at"], resume=first.session_id
    )
    sent = model_server.scripted[-1]
    assert sent.prompts() == ["Write notes.txt", "Start over from here"]
    assert sent.replies() == ["I wrote notes.txt."]
    assert [c.name for c in sent.calls()] == ["Write"]
    assert again.output == "Back at the first reply."

    # its turn is a sibling branch of the second prompt, in the same convgit session
    assert len(convgit_json(project.path, "sessions")["sessions"]) == 1
    tree = {e["id"]: e for e in convgit_json(project.path, "tree")["entries"]}
    prompt_entries = [e for e in tree.values() if e.get("role") == "user"]
    new_prompt = next(e for e in prompt_entries if reply_text(e) == "Start over from here")
    second_prompt = next(e for e in prompt_entries if reply_text(e) == "Edit notes.txt")
    assert new_prompt["parentId"] == second_prompt["parentId"] == replies[0]["id"]
    assert project.digest() == before, "the resumed turn changed files it did not touch"
    status = convgit_json(project.path, "status")
    assert status["files"]["changed"] == []  # the new reply's snapshot: the files as they are

    # diff and worktree read these snapshots as any others
    diff = convgit_json(project.path, "diff", replies[0]["id"], replies[2]["id"])["changes"]
    assert sorted((c["path"], c["status"]) for c in diff) == [
        ("README.md", "deleted"),
        ("made-by-bash.txt", "added"),
        ("notes.txt", "modified"),
    ]
    side = tmp_path / "side-by-side"
    convgit(project.path, "worktree", replies[0]["id"], str(side))
    assert (side / "notes.txt").read_text() == "one\n" and not (side / "made-by-bash.txt").exists()
    convgit(project.path, "worktree", "--remove", str(side))

    # restore brings the first reply's files back (saved first, undoable)
    convgit(project.path, "restore", replies[0]["id"], "--yes")
    assert project.oracle() == records(oracle_log)[0]["tree"]
    convgit(project.path, "restore", "--undo", "--yes")
    assert project.digest() == before


def test_a_failing_hook_exits_0_logs_and_claude_finishes_and_the_next_turn_catches_up(
    model_server: ModelServer, claude_code: ClaudeCode, project: GitRepo
) -> None:
    # a handler of the user's that feeds convgit's hook what is not an event
    garbage = {"type": "command", "command": "echo 'not an event' | convgit hook claude-code"}
    (project.path / ".claude").mkdir()
    (project.path / ".claude" / "settings.local.json").write_text(
        json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [garbage]}]}})
    )
    convgit(project.path, "hooks", "install", "claude-code")
    model_server.expect(say("One."), say("Two."), say("Three."), say("Four."))
    first = claude_code.run("turn one")
    assert first.output == "One." and first.stdout.count('"type":"result"') == 1
    (bad,) = [line for line in hook_log(project) if "problem" in line]
    assert "the event on stdin is not JSON" in bad
    (sid,) = [s["id"] for s in convgit_json(project.path, "sessions")["sessions"]]

    # the session is locked by another process: the hooks that write give up in a moment
    from convgit.base import locks

    lock = project.path / ".git" / "convgit" / "locks" / f"{sid}.lock"
    with locks.held(lock, 5):
        second = claude_code.run("turn two", resume=first.session_id)
    assert second.output == "Two." and second.seconds < 25
    stuck = [line for line in hook_log(project) if "problem" in line and "lock" in line]
    assert {line.split()[2] for line in stuck} >= {"Stop"}
    assert "Two." not in [reply_text(e) for e in convgit_json(project.path, "log")["entries"]]

    # the repository is broken: git fails, the conversation is still kept
    head = project.path / ".git" / "HEAD"
    saved = head.read_bytes()
    head.write_text("not a ref\n")
    try:
        third = claude_code.run("turn three", resume=first.session_id)
    finally:
        head.write_bytes(saved)
    assert third.output == "Three."
    broken = [line for line in hook_log(project) if "problem" in line and "git" in line]
    assert any(line.split()[2] == "Stop" for line in broken)
    texts = [reply_text(e) for e in convgit_json(project.path, "log")["entries"]]
    assert texts[-2:] == ["turn three", "Three."]  # turn two came in with it

    # all well again: the next turn records and snapshots as always
    fourth = claude_code.run("turn four", resume=first.session_id)
    assert fourth.output == "Four."
    path = convgit_json(project.path, "log")["entries"]
    assert [reply_text(e) for e in path if e["role"] == "user"] == [
        "turn one",
        "turn two",
        "turn three",
        "turn four",
    ]
    assert convgit_json(project.path, "show", path[-1]["id"])["snapshot"]["tree"] == (
        project.oracle()
    )
    assert convgit_json(project.path, "status")["files"]["changed"] == []


def test_a_prompt_typed_while_a_tool_runs_and_a_retried_delivery_record_nothing_twice(
    model_server: ModelServer, claude_code: ClaudeCode, project: GitRepo, tmp_path: Path
) -> None:
    kept = tmp_path / "events.jsonl"
    keep_events(project.path, kept, ["UserPromptSubmit", "Stop"])
    convgit(project.path, "hooks", "install", "claude-code")
    go = tmp_path / "go"
    model_server.expect(
        call("Bash", {"command": f"while [ ! -f {go} ]; do sleep 0.05; done; echo a > a.txt"}),
        say("Done, and I read your second message."),
    )
    # one Claude process reading prompts as stream-json: the second is sent while Bash runs
    argv = [
        *claude_code.binary(),
        *["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"],
        *["--permission-mode", "acceptEdits", "--allowedTools", "Bash"],
    ]
    output = (tmp_path / "claude.out").open("w")
    claude = subprocess.Popen(
        argv,
        cwd=project.path,
        env=claude_code.env(),
        stdin=subprocess.PIPE,
        stdout=output,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:

        def send(text: str) -> None:
            assert claude.stdin is not None
            message = {"type": "user", "message": {"role": "user", "content": text}}
            claude.stdin.write(json.dumps(message) + "\n")
            claude.stdin.flush()

        def queued() -> bool:  # Claude has taken the message in, to hand to the running turn
            return any(
                line.get("operation") == "enqueue" and line.get("content") == "Also, thank you"
                for found in claude_dir.glob("*.jsonl")
                for line in records(found)
            )

        claude_dir = claude_project_dir(claude_code.home, project.path.resolve())
        send("Make a.txt")
        wait_until(lambda: len(model_server.scripted) == 1, "the Bash call")
        send("Also, thank you")
        wait_until(queued, "the second message to be queued")
        go.write_text("")
        wait_until(lambda: kept.exists() and '"Stop"' in kept.read_text(), "the Stop hook")
        assert claude.stdin is not None
        claude.stdin.close()
        claude.wait(timeout=60)
    finally:
        if claude.poll() is None:
            os.killpg(claude.pid, signal.SIGKILL)
            claude.wait()
        output.close()
    assert claude.returncode == 0, (tmp_path / "claude.out").read_text()[-2000:]

    # the typed message is in the turn, once; the turn has one prompt snapshot and one reply's
    path = convgit_json(project.path, "log")["entries"]
    users = [e for e in path if e["type"] == "message" and e["role"] == "user"]
    assert [reply_text(e) for e in users] == ["Make a.txt", "Also, thank you"]
    assert snapshot_records(project) == [path[0]["id"], path[-1]["id"]]
    assert reply_text(path[-1]) == "Done, and I read your second message."
    assert convgit_json(project.path, "show", path[-1]["id"])["snapshot"]["tree"] == (
        project.oracle()
    )

    # every event delivered once more, as Claude would run the hook: nothing new is recorded
    # (once what Claude wrote after its last hook, its own bookkeeping, is imported: no
    # SessionEnd hook brings it in; the next event does)
    (transcript,) = claude_dir.glob("*.jsonl")
    convgit(project.path, "import", "claude-code", str(transcript))
    before = store_bytes(project)
    events = kept.read_text().splitlines()
    assert [json.loads(e)["hook_event_name"] for e in events] == [
        "UserPromptSubmit",
        "UserPromptSubmit",
        "Stop",
    ]
    for event in events:
        again = subprocess.run(
            ["bash", "-c", claude_code_hook_command()],
            cwd=project.path,
            env=claude_code.env(),
            input=event,
            capture_output=True,
            text=True,
        )
        assert again.returncode == 0 and again.stdout == ""
    assert store_bytes(project) == before
    assert all("problem" not in line for line in hook_log(project))


def test_three_turns_through_the_recorder(
    model_server: ModelServer, claude_code: ClaudeCode, project: GitRepo, tmp_path: Path
) -> None:
    """The recorder on (issue 37): Claude's first hook event starts it, and once it runs the
    events of the next turns are handed to it and recorded as the hook records them: the
    conversation is the transcript's, each turn's reply has the snapshot git stages at its Stop."""
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    recorder = Recorded(project, run)
    on = {"CONVGIT_RECORDER": "on", "XDG_RUNTIME_DIR": str(run)}
    oracle_log = tmp_path / "oracle.jsonl"
    user_stop_hook(project.path, oracle_log)
    convgit(project.path, "hooks", "install", "claude-code")
    notes = project.path / "notes.txt"
    model_server.expect(
        call("Write", {"file_path": str(notes), "content": "one\n"}),
        say("I wrote notes.txt."),
        call("Edit", {"file_path": str(notes), "old_string": "one", "new_string": "two"}),
        say("I edited notes.txt."),
        call("Bash", {"command": "echo three > made-by-bash.txt && rm README.md"}),
        say("I ran the command."),
    )
    try:
        first = claude_code.run("Write notes.txt", env=on)
        recorder.wait_running()
        seen = len(hook_log(project))
        for prompt in ("Edit notes.txt", "Run the command"):
            claude_code.run(prompt, resume=first.session_id, env=on)
        later = hook_log(project)[seen:]
        assert later and all(" through the recorder (" in line for line in later), later
        assert first.transcript is not None
        path = convgit_json(project.path, "log")["entries"]
        assert path_messages(path) == transcript_messages(first.transcript)
        assert_each_turn_has_gits_snapshot(project, project.path, path, oracle_log)
    finally:
        recorder.end()
        subprocess.run(
            ["watchman", "watch-del", str(project.path)], capture_output=True, timeout=30
        )
