"""A hook event that failed beside the real Claude Code CLI is seen where the user looks: the
failing event hands Claude a `systemMessage` (Claude keeps it as a `hook_system_message` of the
transcript, shows it on its interactive screen and never sends it to the model), once;
`convgit status` names the failure until a later event of the same Claude session records its
turn, or the user dismisses it; an event whose hook found no convgit at all is named by the next
convgit command. The user's git state is guarded by `project`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from convgit.base import locks
from tests.agents.hooked import convgit, convgit_json, records, reply_text
from tests.agents.runners import ROOT, ClaudeCode
from tests.agents.script import call, say
from tests.agents.server import ModelServer
from tests.clirun import run
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


def files_at(project: GitRepo, entry: str) -> dict[str, str] | None:
    """The files of ``entry``'s own snapshot (None: it has none)."""
    snapshot = convgit_json(project.path, "show", entry)["snapshot"]
    return None if snapshot is None else project.tree_paths(snapshot["tree"])


def entry_of(path: list[dict[str, Any]], text: str) -> str:
    (found,) = [e["id"] for e in path if e["type"] == "message" and reply_text(e) == text]
    return str(found)


def test_a_failure_stays_named_until_its_own_sessions_turns_are_recorded_or_dismissed(
    model_server: ModelServer, claude_code: ClaudeCode, project: GitRepo
) -> None:
    """Another Claude session's turn that succeeds settles nothing of this one's; the next turn
    of this session records what was lost, which settles it. Two turns lost in a row leave the
    first without a snapshot for good: named until the user dismisses it."""
    convgit(project.path, "hooks", "install", "claude-code")
    model_server.expect(*(say(text) for text in ("A1.", "A2.", "B1.", "A3.", "A4.", "A5.")))
    first = claude_code.run("a one")
    lock = (
        project.path / ".git" / "convgit" / "locks" / f"agent-claude-code-{first.session_id}.lock"
    )
    with locks.held(lock, 5):
        claude_code.run("a two", resume=first.session_id)
    failed = convgit_json(project.path, "status")["hook_failures"]
    assert [f["event"] for f in failed] == ["UserPromptSubmit", "Stop"]

    other = claude_code.run("b one")  # another Claude session, in the same project
    assert other.session_id != first.session_id
    assert convgit_json(project.path, "status")["hook_failures"] == failed
    assert [(f["agent_session_id"], f["kind"]) for f in failed] == [
        (first.session_id, "failed"),
        (first.session_id, "failed"),
    ]
    assert convgit_json(project.path, "hooks", "status")["hook_failures"] == failed
    assert "hook events that failed (2), their turns not recorded yet" in convgit(
        project.path, "status"
    )

    claude_code.run("a three", resume=first.session_id)  # catches turn two up
    assert convgit_json(project.path, "status")["hook_failures"] == []
    path = convgit_json(project.path, "log")["entries"]
    assert files_at(project, entry_of(path, "A2.")) is not None

    # two turns lost in a row: the next one catches up the second, the first stays without
    with locks.held(lock, 5):
        claude_code.run("a four", resume=first.session_id)
        claude_code.run("a five", resume=first.session_id)
    model_server.expect(say("A6."))
    claude_code.run("a six", resume=first.session_id)
    path = convgit_json(project.path, "log")["entries"]
    four, five = entry_of(path, "A4."), entry_of(path, "A5.")
    assert files_at(project, four) is None and files_at(project, five) is not None
    (left,) = convgit_json(project.path, "status")["hook_failures"]
    assert (left["kind"], left["entries"], left["agent_session_id"]) == (
        "unrecorded",
        [four],
        first.session_id,
    )
    words = convgit(project.path, "status")
    assert "turns recorded without snapshots (1)" in words and four in words
    assert "`convgit hooks dismiss`" in words

    dismissed = convgit_json(project.path, "hooks", "dismiss")
    assert dismissed == {"dismissed": [left]}
    assert convgit_json(project.path, "status")["hook_failures"] == []
    assert "nothing to dismiss" in convgit(project.path, "hooks", "dismiss")


def test_a_turn_whose_hook_found_no_convgit_is_named_by_the_next_command(
    model_server: ModelServer, claude_code: ClaudeCode, project: GitRepo, tmp_path: Path
) -> None:
    """The convgit the hooks were installed with is uninstalled (its folder gone) and the shell
    that starts Claude has no convgit on its PATH: Claude goes on, the hook's command keeps
    the events in the store; the next convgit command names the turn, `hooks status` names the
    handler whatever this shell's PATH has, and once convgit runs again the next turn catches
    the lost one up."""
    installed = tmp_path / "venv-lib"  # a convgit of its own, as an install would place it
    shutil.copytree(
        ROOT / "convgit", installed / "convgit", ignore=shutil.ignore_patterns("__pycache__")
    )
    run("hooks", "install", "claude-code", cwd=project.path, env={"PYTHONPATH": str(installed)})
    made = project.path / "b.txt"
    model_server.expect(
        say("One."),
        call("Write", {"file_path": str(made), "content": "bee\n"}),
        say("Wrote b."),
        say("Three."),
    )
    first = claude_code.run("turn one")
    assert [f["event"] for f in convgit_json(project.path, "status")["hook_failures"]] == []

    shutil.rmtree(installed)  # uninstalled; and no convgit on the PATH Claude gives its hooks
    second = claude_code.run("turn two", resume=first.session_id, env={"PATH": "/usr/bin:/bin"})
    assert second.output == "Wrote b." and made.read_text() == "bee\n"

    # the user's next command, whatever it is, names what ran no convgit
    done = run("log", cwd=project.path)
    assert "3 hook events of an agent ran no convgit" in done.stderr
    assert f"UserPromptSubmit (claude-code {first.session_id})" in done.stderr
    assert '"turn two"' in done.stderr and "Stop" in done.stderr
    failures = convgit_json(project.path, "status")["hook_failures"]
    assert [(f["event"], f["kind"], f["agent_session_id"]) for f in failures] == [
        ("UserPromptSubmit", "not run", first.session_id),
        ("PostToolUse", "not run", first.session_id),
        ("Stop", "not run", first.session_id),
    ]
    assert "their turns not recorded yet" in convgit(project.path, "status")
    hooks = convgit_json(project.path, "hooks", "status")
    (local,) = [s for s in hooks["agents"]["claude-code"] if s["scope"] == "local"]
    assert f"names is gone ({installed / 'convgit'}" in local["problem"]
    assert hooks["hook_failures"] == failures

    # convgit is back: the next turn records the lost one, with the files it left
    convgit(project.path, "hooks", "install", "claude-code")
    claude_code.run("turn three", resume=first.session_id)
    path = convgit_json(project.path, "log")["entries"]
    assert "b.txt" in (files_at(project, entry_of(path, "Wrote b.")) or {})
    assert "b.txt" not in (files_at(project, entry_of(path, "turn three")) or {})
    assert convgit_json(project.path, "status")["hook_failures"] == []
