"""GitHub Copilot CLI's and Qwen Code's hook payloads (as the real CLIs hand them, recorded in
the research runs) read into convgit's events without the CLIs: the event's name from the
handler's command where the payload says none, the events file found from the session id, the
files a file tool wrote (``apply_patch``'s from its patch), and Qwen's empty UserPromptSubmit
before a request of tool results read as no prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from convgit.agents.copilot import live as copilot
from convgit.agents.qwen import live as qwen

SESSION = "3c57e30c-1d61-4032-a6c3-2f63cad422ea"
PATCH = "*** Begin Patch\n*** Add File: new.txt\n+new line\n*** Update File: a/b.txt\n@@\n-x\n+y\n"


def test_copilots_events_are_named_by_the_command_and_find_their_events_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot"))
    base = {"sessionId": SESSION, "timestamp": 1796621133324, "cwd": "/home/dev/project"}
    prompt = copilot.event({**base, "prompt": "make files"}, "userPromptSubmitted")
    assert (prompt.name, prompt.called, prompt.prompt_id) == (
        "UserPromptSubmit",
        "userPromptSubmitted",
        "1796621133324",
    )
    assert prompt.transcript == tmp_path / "copilot" / "session-state" / SESSION / "events.jsonl"
    patched = copilot.event(
        {**base, "toolName": "apply_patch", "toolArgs": PATCH, "toolResult": {}}, "postToolUse"
    )
    assert (patched.name, patched.edited) == ("PostToolUse", ("new.txt", "a/b.txt"))
    created = copilot.event(
        {**base, "toolName": "create", "toolArgs": {"path": "/home/dev/project/n.txt"}},
        "postToolUse",
    )
    assert created.edited == ("/home/dev/project/n.txt",)
    shell = copilot.event({**base, "toolName": "bash", "toolArgs": {"command": "x"}}, "postToolUse")
    assert shell.edited == ()
    stop = copilot.event({**base, "transcriptPath": "/t/events.jsonl"}, "agentStop")
    assert (stop.name, stop.transcript) == ("Stop", Path("/t/events.jsonl"))
    for bad, name, problem in [
        (base, None, "names no GitHub Copilot CLI event"),
        ({**base, "sessionId": "../x"}, "agentStop", "no usable sessionId"),
        ({**base, "transcriptPath": "t.jsonl"}, "agentStop", "not absolute"),
    ]:
        with pytest.raises(ValueError, match=problem):
            copilot.event(bad, name)


def test_qwens_empty_prompt_before_tool_results_is_no_prompt() -> None:
    base = {
        "session_id": SESSION,
        "transcript_path": "/home/dev/.qwen/projects/p/chats/x.jsonl",
        "cwd": "/home/dev/project",
        "hook_event_name": "UserPromptSubmit",
        "prompt_id": f"{SESSION}########0",
    }
    typed = qwen.event({**base, "prompt": "make files", "submitted_prompt": "make files"})
    assert (typed.name, typed.prompt_id) == ("UserPromptSubmit", f"{SESSION}########0")
    going_on = qwen.event({**base, "prompt": ""})
    assert (going_on.name, going_on.called) == (qwen.CONTINUES, "UserPromptSubmit")
    wrote = qwen.event(
        {**base, "hook_event_name": "PostToolUse", "tool_name": "write_file",
         "tool_input": {"file_path": "/home/dev/project/notes.txt", "content": "one\n"}}
    )  # fmt: skip
    assert wrote.edited == ("/home/dev/project/notes.txt",)
