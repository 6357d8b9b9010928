"""The real pi CLI through the rig: a scripted write, and a resumed session file that carries
the first turn."""

from __future__ import annotations

import json

from tests.agents.runners import Pi
from tests.agents.script import Call, Reply, call, say
from tests.agents.server import ModelServer
from tests.workspace.gitrepo import GitRepo


def test_a_scripted_write_lands_and_its_result_goes_back_to_the_model(
    model_server: ModelServer, pi: Pi, project: GitRepo
) -> None:
    model_server.expect(
        call("write", {"path": "hello.txt", "content": "hello from the script\n"}),
        say("I wrote hello.txt."),
    )
    run = pi.run("Please write hello.txt")

    assert (project.path / "hello.txt").read_text() == "hello from the script\n"
    asked, answered = model_server.scripted
    assert asked.dialect == answered.dialect == "chat" and asked.path == "/v1/chat/completions"
    assert asked.prompts() == ["Please write hello.txt"] and asked.calls() == []
    (written,) = answered.calls()
    (result,) = answered.results()
    assert written.name == "write" and written.input == {
        "path": "hello.txt",
        "content": "hello from the script\n",
    }
    assert result.call_id == written.call_id and result.text.startswith("Successfully wrote")
    assert run.output == "I wrote hello.txt."
    assert run.transcript is not None
    entries = [json.loads(line) for line in run.transcript.read_text().splitlines()]
    assert entries[0]["type"] == "session" and entries[0]["id"] == run.session_id
    last = entries[-1]["message"]
    assert last["role"] == "assistant" and last["content"][0]["text"] == "I wrote hello.txt."
    assert model_server.escapes == []


def test_resume_sends_the_first_turn_with_the_new_prompt(
    model_server: ModelServer, pi: Pi, project: GitRepo
) -> None:
    write = Call("write", {"path": "notes.txt", "content": "one\n"})
    bash = Call("bash", {"command": "echo two > more.txt"})
    model_server.expect(Reply("Two at once.", (write, bash)), say("Noted."))
    first = pi.run("Write notes.txt")
    assert (project.path / "more.txt").read_text() == "two\n"
    model_server.expect(say("Still here."))
    second = pi.run("Are you there?", resume=first.transcript)

    resumed = model_server.scripted[-1]
    assert resumed.prompts() == ["Write notes.txt", "Are you there?"]
    assert resumed.replies() == ["Two at once.", "Noted."]
    assert [c.name for c in resumed.calls()] == ["write", "bash"]
    assert [r.call_id for r in resumed.results()] == [c.call_id for c in resumed.calls()]
    assert second.output == "Still here." and second.transcript == first.transcript
    assert second.transcript is not None and "Still here." in second.transcript.read_text()
