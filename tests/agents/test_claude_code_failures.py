"""A hook event that failed beside the real Claude Code CLI is seen where the user looks: the
failing event hands Claude a `systemMessage` (Claude keeps it as a `hook_system_message` of the
transcript, shows it on its interactive screen and never sends it to the model), once;
`convgit status` names the failure until a later event succeeds. The user's git state is
guarded by `project`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from convgit.base import locks
from tests.agents.hooked import convgit, convgit_json, records, reply_text
from tests.agents.runners import ClaudeCode
from tests.agents.script import say
from tests.agents.server import ModelServer
from tests.workspace.gitrepo import GitRepo


def system_messages(transcript: Path) -> list[dict[str, Any]]:
    """The hooks' messages to the user Claude kept in the transcript, in order."""
    found = []
    for line in records(transcript):
        attachment = line.get("attachment")
        if isinstance(attachment, dict) and attachment.get("type") == "hook_system_message":
            found.append(attachment)
    return found


def test_a_failed_event_is_told_once_through_claude_and_named_by_status_until_one_succeeds(
    model_server: ModelServer, claude_code: ClaudeCode, project: GitRepo
) -> None:
    convgit(project.path, "hooks", "install", "claude-code")
    model_server.expect(say("One."), say("Two."), say("Three."))
    first = claude_code.run("turn one")
    assert first.transcript is not None
    assert system_messages(first.transcript) == []
    assert convgit_json(project.path, "status")["hook_failures"] == []

    # the store is locked past the hooks' wait: the turn's events fail, Claude goes on
    lock = project.path / ".git" / "convgit" / "locks"
    with locks.held(lock / f"agent-claude-code-{first.session_id}.lock", 5):
        second = claude_code.run("turn two", resume=first.session_id)
    assert second.output == "Two."
    told = system_messages(first.transcript)
    assert [m["hookEvent"] for m in told] == ["UserPromptSubmit", "Stop"]
    assert all("convgit's hook at" in m["content"] and "lock" in m["content"] for m in told)
    failures = convgit_json(project.path, "status")["hook_failures"]
    assert [f["event"] for f in failures] == ["UserPromptSubmit", "Stop"]
    assert failures == convgit_json(project.path, "hooks", "status")["hook_failures"]
    log = project.path / ".git" / "convgit" / "logs" / "hooks.log"
    assert {f["log"] for f in failures} == {str(log)} and str(log) in told[-1]["content"]
    assert "hook events that failed (2)" in convgit(project.path, "status")

    # the next turn succeeds: nothing more is told, the failures are gone, the turn caught up
    third = claude_code.run("turn three", resume=first.session_id)
    assert third.output == "Three."
    assert len(system_messages(first.transcript)) == 2
    assert convgit_json(project.path, "status")["hook_failures"] == []
    texts = [reply_text(e) for e in convgit_json(project.path, "log")["entries"]]
    assert texts == ["turn one", "One.", "turn two", "Two.", "turn three", "Three."]

    # the model never saw a word of it
    sent = json.dumps([r.body for r in model_server.requests])
    assert "convgit's hook" not in sent and "hook events" not in sent
