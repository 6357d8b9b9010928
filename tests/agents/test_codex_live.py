"""convgit live beside the real Codex CLI, its hooks installed (and trusted) by `convgit hooks
install codex`: every prompt, reply and tool call lands in the tree as the rollout has it, each
turn's snapshot is what `git add -A` stages at its Stop (a shell edit included), a reply resumed
with `convgit resume` continues as a branch below it, the files change only when restored, and
a hook that fails never changes what Codex does. The user's git state is guarded by
`project`."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from convgit.agents.codex import hooks as codex_hooks
from convgit.base import locks
from tests.agents.hooked import (
    assert_each_turn_has_gits_snapshot,
    calls_of,
    hook_log,
    oracle_command,
    path_messages,
    records,
    reply_text,
)
from tests.agents.runners import Codex
from tests.agents.script import call, say
from tests.agents.server import ModelServer
from tests.workspace.gitrepo import GitRepo

WRITE = "*** Begin Patch\n*** Add File: notes.txt\n+one\n*** End Patch\n"
EDIT = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-one\n+two\n*** End Patch\n"


def convgit(codex: Codex, *args: str, code: int = 0) -> str:
    """The convgit CLI with Codex's environment (its CODEX_HOME)."""
    done = subprocess.run(
        [sys.executable, "-m", "convgit", *args],
        cwd=codex.cwd,
        env=codex.env(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == code, (args, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return done.stdout


def convgit_json(codex: Codex, *args: str) -> Any:
    return json.loads(convgit(codex, *args, "--json"))


def user_stop_hook(codex: Codex, log: Path) -> tuple[dict[str, Any], str]:
    """The user's own Stop hook (git's tree at that moment, logged), trusted as Codex would."""
    handler = {"type": "command", "command": oracle_command(log), "timeout": 60}
    theirs = {"hooks": {"Stop": [{"hooks": [handler]}]}}
    path = codex.codex_home / "hooks.json"
    path.write_text(json.dumps(theirs, indent=1))
    key = f"{path.resolve()}:stop:0:0"
    digest = codex_hooks.trusted_hash("Stop", None, handler)
    trust = f'\n[hooks.state."{key}"]\ntrusted_hash = "{digest}"\n'
    config = codex.codex_home / "config.toml"
    config.write_text(config.read_text() + trust)
    return theirs, config.read_text()


def rollout_messages(path: Path) -> list[tuple[str, str]]:
    """The conversation as the rollout holds it (prompts, replies, calls and their outputs)."""
    found = []
    for line in records(path):
        item = line.get("payload") or {}
        if line.get("type") != "response_item":
            continue
        kind = item.get("type")
        if kind == "message" and item.get("role") in ("user", "assistant"):
            text = "".join(c.get("text", "") for c in item["content"])
            if item["role"] == "assistant" or not text.startswith("<"):
                found.append((item["role"], text))
        elif kind in ("function_call", "custom_tool_call"):
            found.append(("call", item["call_id"]))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            found.append(("result", item["call_id"]))
    return found


def test_three_turns_are_recorded_snapshotted_and_a_resumed_reply_continues_as_a_branch(
    model_server: ModelServer, codex: Codex, project: GitRepo, tmp_path: Path
) -> None:
    oracle_log = tmp_path / "oracle.jsonl"
    theirs, config = user_stop_hook(codex, oracle_log)
    assert "installed convgit's hooks" in convgit(codex, "hooks", "install", "codex")
    installed = json.loads((codex.codex_home / "hooks.json").read_text())
    assert theirs["hooks"]["Stop"][0] in installed["hooks"]["Stop"]
    assert (codex.codex_home / "config.toml").read_text().startswith(config)
    (status,) = convgit_json(codex, "hooks", "status")["agents"]["codex"]
    assert status["state"] == "installed" and status["problem"] is None

    model_server.expect(
        call("apply_patch", WRITE),
        say("I wrote notes.txt."),
        call("apply_patch", EDIT),
        say("I edited notes.txt."),
        call("exec_command", {"cmd": "echo three > made-by-bash.txt && rm README.md"}),
        say("I ran the command."),
    )
    prompts = ["Write notes.txt", "Edit notes.txt", "Run the command"]
    first = codex.run(prompts[0])
    assert first.transcript is not None
    for prompt in prompts[1:]:
        codex.run(prompt, resume=first.session_id)
    assert (project.path / "made-by-bash.txt").read_text() == "three\n"
    assert all("problem" not in line for line in hook_log(project))

    # one convgit session for the Codex thread, its tree the rollout's conversation
    (found,) = convgit_json(codex, "sessions")["sessions"]
    assert found["agent"] == "codex" and found["agent_session_id"] == first.session_id
    path = convgit_json(codex, "log")["entries"]
    assert path_messages(path) == rollout_messages(first.transcript)
    users = [reply_text(e) for e in path if e["type"] == "message" and e["role"] == "user"]
    assert users == prompts
    calls = [p["name"] for e in path if e["type"] == "message" for p in calls_of(e)]
    assert calls == ["apply_patch", "apply_patch", "exec_command"]

    # each turn's reply has the snapshot git stages at that turn's Stop (the shell edit too)
    replies = assert_each_turn_has_gits_snapshot(project, codex.cwd, path, oracle_log)

    # resume at the first reply: Codex is sent that turn and nothing after it
    before = project.digest()
    resumed = convgit_json(codex, "resume", replies[0]["id"])
    thread = resumed["agent_session_id"]
    assert resumed["agent"] == "codex" and resumed["command"] == f"codex resume {thread}"
    assert project.digest() == before, "resume without --restore changed files"
    model_server.expect(say("Back at the first reply."))
    again = codex.run("Start over from here", resume=thread)
    assert again.output == "Back at the first reply."
    sent = model_server.scripted[-1]
    assert sent.prompts() == ["Write notes.txt", "Start over from here"]
    assert sent.replies() == ["I wrote notes.txt."]

    # the hooks alone recorded its turn: a sibling branch of the second prompt, same session
    assert len(convgit_json(codex, "sessions")["sessions"]) == 1
    tree = convgit_json(codex, "tree")["entries"]
    users_now = [e for e in tree if e["type"] == "message" and e.get("role") == "user"]
    new_prompt = next(e for e in users_now if reply_text(e) == "Start over from here")
    second = next(e for e in users_now if reply_text(e) == "Edit notes.txt")
    by_id = {e["id"]: e for e in tree}

    def turn_of(entry: dict[str, Any]) -> str:  # the last reply or call above a prompt
        node = by_id[entry["parentId"]]
        while node["type"] != "message":
            node = by_id[node["parentId"]]
        return str(node["id"])

    assert turn_of(new_prompt) == turn_of(second) == replies[0]["id"]
    log = convgit_json(codex, "log")["entries"]
    assert reply_text(log[-1]) == "Back at the first reply."
    assert project.digest() == before, "the resumed turn changed files"
    assert convgit_json(codex, "show", log[-1]["id"])["snapshot"]["tree"] == project.oracle()

    # restore brings the first reply's files back (saved first, undoable)
    convgit(codex, "restore", replies[0]["id"], "--yes")
    assert project.oracle() == records(oracle_log)[0]["tree"]
    convgit(codex, "restore", "--undo", "--yes")
    assert project.digest() == before

    # uninstall takes convgit's handlers and trust out, and nothing else
    convgit(codex, "hooks", "uninstall", "codex")
    assert json.loads((codex.codex_home / "hooks.json").read_text()) == theirs
    assert (codex.codex_home / "config.toml").read_text() == config


def kinds(stdout: str) -> list[str]:
    """What Codex printed, event by event (items by their type)."""
    found = []
    for line in stdout.splitlines():
        event = json.loads(line)
        found.append(f"{event['type']} {(event.get('item') or {}).get('type', '')}".strip())
    return found


def test_a_failing_hook_leaves_codex_as_it_was_and_status_says_when_codex_skips_them(
    model_server: ModelServer, codex: Codex, project: GitRepo
) -> None:
    config = codex.codex_home / "config.toml"
    original = config.read_bytes()
    convgit(codex, "hooks", "install", "codex")
    model_server.expect(say("One."), say("Two."), say("Three."))
    first = codex.run("turn one")
    assert first.transcript is not None

    # the store is locked past the hooks' wait: the turn's events fail, Codex goes on
    lock = project.path / ".git" / "convgit" / "locks" / f"agent-codex-{first.session_id}.lock"
    with locks.held(lock, 5):
        second = codex.run("turn two", resume=first.session_id)
    assert second.returncode == 0 and second.output == "Two."
    assert kinds(second.stdout) == kinds(first.stdout)  # no item more or less
    failures = convgit_json(codex, "status")["hook_failures"]
    assert [f["event"] for f in failures] == ["UserPromptSubmit", "Stop"]
    logged = convgit_json(codex, "log")["entries"]
    assert "Two." not in [reply_text(e) for e in logged if e["type"] == "message"]

    # the next turn succeeds: the failures are gone, turn two came in with it
    third = codex.run("turn three", resume=first.session_id)
    assert third.output == "Three."
    assert convgit_json(codex, "status")["hook_failures"] == []
    path = convgit_json(codex, "log")["entries"]
    said = [reply_text(e) for e in path if e["type"] == "message" and e["role"] != "tool"]
    assert said == ["turn one", "One.", "turn two", "Two.", "turn three", "Three."]
    assert convgit_json(codex, "show", path[-1]["id"])["snapshot"]["tree"] == project.oracle()

    # without the trust entries Codex would skip the hooks: status says so
    trusted = config.read_bytes()
    config.write_bytes(original)
    (status,) = convgit_json(codex, "hooks", "status")["agents"]["codex"]
    handlers = len(json.loads((codex.codex_home / "hooks.json").read_text())["hooks"])
    assert handlers == 3  # UserPromptSubmit, PostToolUse on apply_patch, Stop
    assert status["state"] == "installed" and "Codex skips 3 of them" in status["problem"]
    config.write_bytes(trusted)
    convgit(codex, "hooks", "uninstall", "codex")
    assert config.read_bytes() == original
    assert not (codex.codex_home / "hooks.json").exists()


def test_an_ignored_file_apply_patch_wrote_is_snapshotted_and_restored(
    model_server: ModelServer, codex: Codex, project: GitRepo
) -> None:
    """A git-ignored file Codex wrote through apply_patch (named in the patch, as the
    PostToolUse event carries it) is in each turn's snapshot, with that turn's content, and
    `restore` brings it back, saying why; a file the patch deletes is not taken for one."""
    project.write(".gitignore", "*.env\n")
    convgit(codex, "hooks", "install", "codex")
    add = "*** Begin Patch\n*** Add File: local.env\n+TOKEN=one\n*** End Patch\n"
    update = (
        "*** Begin Patch\n*** Update File: local.env\n@@\n-TOKEN=one\n+TOKEN=two\n*** End Patch\n"
    )
    model_server.expect(
        call("apply_patch", add),
        say("I wrote local.env."),
        call("apply_patch", update),
        say("I edited local.env."),
    )
    first = codex.run("Write local.env")
    codex.run("Edit local.env", resume=first.session_id)
    secret = project.path / "local.env"
    assert secret.read_text() == "TOKEN=two\n"
    assert project.git("check-ignore", "local.env").strip() == "local.env"
    assert all("problem" not in line for line in hook_log(project))

    path = convgit_json(codex, "log")["entries"]
    replies = {reply_text(e): e["id"] for e in path if e.get("role") == "assistant"}
    trees = [
        convgit_json(codex, "show", replies[said])["snapshot"]["tree"]
        for said in ("I wrote local.env.", "I edited local.env.")
    ]
    at_write, at_edit = (project.tree_paths(tree) for tree in trees)
    assert "local.env" in at_write and "local.env" in at_edit
    assert at_write["local.env"] != at_edit["local.env"]  # each turn's own content

    words = convgit(codex, "restore", replies["I wrote local.env."], "--yes")
    assert "ignored by git, restored because the agent wrote it: local.env" in words, words
    assert secret.read_text() == "TOKEN=one\n"
    convgit(codex, "restore", "--undo", "--yes")
    assert secret.read_text() == "TOKEN=two\n"


def test_a_hooks_file_codex_would_skip_is_named_and_refused_and_the_hooks_run_once_it_reads(
    model_server: ModelServer, codex: Codex, project: GitRepo
) -> None:
    """Codex skips every hook of a hooks.json with a top-level key other than `description` and
    `hooks` (saying so only in `codex exec --json`). `hooks status` names it, install refuses
    it and writes nothing; once the file is one Codex reads, install keeps what Codex allows of
    the user's, and the hooks run."""
    hooks_json = codex.codex_home / "hooks.json"
    config = codex.codex_home / "config.toml"
    group = {"note": "a key of the user's in a group", "hooks": []}
    theirs = {"description": "my hooks", "owner": "me", "hooks": {"Stop": [group]}}
    hooks_json.write_text(json.dumps(theirs, indent=1))
    mine, trust = hooks_json.read_bytes(), config.read_bytes()

    (status,) = convgit_json(codex, "hooks", "status")["agents"]["codex"]
    assert status["state"] == "not installed"
    assert "Codex skips every hook in it" in status["problem"]
    assert "the top-level key 'owner'" in status["problem"]
    refused = subprocess.run(
        [sys.executable, "-m", "convgit", "hooks", "install", "codex"],
        cwd=codex.cwd,
        env=codex.env(),
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 1 and refused.stdout == ""
    assert "the top-level key 'owner'" in refused.stderr and "Traceback" not in refused.stderr
    assert (hooks_json.read_bytes(), config.read_bytes()) == (mine, trust)

    # the key moved out, as the hint says: installed beside what Codex allows of the user's
    del theirs["owner"]
    hooks_json.write_text(json.dumps(theirs, indent=1))
    convgit(codex, "hooks", "install", "codex")
    installed = json.loads(hooks_json.read_text())
    assert installed["description"] == "my hooks" and group in installed["hooks"]["Stop"]
    (status,) = convgit_json(codex, "hooks", "status")["agents"]["codex"]
    assert (status["state"], status["problem"]) == ("installed", None)
    model_server.expect(say("One."))
    codex.run("turn one")
    assert [line.split()[2] for line in hook_log(project)] == ["UserPromptSubmit", "Stop"]
    path = convgit_json(codex, "log")["entries"]
    said = [reply_text(e) for e in path if e["type"] == "message"]
    assert said == ["turn one", "One."]

    # a key added after the install: status says Codex skips the hooks
    hooks_json.write_text(json.dumps({**installed, "owner": "me"}, indent=1))
    (status,) = convgit_json(codex, "hooks", "status")["agents"]["codex"]
    assert status["state"] == "installed" and "the top-level key 'owner'" in status["problem"]


def test_a_hook_killed_midway_loses_nothing_and_the_next_turn_catches_up(
    model_server: ModelServer, codex: Codex, project: GitRepo
) -> None:
    """Each hook process of a turn is killed (SIGKILL) halfway through its first append to
    the store, a torn line left behind; Codex goes on, and the next turn's hooks record both
    turns whole: the torn line set aside, nothing lost, fsck clean."""
    convgit(codex, "hooks", "install", "codex")
    model_server.expect(say("One."), say("Two."), say("Three."))
    first = codex.run("turn one")
    sessions = project.path / ".git" / "convgit" / "sessions"
    (session_file,) = [p for p in sessions.glob("*.jsonl") if p.stem.isalnum()]

    second = codex.run("turn two", resume=first.session_id, env={"CONVGIT_FAULT": "append:torn"})
    assert second.returncode == 0 and second.output == "Two."
    assert not session_file.read_bytes().endswith(b"\n")  # a hook died mid-line
    logged = convgit_json(codex, "log")["entries"]
    assert "Two." not in [reply_text(e) for e in logged if e["type"] == "message"]

    third = codex.run("turn three", resume=first.session_id)
    assert third.output == "Three."
    path = convgit_json(codex, "log")["entries"]
    said = [reply_text(e) for e in path if e["type"] == "message" and e["role"] != "tool"]
    assert said == ["turn one", "One.", "turn two", "Two.", "turn three", "Three."]
    assert convgit_json(codex, "fsck")["ok"]
    assert session_file.read_bytes().endswith(b"\n")  # the torn line set aside
    assert convgit_json(codex, "show", path[-1]["id"])["snapshot"]["tree"] == project.oracle()


def test_two_sessions_at_once_each_record_their_own_turn(
    model_server: ModelServer, codex: Codex, project: GitRepo
) -> None:
    """Two Codex sessions run their turns at the same moment in one checkout, their hooks
    racing for the store: each turn lands whole in its own convgit session, no hook fails,
    fsck is clean."""
    convgit(codex, "hooks", "install", "codex")
    model_server.expect(say("A."), say("B."))
    runs: dict[str, Any] = {}

    def turn(prompt: str) -> None:
        runs[prompt] = codex.run(prompt)

    threads = [threading.Thread(target=turn, args=(p,)) for p in ("left turn", "right turn")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {run.output for run in runs.values()} == {"A.", "B."}
    found = convgit_json(codex, "sessions")["sessions"]
    assert sorted(s["agent_session_id"] for s in found) == sorted(
        run.session_id for run in runs.values()
    )
    for prompt, run in runs.items():
        (sid,) = [s["id"] for s in found if s["agent_session_id"] == run.session_id]
        path = convgit_json(codex, "-s", sid, "log")["entries"]
        said = [reply_text(e) for e in path if e["type"] == "message" and e["role"] != "tool"]
        assert said == [prompt, run.output]
    assert all("problem" not in line for line in hook_log(project)), hook_log(project)
    assert convgit_json(codex, "status")["hook_failures"] == []
    assert convgit_json(codex, "fsck")["ok"]
