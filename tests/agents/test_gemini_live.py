"""convgit live beside the real Gemini CLI, its hooks installed by `convgit hooks install
gemini`: every prompt, reply and tool call lands in the tree, each turn's snapshot is what
`git add -A` stages at its AfterAgent (a shell edit included), and a hook that fails never
changes what Gemini does. The user's git state is guarded by `project`."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from convgit.base import locks
from tests.agents.hooked import (
    KEEPER,
    ROOT,
    calls_of,
    convgit,
    convgit_json,
    hook_log,
    reply_text,
    snapshot_records,
    store_bytes,
)
from tests.agents.runners import MODULES, Gemini
from tests.agents.script import call, say
from tests.agents.server import ModelServer
from tests.workspace.gitrepo import GitRepo

# A hook of the user's own: git's own answer to `git add -A` at that moment, logged with the
# reply Gemini names.
ORACLE = f"""
import json, sys
sys.path.insert(0, {str(ROOT)!r})
from tests.workspace.gitrepo import oracle_tree
event = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps({{"reply": event.get("prompt_response"), "tree": oracle_tree(
        __import__("pathlib").Path(event["cwd"]))}}) + "\\n")
"""


ONE_TWO = {"old_string": "one", "new_string": "two"}


def user_settings(project: Path, log: Path) -> bytes:
    """The user's project settings before convgit: their own AfterAgent hook and a setting
    convgit knows nothing of; the file's bytes."""
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(ORACLE)} {shlex.quote(str(log))}"
    settings = {
        "ui": {"hideTips": True},
        "hooks": {
            "AfterAgent": [
                {"hooks": [{"type": "command", "name": "oracle", "command": command}]},
            ]
        },
    }
    (project / ".gemini").mkdir(exist_ok=True)
    path = project / ".gemini" / "settings.json"
    path.write_text(json.dumps(settings, indent=4) + "\n")
    return path.read_bytes()


def replay(path: Path) -> list[dict[str, Any]]:
    """The messages of a Gemini chat file, replayed as the CLI reads it back."""
    messages: list[dict[str, Any]] = []
    for line in path.read_text().splitlines()[1:]:
        value = json.loads(line)
        if "$set" in value:
            if isinstance(value["$set"].get("messages"), list):
                messages = list(value["$set"]["messages"])
        elif "$rewindTo" in value:
            ids = [m["id"] for m in messages]
            at = value["$rewindTo"]
            messages = messages[: ids.index(at)] if at in ids else []
        elif isinstance(value.get("id"), str):
            ids = [m["id"] for m in messages]
            if value["id"] in ids:
                messages[ids.index(value["id"])] = value
            else:
                messages.append(value)
    return messages


def _user(text: str) -> tuple[str, str]:
    """A user's text; the CLI's session context (written again, with today's listing, at
    each resume: convgit keeps each version) by its kind alone."""
    return ("context", "") if text.startswith("<session_context>") else ("user", text)


def session_messages(path: Path) -> list[tuple[str, str]]:
    """The conversation as the chat file holds it: (role, text | call id | result's call id),
    in order, each call and result once (the CLI keeps a result in its call, and again in a
    user message; a resumed history may have the calls as parts too, and their answers as
    user messages)."""
    found: list[tuple[str, str]] = []
    for message in replay(path):
        content = message.get("content")
        parts = [{"text": content}] if isinstance(content, str) else content or []
        texts = "".join(p.get("text", "") for p in parts if isinstance(p, dict))
        if message["type"] == "user":
            if texts:
                found.append(_user(texts))
            answered = [p["functionResponse"]["id"] for p in parts if "functionResponse" in p]
            found += [("result", i) for i in answered if ("result", i) not in found]
        elif message["type"] == "gemini":
            if texts:
                found.append(("assistant", texts))
            calls = message.get("toolCalls") or []
            named = [c["id"] for c in calls]
            named += [p["functionCall"]["id"] for p in parts if "functionCall" in p]
            found += [("call", i) for i in dict.fromkeys(named) if ("call", i) not in found]
            done = [c["id"] for c in calls if c.get("result") is not None]
            found += [("result", i) for i in done if ("result", i) not in found]
    return found


