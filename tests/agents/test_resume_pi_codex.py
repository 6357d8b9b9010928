"""`convgit resume REF` for pi and Codex, with the real CLIs: a session the agent recorded
(three turns, one with a tool call) is imported, resumed at the first reply, continued by the
agent for one turn, and imported again. The model is sent exactly the path to the first reply
and the new prompt; the new turn is a branch below it, the old later turns stay on theirs; the
files change only with --restore. Refusals go through the CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.agents.hooked import convgit_json, reply_text
from tests.agents.runners import Codex, Pi, Run
from tests.agents.script import call, say
from tests.agents.server import ModelServer
from tests.workspace.gitrepo import GitRepo

PATCH = "*** Begin Patch\n*** Add File: notes.txt\n+one\n*** End Patch\n"


def status(project: GitRepo) -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=project.path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def entry_saying(tree: list[dict[str, Any]], text: str) -> dict[str, Any]:
    (found,) = [e for e in tree if e["type"] == "message" and reply_text(e) == text]
    return found


def resume_and_continue(
    project: GitRepo, transcript: Path, agent: str, first_reply: str
) -> tuple[dict[str, Any], dict[str, Any], str]:
    """Import ``transcript``, resume at ``first_reply``: the import, the resume's JSON, and
    the id of the entry resumed at. Checks that the files were not touched."""
    imported = convgit_json(project.path, "import", agent, str(transcript))["imports"][0]
    tree = convgit_json(project.path, "tree")["entries"]
    ref = entry_saying(tree, first_reply)["id"]
    before = status(project)
    resumed = convgit_json(project.path, "resume", ref)  # the session's own agent
    assert resumed["agent"] == agent and resumed["entry"] == ref
    assert status(project) == before  # no --restore: no file changed (git judges)
    assert convgit_json(project.path, "log")["entries"][-1]["id"] == ref  # the active leaf moved
    return imported, resumed, ref


def check_branch(project: GitRepo, agent: str, path: str, ref: str, later: str) -> None:
    """The resumed file imported again: the new turn is a branch below ``ref``, beside the
    later turns (which start with the prompt ``later``)."""
    again = convgit_json(project.path, "import", agent, path)["imports"][0]
    assert again["new"] >= 2  # the new prompt and its reply
    (session,) = convgit_json(project.path, "sessions")["sessions"]
    assert session["id"] == again["session"]
    tree = convgit_json(project.path, "tree")["entries"]
    below = {reply_text(e) for e in tree if e["parentId"] == ref}
    new_prompt = entry_saying(tree, "Start over from here")
    entry_saying(tree, "Write notes.txt")  # the shared path was not imported a second time
    assert below >= {"Start over from here", later}
    assert entry_saying(tree, later)["parentId"] == ref  # the old turns are still there
    log = convgit_json(project.path, "log")["entries"]
    assert [reply_text(e) for e in log if e["type"] == "message"][-2:] == [
        "Start over from here",
        "Back at the first reply.",
    ]
    assert new_prompt["id"] in {e["id"] for e in log}


def test_pi_round_trip_resumes_at_the_first_reply_and_imports_a_branch(
    model_server: ModelServer, pi: Pi, project: GitRepo
) -> None:
    model_server.expect(
        call("write", {"path": "notes.txt", "content": "one\n"}),
        say("I wrote notes.txt."),
        say("Second reply."),
        say("Third reply."),
    )
    first = pi.run("Write notes.txt")
    assert first.transcript is not None
    pi.run("Say something else", resume=first.transcript)
    pi.run("And once more", resume=first.transcript)
    (project.path / "notes.txt").write_text("changed after the session\n")

    imported, resumed, ref = resume_and_continue(
        project, first.transcript, "pi", "I wrote notes.txt."
    )
    path = Path(resumed["path"])
    assert path.parent == first.transcript.parent  # beside pi's own file
    assert resumed["command"] == f"pi --session {path}"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["version"] == 3
    assert lines[0]["id"] == resumed["agent_session_id"] != imported["agent_session_id"]
    original = first.transcript.read_bytes().splitlines()
    assert path.read_bytes().splitlines()[1:] == original[1 : len(lines)]  # pi's own bytes

    model_server.expect(say("Back at the first reply."))
    pi.run("Start over from here", resume=path)
    sent = model_server.scripted[-1]
    assert sent.prompts() == ["Write notes.txt", "Start over from here"]
    assert sent.replies() == ["I wrote notes.txt."]
    assert [c.name for c in sent.calls()] == ["write"] and len(sent.results()) == 1
    check_branch(project, "pi", str(path), ref, "Say something else")
    assert (project.path / "notes.txt").read_text() == "changed after the session\n"


def test_codex_round_trip_resumes_at_the_first_reply_and_imports_a_branch(
    model_server: ModelServer, codex: Codex, project: GitRepo
) -> None:
    model_server.expect(
        call("apply_patch", PATCH),
        say("I wrote notes.txt."),
        say("Second reply."),
        say("Third reply."),
    )
    first = codex.run("Write notes.txt")
    assert first.transcript is not None
    codex.run("Say something else", resume=first.session_id)
    codex.run("And once more", resume=first.session_id)

    imported, resumed, ref = resume_and_continue(
        project, first.transcript, "codex", "I wrote notes.txt."
    )
    thread = resumed["agent_session_id"]
    path = Path(resumed["path"])
    assert thread != imported["agent_session_id"] and resumed["command"] == f"codex resume {thread}"
    assert path.name.startswith("rollout-") and path.name.endswith(f"-{thread}.jsonl")
    assert path.parents[3] == codex.codex_home / "sessions"
    meta = json.loads(path.read_text().splitlines()[0])["payload"]
    assert meta["id"] == thread and meta["model_provider"] == "scripted"

    model_server.expect(say("Back at the first reply."))
    run: Run = codex.run("Start over from here", resume=thread)
    assert run.transcript == path
    sent = model_server.scripted[-1]
    assert sent.prompts() == ["Write notes.txt", "Start over from here"]
    assert sent.replies() == ["I wrote notes.txt."]
    assert [c.name for c in sent.calls()] == ["apply_patch"] and len(sent.results()) == 1
    check_branch(project, "codex", str(path), ref, "Say something else")
