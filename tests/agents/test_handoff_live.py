"""A handoff with the real CLIs against the scripted model server (issue 36): a session Claude
Code recorded is resumed in pi (`convgit resume REF --agent pi`); pi is sent exactly the path to
REF in its own request shape, Claude Code's `Write` as pi's `write`; pi's mapped `edit` works on
the file; and pi's turn, imported, is a branch of the same session below REF, naming pi."""

from __future__ import annotations

import time
from pathlib import Path

from tests.agents.hooked import convgit_json, reply_text
from tests.agents.runners import ClaudeCode, Pi
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