def path_messages(path: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The same reading of convgit's active path."""
    found: list[tuple[str, str]] = []
    for entry in path:
        if entry["type"] != "message":
            continue
        if entry["role"] == "tool":
            answered = [entry["toolCallId"]]
        else:
            if text := reply_text(entry):
                found.append(_user(text) if entry["role"] == "user" else (entry["role"], text))
            found += [("call", part["id"]) for part in calls_of(entry)]
            parts = entry["content"] if isinstance(entry["content"], list) else []
            kept = [p["value"] for p in parts if p.get("type") == "gemini.part"]
            answered = [p["functionResponse"]["id"] for p in kept if "functionResponse" in p]
        found += [("result", i) for i in answered if ("result", i) not in found]
    return found


def said(project: GitRepo) -> list[str]:
    """The prompts and replies on the active path, in order (the CLI's context left out)."""
    path = convgit_json(project.path, "log")["entries"]
    texts = [reply_text(e) for e in path if e.get("role") in ("user", "assistant")]
    return [t for t in texts if t and not t.startswith("<session_context>")]


def test_three_turns_are_recorded_and_snapshotted_as_git_stages_them(
    model_server: ModelServer, gemini: Gemini, project: GitRepo, tmp_path: Path
) -> None:
    oracle_log = tmp_path / "oracle.jsonl"
    theirs = user_settings(project.path, oracle_log)
    installed = convgit(project.path, "hooks", "install", "gemini")
    assert "installed convgit's hooks in .gemini/settings.json" in installed
    settings_path = project.path / ".gemini" / "settings.json"
    settings = json.loads(settings_path.read_text())
    assert settings["ui"] == {"hideTips": True}
    assert json.loads(theirs)["hooks"]["AfterAgent"][0] in settings["hooks"]["AfterAgent"]
    assert sorted(settings["hooks"]) == ["AfterAgent", "AfterTool", "BeforeAgent"]
    status = convgit_json(project.path, "hooks", "status", "gemini")["agents"]["gemini"]
    assert [(s["scope"], s["state"]) for s in status] == [
        ("project", "installed"),
        ("user", "not installed"),
    ]

    model_server.expect(
        call("write_file", {"file_path": "notes.txt", "content": "one\n"}),
        say("I wrote notes.txt."),
        call("replace", {"file_path": "notes.txt", "instruction": "say two", **ONE_TWO}),
        say("I edited notes.txt."),
        call("run_shell_command", {"command": "echo three > made-by-shell.txt && rm README.md"}),
        say("I ran the command."),
    )
    prompts = ["Write notes.txt", "Edit notes.txt", "Run the command"]
    first = gemini.run(prompts[0])
    for prompt in prompts[1:]:
        gemini.run(prompt, resume=first.session_id)
    assert first.transcript is not None
    assert (project.path / "notes.txt").read_text() == "two\n"
    assert (project.path / "made-by-shell.txt").read_text() == "three\n"
    assert all("problem" not in line for line in hook_log(project)), hook_log(project)

    # one convgit session for the Gemini session, its tree the chat file's conversation
    (found,) = convgit_json(project.path, "sessions")["sessions"]
    assert found["agent"] == "gemini" and found["agent_session_id"] == first.session_id
    path = convgit_json(project.path, "log")["entries"]
    assert path_messages(path) == session_messages(first.transcript)
    path = [e for e in path if e["type"] == "message"]
    users = [reply_text(e) for e in path if e["type"] == "message" and e["role"] == "user"]
    assert [t for t in users if t and not t.startswith("<session_context>")] == prompts
    calls = [(p["name"], p["id"]) for e in path for p in calls_of(e)]
    assert [name for name, _ in calls] == ["write_file", "replace", "run_shell_command"]
    results = [e for e in path if e["type"] == "message" and e["role"] == "tool"]
    assert [r["toolCallId"] for r in results] == [ident for _, ident in calls]

    # each turn's reply has the snapshot git stages at that turn's AfterAgent (the shell's too)
    oracle = [json.loads(line) for line in oracle_log.read_text().splitlines()]
    assert [o["reply"] for o in oracle] == [
        "I wrote notes.txt.",
        "I edited notes.txt.",
        "I ran the command.",
    ]
    replies = [e for e in path if e["type"] == "message" and e["role"] == "assistant"]
    replies = [e for e in replies if reply_text(e)]
    assert [reply_text(e) for e in replies] == [o["reply"] for o in oracle]
    for reply, seen in zip(replies, oracle, strict=True):
        shown = convgit_json(project.path, "show", reply["id"])
        assert shown["snapshot"]["tree"] == seen["tree"], reply_text(reply)
    assert "made-by-shell.txt" in project.tree_paths(oracle[2]["tree"])
    assert "README.md" not in project.tree_paths(oracle[2]["tree"])
    # the first prompt has the files as they were before Gemini touched them
    prompt_entry = next(e for e in path if reply_text(e) == prompts[0])
    start = convgit_json(project.path, "show", prompt_entry["id"])["snapshot"]
    assert "notes.txt" not in project.tree_paths(start["tree"])
    assert convgit_json(project.path, "status")["files"]["changed"] == []

    # resume at the first reply: a chat file of that path, which Gemini is sent and nothing more
    before = project.digest()
    resumed = convgit_json(project.path, "resume", replies[0]["id"])
    assert resumed["agent"] == "gemini" and resumed["written"] is True
    chat = Path(resumed["path"])
    assert chat.parent == first.transcript.parent and chat.name.endswith("-convgit.jsonl")
    assert resumed["command"] == f"gemini --resume {resumed['agent_session_id']}"
    assert project.digest() == before, "resume without --restore changed files"
    model_server.expect(say("Back at the first reply."))
    again = gemini.run("Start over from here", *shlex.split(resumed["command"])[1:])
    sent = model_server.scripted[-1]
    assert sent.prompts() == ["Write notes.txt", "Start over from here"]
    assert sent.replies() == ["I wrote notes.txt."]
    assert [c.name for c in sent.calls()] == ["write_file"]
    assert [r.call_id for r in sent.results()] == [c.call_id for c in sent.calls()]
    assert again.output == "Back at the first reply."
    assert again.transcript == chat

    # its turn is a branch below the first reply, a sibling of the second prompt
    assert len(convgit_json(project.path, "sessions")["sessions"]) == 1
    tree = {e["id"]: e for e in convgit_json(project.path, "tree")["entries"]}
    prompt_entries = [e for e in tree.values() if e.get("role") == "user"]
    new_prompt = next(e for e in prompt_entries if reply_text(e) == "Start over from here")
    second_prompt = next(e for e in prompt_entries if reply_text(e) == prompts[1])
    assert new_prompt["parentId"] == second_prompt["parentId"] == replies[0]["id"]
    assert said(project) == [prompts[0], "I wrote notes.txt.", "Start over from here",
                             "Back at the first reply."]  # fmt: skip
    assert project.digest() == before, "the resumed turn changed files"
    assert all("problem" not in line for line in hook_log(project)), hook_log(project)

    # Gemini's session cleanup, on (its default), at the start of another session: the CLI's
    # empty start of the resumed recording goes, the chat file convgit wrote stays
    (stray,) = [p for p in gemini.sessions(resumed["agent_session_id"]) if p != chat]
    assert "Start over from here" not in stray.read_text()  # nothing in it to resume
    home_settings = gemini.gemini_dir / "settings.json"
    on = json.loads(home_settings.read_text())
    on["general"]["sessionRetention"] = {"enabled": True}
    home_settings.write_text(json.dumps(on))
    model_server.expect(say("A new session."))
    gemini.run("Something else")
    assert not stray.exists(), "the session cleanup did not run"
    # (the first chat file may go too, by the CLI's own doing: when the plain `--resume`s above
    # crossed a minute, the CLI's empty start of them takes it along; the tree keeps it all)
    assert chat.is_file()
    assert "Back at the first reply." in chat.read_text()

    # --restore brings the first reply's files back (saved first); with every chat file of
    # the session gone, the path is written from the lines the session keeps
    assert len(convgit_json(project.path, "sessions")["sessions"]) == 2
    for gone in chat.parent.glob("*.jsonl"):
        gone.unlink()
    later = convgit(project.path, "-s", found["id"], "resume", replies[0]["id"], "--restore", "-y")
    assert project.oracle() == oracle[0]["tree"]
    (written,) = chat.parent.glob("*-convgit.jsonl")
    assert written.name in later
    assert [m["type"] for m in replay(written)] == ["user", "user", "gemini", "gemini"]
    assert "I wrote notes.txt." in written.read_text()

    # uninstall gives the user's settings back byte for byte
    convgit(project.path, "hooks", "uninstall", "gemini")
    assert settings_path.read_bytes() == theirs


def test_a_failing_hook_leaves_gemini_as_it_was_and_the_next_turn_catches_up(
    model_server: ModelServer, gemini: Gemini, project: GitRepo
) -> None:
    convgit(project.path, "hooks", "install", "gemini")
    model_server.expect(say("One."), say("Two."), say("Three."))
    first = gemini.run("turn one")
    assert first.output == "One."
    (sid,) = [s["id"] for s in convgit_json(project.path, "sessions")["sessions"]]

    # the store is locked past the hooks' wait: the turn's events fail, Gemini goes on
    lock = project.path / ".git" / "convgit" / "locks"
    with locks.held(lock / f"agent-gemini-{first.session_id}.lock", 5):
        second = gemini.run("turn two", resume=first.session_id)
    assert second.returncode == 0 and second.output == "Two."
    assert json.loads(second.stdout).keys() == json.loads(first.stdout).keys()
    assert json.loads(second.stdout)["response"] == "Two."
    # told to the user by Gemini (on stderr, never to the model), once per failed event
    told = [line for line in second.stderr.splitlines() if "convgit's hook at" in line]
    assert [line.split()[6] for line in told] == ["BeforeAgent", "AfterAgent"]
    assert all(line.startswith("Hook system message: ") for line in told)
    failed = [line for line in hook_log(project) if "problem" in line]
    assert {line.split()[2] for line in failed} == {"BeforeAgent", "AfterAgent"}
    assert all("lock" in line for line in failed)
    failures = convgit_json(project.path, "status")["hook_failures"]
    assert [f["event"] for f in failures] == ["BeforeAgent", "AfterAgent"]
    assert "Two." not in said(project)

    # the next turn succeeds: the failures are gone, turn two came in with it
    third = gemini.run("turn three", resume=first.session_id)
    assert third.output == "Three."
    assert convgit_json(project.path, "status")["hook_failures"] == []
    assert said(project) == [
        "turn one",
        "One.",
        "turn two",
        "Two.",
        "turn three",
        "Three.",
    ]
    leaf = convgit_json(project.path, "log")["entries"][-1]
    assert reply_text(leaf) == "Three."
    assert convgit_json(project.path, "show", leaf["id"])["snapshot"]["tree"] == project.oracle()
    assert [s["id"] for s in convgit_json(project.path, "sessions")["sessions"]] == [sid]
    assert "convgit's hook" not in third.stderr
    # the model never saw a word of convgit's (Gemini lists its own skills by their path, which
    # is inside this checkout, whatever its folder is called)
    sent = json.dumps([r.body for r in model_server.requests])
    sent = sent.replace(json.dumps(str(MODULES))[1:-1], "")
    assert "convgit" not in sent


def test_an_event_delivered_again_records_nothing_twice(
    model_server: ModelServer, gemini: Gemini, project: GitRepo, tmp_path: Path
) -> None:
    kept = tmp_path / "events.jsonl"
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(KEEPER)} {shlex.quote(str(kept))}"
    keeper = {"hooks": [{"type": "command", "name": "keeper", "command": command}]}
    (project.path / ".gemini").mkdir()
    (project.path / ".gemini" / "settings.json").write_text(
        json.dumps({"hooks": {"BeforeAgent": [keeper], "AfterAgent": [keeper]}})
    )
    convgit(project.path, "hooks", "install", "gemini")
    model_server.expect(call("write_file", {"file_path": "a.txt", "content": "a\n"}), say("A."))
    run = gemini.run("Make a.txt")
    path = convgit_json(project.path, "log")["entries"]
    prompt = next(e for e in path if reply_text(e) == "Make a.txt")
    assert snapshot_records(project) == [prompt["id"], path[-1]["id"]]

    # every event once more, as Gemini runs the hook: nothing new is recorded (once what Gemini
    # wrote after its last hook, its `lastUpdated`, is imported: the next event brings it in)
    assert run.transcript is not None
    convgit(project.path, "import", "gemini", str(run.transcript))
    before = store_bytes(project)
    events = kept.read_text().splitlines()
    assert [json.loads(e)["hook_event_name"] for e in events] == ["BeforeAgent", "AfterAgent"]
    hook = json.loads((project.path / ".gemini" / "settings.json").read_text())
    (ours,) = [h for g in hook["hooks"]["AfterAgent"] for h in g["hooks"] if h["name"] == "convgit"]
    for event in events:
        again = subprocess.run(
            ["bash", "-c", ours["command"]],
            cwd=project.path,
            env=gemini.env(),
            input=event,
            capture_output=True,
            text=True,
        )
        assert (again.returncode, again.stdout, again.stderr) == (0, "", "")
    assert store_bytes(project) == before
    assert all("problem" not in line for line in hook_log(project))


