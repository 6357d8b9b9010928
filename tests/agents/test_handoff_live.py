"""A handoff with the real CLIs against the scripted model server (issue 36): a session Claude
Code recorded is resumed in pi (`convgit resume REF --agent pi`); pi is sent exactly the path to
REF in its own request shape, Claude Code's `Write` as pi's `write`; pi's mapped `edit` works on
the file; and pi's turn, imported, is a branch of the same session below REF, naming pi."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from tests import clirun
from tests.agents.hooked import convgit_json, reply_text
from tests.agents.runners import Agent, ClaudeCode, Codex, Gemini, OpenCode, Pi
from tests.agents.script import call, say
from tests.agents.server import ModelServer
from tests.workspace.gitrepo import GitRepo


def test_a_claude_code_session_continues_in_pi_as_a_branch_of_the_same_session(
    model_server: ModelServer, claude_code: ClaudeCode, pi: Pi, project: GitRepo
) -> None:
    notes = project.path / "notes.txt"
    model_server.expect(
        call("Write", {"file_path": str(notes), "content": "one\n"}),
        say("I wrote notes.txt."),
    )
    first = claude_code.run("Write notes.txt")
    assert first.transcript is not None
    convgit_json(project.path, "import", "claude-code", str(first.transcript))
    tree = [e for e in convgit_json(project.path, "tree")["entries"] if e["type"] == "message"]
    (ref,) = [e["id"] for e in tree if reply_text(e) == "I wrote notes.txt."]

    started = time.monotonic()
    resumed = convgit_json(project.path, "resume", ref, "--agent", "pi")
    path = Path(resumed["path"])
    assert resumed["agent"] == "pi" and resumed["command"] == f"pi --session {path}"
    model_server.expect(
        call("edit", {"path": "notes.txt", "edits": [{"oldText": "one", "newText": "two"}]}),
        say("It says two now."),
    )
    pi.run("Make it two", resume=path)
    handed = time.monotonic() - started
    print(f"Claude Code -> pi: {handed:.1f} s")

    sent = model_server.scripted[-2]  # pi's first request: the path to REF and the prompt
    assert sent.dialect == model_server.scripted[-1].dialect != model_server.scripted[0].dialect
    assert sent.prompts() == ["Write notes.txt", "Make it two"]
    assert sent.replies() == ["I wrote notes.txt."]
    assert [(c.name, c.input) for c in sent.calls()] == [
        ("write", {"path": str(notes), "content": "one\n"})
    ]
    assert len(sent.results()) == 1
    assert notes.read_text() == "two\n"  # pi's own edit, on the file Claude Code wrote

    again = convgit_json(project.path, "import", "pi", str(path))["imports"][0]
    assert again["new"] >= 2
    (session,) = convgit_json(project.path, "sessions")["sessions"]
    assert session["id"] == again["session"]
    every = {e["id"]: e for e in convgit_json(project.path, "tree")["entries"]}
    tree = [e for e in every.values() if e["type"] == "message"]
    (prompt,) = [e for e in tree if reply_text(e) == "Make it two"]
    above = []  # pi's own records of its model and thinking level come first, below REF
    parent = prompt["parentId"]
    while parent != ref:
        above.append((every[parent]["type"], every[parent].get("agent")))
        parent = every[parent]["parentId"]
    assert prompt["agent"] == "pi" and set(above) <= {("model", "pi"), ("thinking", "pi")}
    (reply,) = [e for e in tree if reply_text(e) == "It says two now."]
    assert reply["agent"] == "pi"
    assert len([e for e in tree if reply_text(e) == "Write notes.txt"]) == 1  # no copy


def _resume(runner: Agent, project: GitRepo, ref: str, agent: str) -> dict[str, Any]:
    """``convgit resume REF --agent AGENT`` where that agent looks (its own HOME and folders)."""
    done = clirun.run("resume", ref, "--agent", agent, "--json", cwd=project.path, env=runner.env())
    found: dict[str, Any] = json.loads(done.stdout)
    assert found["agent"] == agent and found["entry"] == ref
    return found


def _import(runner: Agent, project: GitRepo, agent: str, path: Path) -> tuple[str, int]:
    """The agent's session imported again: the session it lands in, and how many entries its
    hooks had not recorded."""
    done = clirun.run("import", agent, str(path), "--json", cwd=project.path, env=runner.env())
    found = json.loads(done.stdout)["imports"][0]
    return str(found["session"]), int(found["new"])


def _opencode(opencode: OpenCode, *args: str) -> str:
    done = subprocess.run(
        [*opencode.binary(), *args], cwd=opencode.cwd, env=opencode.env({"PWD": str(opencode.cwd)}),
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return done.stdout


def test_a_ring_of_handoffs_claude_codex_pi_gemini_opencode_claude_is_one_session(
    model_server: ModelServer,
    claude_code: ClaudeCode,
    codex: Codex,
    pi: Pi,
    gemini: Gemini,
    opencode: OpenCode,
    project: GitRepo,
    tmp_path: Path,
) -> None:
    """Claude Code -> Codex -> pi -> Gemini CLI -> OpenCode -> Claude Code, each resumed at the
    last reply and recorded live by its hooks: at each step the model is sent the whole path so
    far in the target's shape and the target's tool names, the target's mapped edit works on
    the file, and each turn lands in the one session as a branch below the last, naming its
    agent (importing the agent's file afterwards finds nothing the hooks missed)."""
    rings = [("claude-code", claude_code), ("codex", codex), ("pi", pi), ("gemini", gemini),
             ("opencode", opencode)]  # fmt: skip
    for name, runner in rings:  # each turn recorded live by its agent's hooks
        clirun.run("hooks", "install", name, cwd=project.path, env=runner.env())
    notes = project.path / "notes.txt"
    model_server.expect(
        call("Write", {"file_path": str(notes), "content": "one\n"}),
        say("Claude: one."),
    )
    first = claude_code.run("Write notes.txt")
    assert first.transcript is not None
    session, new = _import(claude_code, project, "claude-code", first.transcript)
    assert new == 0  # the hooks recorded it
    prompts, replies = ["Write notes.txt"], ["Claude: one."]
    patch = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-one\n+two\n*** End Patch\n"
    steps: list[tuple[str, Agent, Any, list[str]]] = [
        ("codex", codex, call("apply_patch", patch), ["apply_patch"]),
        ("pi", pi, call("edit", {"path": "notes.txt",
                                 "edits": [{"oldText": "two", "newText": "three"}]}),
         ["write", "edit"]),
        ("gemini", gemini, call("replace", {"file_path": str(notes), "old_string": "three",
                                            "new_string": "four",
                                            "instruction": "Make it four."}),
         ["write_file", "replace", "replace"]),
        ("opencode", opencode, call("edit", {"filePath": str(notes), "oldString": "four",
                                             "newString": "five"}),
         ["write", "edit", "edit", "edit"]),
        ("claude-code", claude_code, call("Edit", {"file_path": str(notes), "old_string": "five",
                                                   "new_string": "six"}),
         ["Write", "Edit", "Edit", "Edit", "Edit"]),
    ]  # fmt: skip
    words = ["two", "three", "four", "five", "six"]
    times = []
    for number, (agent, runner, edit, names) in enumerate(steps):
        entries = convgit_json(project.path, "log")["entries"]
        ref = [e["id"] for e in entries if e["type"] == "message"][-1]
        started = time.monotonic()
        resumed = _resume(runner, project, ref, agent)
        prompt, reply = f"Make it {words[number]}", f"{agent}: {words[number]}."
        model_server.expect(edit, say(reply))
        asked = len(model_server.scripted)
        if agent == "opencode":
            _opencode(opencode, "import", resumed["path"])
        where: str | Path = resumed["agent_session_id"]
        if agent == "pi":
            where = Path(resumed["path"])
        # OpenCode goes on with the model the last prompt names (Gemini's here), which its
        # configuration lacks: it is told its own (docs/handoff.md)
        more = ["--model", "fake/scripted"] if agent == "opencode" else []
        run = runner.run(prompt, *more, resume=where)
        times.append(time.monotonic() - started)
        sent = model_server.scripted[asked]  # the target's first request of its turn
        assert sent.prompts() == [*prompts, prompt], agent
        assert sent.replies() == replies, agent
        assert [c.name for c in sent.calls()] == names, agent
        assert len(sent.results()) == len(names), agent
        answered = model_server.scripted[asked + 1].results()[-1].text
        assert notes.read_text() == f"{words[number]}\n", (agent, answered)
        transcript = run.transcript
        if agent == "opencode":
            transcript = tmp_path / "opencode-export.json"
            transcript.write_text(_opencode(opencode, "export", run.session_id))
        assert transcript is not None
        assert _import(runner, project, agent, transcript) == (session, 0), agent
        prompts.append(prompt)
        replies.append(reply)
        entries = [
            e for e in convgit_json(project.path, "log")["entries"] if e["type"] == "message"
        ]
        assert [(e.get("agent"), reply_text(e)) for e in entries[-1:]] == [
            (None if agent == "claude-code" else agent, reply)
        ], agent
    print("per handoff (s): " + ", ".join(f"{t:.1f}" for t in times))
    assert convgit_json(project.path, "hooks", "status")["hook_failures"] == []
    (_only,) = convgit_json(project.path, "sessions")["sessions"]
    said = [
        reply_text(e)
        for e in convgit_json(project.path, "log")["entries"]
        if e["type"] == "message"
    ]
    assert [t for t in said if t in prompts or t in replies] == [
        t for pair in zip(prompts, replies, strict=True) for t in pair
    ]
