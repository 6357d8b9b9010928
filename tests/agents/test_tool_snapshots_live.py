"""Per-tool snapshots beside the real pi, Codex and Gemini CLI (Claude Code's are in
test_claude_code_sessions.py): with `[hooks] tool_snapshots = true` before `convgit hooks
install AGENT`, one turn that writes a file through the agent's file tool and then makes another
through its shell records a snapshot at each tool's end, for the reply that called it. Git
judges what each snapshot holds: the first has the written file and not the shell's, the second
both, and the turn's end keeps the second."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agents.hooked import calls_of, convgit_json, hook_log
from tests.agents.runners import Agent, Codex, Gemini, Pi
from tests.agents.script import Reply, call, say
from tests.agents.server import ModelServer
from tests.clirun import run
from tests.workspace.gitrepo import GitRepo

# each agent: its runner, its file tool's call writing a.txt, its shell's call making b.txt
AGENTS: dict[str, tuple[type[Agent], Reply, Reply]] = {
    "pi": (
        Pi,
        call("write", {"path": "a.txt", "content": "a\n"}),
        call("bash", {"command": "echo b > b.txt"}),
    ),
    "codex": (
        Codex,
        call("apply_patch", "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n"),
        call("exec_command", {"cmd": "echo b > b.txt"}),
    ),
    "gemini": (
        Gemini,
        call("write_file", {"file_path": "a.txt", "content": "a\n"}),
        call("run_shell_command", {"command": "echo b > b.txt"}),
    ),
}


def files_of(project: GitRepo, entry: dict[str, Any]) -> set[str]:
    snapshot = convgit_json(project.path, "show", entry["id"])["snapshot"]
    assert snapshot is not None, f"{entry['id']} has no snapshot"
    return set(project.tree_paths(snapshot["tree"]))


def files_at_tool(project: GitRepo, path: list[dict[str, Any]], call: dict[str, Any]) -> set[str]:
    """The files of the snapshot recorded for the reply that made ``call``: the call's own
    entry, or, where the agent keeps its message apart from its calls (Gemini CLI: the message,
    then an entry a call), the assistant message the call follows; never the prompt's."""
    for entry in reversed(path[: path.index(call) + 1]):
        assert not (entry["type"] == "message" and entry["role"] == "user"), call["id"]
        if convgit_json(project.path, "show", entry["id"])["snapshot"] is not None:
            assert entry["role"] == "assistant"
            return files_of(project, entry)
    raise AssertionError(f"no snapshot above {call['id']}")


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_each_tool_call_is_snapshotted_for_the_reply_that_made_it(
    name: str, model_server: ModelServer, project: GitRepo, agent_home: Path
) -> None:
    runner, write, shell = AGENTS[name]
    agent = runner(model_server, project.path, agent_home)
    store = project.path / ".git" / "convgit"
    store.mkdir(parents=True, exist_ok=True)
    (store / "config.toml").write_text("[hooks]\ntool_snapshots = true\n")
    run("hooks", "install", name, cwd=project.path, env=agent.env())
    model_server.expect(write, shell, say("Both done."))
    done = agent.run("Write a.txt, then make b.txt")
    assert done.output == "Both done."
    assert (project.path / "b.txt").read_text() == "b\n"
    assert all("problem" not in line for line in hook_log(project))

    path = convgit_json(project.path, "log")["entries"]
    callers = [e for e in path if e["type"] == "message" and calls_of(e)]
    assert len(callers) == 2, [c["id"] for c in callers]
    first, second = (files_at_tool(project, path, c) for c in callers)
    assert "a.txt" in first and "b.txt" not in first
    assert {"a.txt", "b.txt"} <= second
    # the turn's end: the reply after the tools has the files as they were at its end
    assert files_of(project, path[-1]) == second