def test_a_history_written_with_one_id_twice_loses_no_turn(
    model_server: ModelServer, gemini: Gemini, project: GitRepo
) -> None:
    """Gemini CLI's second ``--resume`` that starts in a later minute than its chat file's name
    writes the history again with the answers of a call twice under one id. convgit reads the
    file as Gemini does (the later in the earlier's place), names that in the hook log, and
    every turn comes in."""
    convgit(project.path, "hooks", "install", "gemini")
    write = call("write_file", {"file_path": "a.txt", "content": "a\n"})
    model_server.expect(write, say("Wrote a."), say("Two."), say("Three."))
    first = gemini.run("turn one")
    assert first.transcript is not None
    # the session began minutes ago: its file is named for an earlier minute, so each resume's
    # own start of a recording goes to a file of its own, as it does a minute later
    earlier = first.transcript.with_name(f"session-2026-01-01T00-00-{first.session_id[:8]}.jsonl")
    first.transcript.rename(earlier)
    gemini.run("turn two", resume=first.session_id)
    third = gemini.run("turn three", resume=first.session_id)
    assert third.transcript == earlier and third.output == "Three."
    histories = [
        value["$set"]["messages"]
        for value in map(json.loads, earlier.read_text().splitlines())
        if isinstance(value.get("$set"), dict) and "messages" in value["$set"]
    ]
    ids = [m["id"] for m in histories[-1]]
    (twice,) = {i for i in ids if ids.count(i) > 1}  # what Gemini wrote at the second resume

    assert said(project) == ["turn one", "Wrote a.", "turn two", "Two.", "turn three", "Three."]
    assert convgit_json(project.path, "status")["hook_failures"] == []
    log = hook_log(project)
    assert all("problem" not in line for line in log), log
    told = [line for line in log if f"with the id of message 4 ({twice})" in line]
    assert told and all(line.split()[2] in ("BeforeAgent", "AfterAgent") for line in told)
    leaf = convgit_json(project.path, "log")["entries"][-1]
    assert convgit_json(project.path, "show", leaf["id"])["snapshot"]["tree"] == project.oracle()


