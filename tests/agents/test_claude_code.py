"""The real Claude Code CLI through the rig: a scripted Write, a resume that carries the first
turn, and a project hook that runs."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from tests.agents.runners import ClaudeCode
from tests.agents.script import Call, Reply, call, say
from tests.agents.server import ModelServer
from tests.workspace.gitrepo import GitRepo

HOOK = "import json, sys; open(sys.argv[1], 'a').write(json.dumps(json.load(sys.stdin)) + '\\n')"


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def install_hooks(project: Path, log: Path) -> None:
    """Project settings with a PostToolUse and a Stop hook that append their stdin to ``log``."""
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(HOOK)} {shlex.quote(str(log))}"
    handler = [{"type": "command", "command": command}]
    settings = {
        "hooks": {
            "PostToolUse": [{"matcher": "Write", "hooks": handler}],
            "Stop": [{"hooks": handler}],
        }
    }
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))


def test_a_scripted_write_lands_and_its_result_goes_back_to_the_model(
    model_server: ModelServer, claude_code: ClaudeCode, project: GitRepo, tmp_path: Path
) -> None:
    hook_log = tmp_path / "hooks.jsonl"
    install_hooks(project.path, hook_log)
    target = project.path / "hello.txt"
    model_server.expect(
        call("Write", {"file_path": str(target), "content": "hello from the script\n"}),
        say("I wrote hello.txt."),
    )
    run = claude_code.run("Please write hello.txt")

    assert target.read_text() == "hello from the script\n"
    asked, answered = model_server.scripted
    assert asked.dialect == answered.dialect == "anthropic" and asked.path == "/v1/messages"
    assert asked.prompts() == ["Please write hello.txt"] and asked.calls() == []
    (written,) = answered.calls()
    (result,) = answered.results()
    assert written.name == "Write" and written.input == {
        "file_path": str(target),
        "content": "hello from the script\n",
    }
    assert result.call_id == written.call_id and str(target) in result.text
    assert run.output == "I wrote hello.txt."
    assert run.transcript is not None
    replies = [r for r in records(run.transcript) if r.get("type") == "assistant"]
    assert "I wrote hello.txt." in json.dumps(replies[-1])
    assert model_server.escapes == []

    events = records(hook_log)
    assert [e["hook_event_name"] for e in events] == ["PostToolUse", "Stop"]
    assert {e["session_id"] for e in events} == {run.session_id}
    assert events[0]["tool_name"] == "Write" and events[1]["transcript_path"] == str(run.transcript)


def test_resume_sends_the_first_turn_with_the_new_prompt(
    model_server: ModelServer, claude_code: ClaudeCode, project: GitRepo
) -> None:
    write = Call("Write", {"file_path": str(project.path / "notes.txt"), "content": "one\n"})
    bash = Call("Bash", {"command": "echo two > more.txt"})
    model_server.expect(Reply("Two at once.", (write, bash)), say("Noted."))
    first = claude_code.run("Write notes.txt")
    assert (project.path / "more.txt").read_text() == "two\n"
    model_server.expect(say("Still here."))
    second = claude_code.run("Are you there?", resume=first.session_id)

    resumed = model_server.scripted[-1]
    assert resumed.prompts() == ["Write notes.txt", "Are you there?"]
    assert resumed.replies() == ["Two at once.", "Noted."]
    assert [c.name for c in resumed.calls()] == ["Write", "Bash"]
    assert [r.call_id for r in resumed.results()] == [c.call_id for c in resumed.calls()]
    assert second.output == "Still here." and second.transcript is not None
    assert "Still here." in second.transcript.read_text()
