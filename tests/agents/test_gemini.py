"""The real Gemini CLI through the rig, offline: the Gemini API's streamed turns, a reply that
writes through ``write_file`` and the shell at once, and a resumed session that carries it."""

from __future__ import annotations

import json

from tests.agents.runners import Gemini
from tests.agents.script import Call, Reply, say
from tests.agents.server import ModelServer
from tests.workspace.gitrepo import GitRepo


def test_gemini_runs_tools_against_the_scripted_server_and_resumes_with_them(
    model_server: ModelServer, gemini: Gemini, project: GitRepo
) -> None:
    write = Call("write_file", {"file_path": "notes.txt", "content": "one\n"})
    shell = Call("run_shell_command", {"command": "echo two > more.txt"})
    model_server.expect(Reply("Two at once.", (write, shell)), say("Noted."))
    first = gemini.run("Write notes.txt")

    assert (project.path / "notes.txt").read_text() == "one\n"
    assert (project.path / "more.txt").read_text() == "two\n"
    asked, answered = model_server.scripted
    assert asked.dialect == "gemini"
    assert asked.path == "/v1beta/models/gemini-2.5-pro:streamGenerateContent"
    assert asked.query == "alt=sse"
    assert asked.prompts() == ["Write notes.txt"] and asked.calls() == []
    assert [c.name for c in answered.calls()] == ["write_file", "run_shell_command"]
    assert [r.call_id for r in answered.results()] == [c.call_id for c in answered.calls()]
    assert answered.results()[0].text.startswith("Successfully created and wrote")
    assert first.output == "Noted."
    assert first.transcript is not None
    header = json.loads(first.transcript.read_text().splitlines()[0])
    assert header["sessionId"] == first.session_id

    model_server.expect(say("Still here."))
    second = gemini.run("Are you there?", resume=first.session_id)
    resumed = model_server.scripted[-1]
    assert resumed.prompts() == ["Write notes.txt", "Are you there?"]
    assert resumed.replies() == ["Two at once.", "Noted."]
    assert second.output == "Still here." and second.session_id == first.session_id
    assert model_server.escapes == []