def test_a_hook_killed_midway_loses_nothing_and_the_next_turn_catches_up(
    model_server: ModelServer, gemini: Gemini, project: GitRepo
) -> None:
    """Each hook process of a turn is killed (SIGKILL) halfway through its first append to
    the store, a torn line left behind; Gemini goes on, and the next turn's hooks record both
    turns whole: the torn line set aside, nothing lost, fsck clean."""
    convgit(project.path, "hooks", "install", "gemini")
    model_server.expect(say("One."), say("Two."), say("Three."))
    first = gemini.run("turn one")
    sessions = project.path / ".git" / "convgit" / "sessions"
    (session_file,) = [p for p in sessions.glob("*.jsonl") if p.stem.isalnum()]

    second = gemini.run("turn two", resume=first.session_id, env={"CONVGIT_FAULT": "append:torn"})
    assert second.returncode == 0 and second.output == "Two."
    assert not session_file.read_bytes().endswith(b"\n")  # a hook died mid-line
    assert "Two." not in said(project)

    third = gemini.run("turn three", resume=first.session_id)
    assert third.output == "Three."
    assert said(project) == ["turn one", "One.", "turn two", "Two.", "turn three", "Three."]
    assert convgit_json(project.path, "fsck")["ok"]
    assert session_file.read_bytes().endswith(b"\n")  # the torn line set aside
    leaf = convgit_json(project.path, "log")["entries"][-1]
    assert convgit_json(project.path, "show", leaf["id"])["snapshot"]["tree"] == project.oracle()


def test_two_sessions_at_once_each_record_their_own_turn(
    model_server: ModelServer, gemini: Gemini, project: GitRepo
) -> None:
    """Two Gemini CLI sessions run their turns at the same moment in one checkout, their hooks
    racing for the store: each turn lands whole in its own convgit session, no hook fails,
    fsck is clean."""
    convgit(project.path, "hooks", "install", "gemini")
    model_server.expect(say("A."), say("B."))
    runs: dict[str, Any] = {}

    def turn(prompt: str) -> None:
        runs[prompt] = gemini.run(prompt)

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
        texts = [reply_text(e) for e in path if e.get("role") in ("user", "assistant")]
        assert [t for t in texts if t and not t.startswith("<session_context>")] == [
            prompt,
            run.output,
        ]
    assert all("problem" not in line for line in hook_log(project)), hook_log(project)
    assert convgit_json(project.path, "status")["hook_failures"] == []
    assert convgit_json(project.path, "fsck")["ok"]
