"""The real Codex CLI through the rig: a scripted apply_patch, and ``exec resume`` carrying the
first turn."""

from __future__ import annotations

import json

from tests.agents.runners import Codex
from tests.agents.script import Call, Reply, call, say
from tests.agents.server import ModelServer
from tests.workspace.gitrepo import GitRepo

PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+hello from the script\n*** End Patch\n"


def test_a_scripted_patch_lands_and_its_result_goes_back_to_the_model(
    model_server: ModelServer, codex: Codex, project: GitRepo
) -> None:
    model_server.expect(call("apply_patch", PATCH), say("I wrote hello.txt."))
    run = codex.run("Please write hello.txt")

    assert (project.path / "hello.txt").read_text() == "hello from the script\n"
    asked, answered = model_server.scripted
    assert asked.dialect == answered.dialect == "responses" and asked.path == "/v1/responses"
    assert asked.prompts() == ["Please write hello.txt"] and asked.calls() == []
    (patched,) = answered.calls()
    (result,) = answered.results()
    assert patched.name == "apply_patch" and patched.input == PATCH
    assert result.call_id == patched.call_id and "A hello.txt" in result.text
    assert run.output == "I wrote hello.txt."
    assert run.transcript is not None
    lines = [json.loads(line) for line in run.transcript.read_text().splitlines()]
    assert lines[0]["type"] == "session_meta" and lines[0]["payload"]["id"] == run.session_id
    said = [
        p["content"][0]["text"]
        for p in (line["payload"] for line in lines if line["type"] == "response_item")
        if p.get("type") == "message" and p.get("role") == "assistant"
    ]
    assert said == ["I wrote hello.txt."]
    assert model_server.escapes == []


def test_resume_sends_the_first_turn_with_the_new_prompt(
    model_server: ModelServer, codex: Codex, project: GitRepo
) -> None:
    shell = Call("exec_command", {"cmd": "echo one > notes.txt"})
    patch = Call("apply_patch", PATCH.replace("hello.txt", "more.txt"))
    model_server.expect(Reply("Two at once.", (shell, patch)), say("Noted."))
    first = codex.run("Write notes.txt")
    assert (project.path / "notes.txt").read_text() == "one\n"
    assert (project.path / "more.txt").read_text() == "hello from the script\n"
    model_server.expect(say("Still here."))
    second = codex.run("Are you there?", resume=first.session_id)

    resumed = model_server.scripted[-1]
    assert resumed.prompts() == ["Write notes.txt", "Are you there?"]
    assert resumed.replies() == ["Two at once.", "Noted."]
    assert [c.name for c in resumed.calls()] == ["exec_command", "apply_patch"]
    assert [r.call_id for r in resumed.results()] == [c.call_id for c in resumed.calls()]
    assert second.output == "Still here." and second.transcript == first.transcript
    assert second.transcript is not None and "Still here." in second.transcript.read_text()
