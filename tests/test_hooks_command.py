"""The handler `convgit hooks install claude-code` writes: it runs the convgit that installed it
when `convgit` is not on the PATH of the shell that started Claude (falling back to the PATH,
`--command` choosing another), `hooks status` says when it would not run, a handler the user
edited to another convgit path is still convgit's; and only the events that must run are
installed, an older install being replaced by installing again. Through the real CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from convgit.agents.claude_code import live as claude_code
from tests import clirun
from tests.workspace.gitrepo import GitRepo

SESSION = "0b9c3f4e-1111-4222-8333-944445555888"
# what an install of convgit 0.1 wrote on every event: the hook, run from the PATH
OLD = "command -v convgit >/dev/null 2>&1 || exit 0; convgit hook claude-code"
OLD_EVENTS = {
    "SessionStart": None,
    "UserPromptSubmit": None,
    "PostToolUse": "Write|Edit|MultiEdit|NotebookEdit|Bash",
    "Stop": None,
    "SubagentStop": None,
    "SessionEnd": None,
}


def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return clirun.run(*args, cwd=cwd, env=env).stdout


def local(repo: GitRepo) -> Path:
    return repo.path / ".claude" / "settings.local.json"


def ours(repo: GitRepo) -> dict[str, list[tuple[Any, str]]]:
    """event -> [(matcher, command)] of convgit's handlers in the local settings."""
    found: dict[str, list[tuple[Any, str]]] = {}
    for event, groups in json.loads(local(repo).read_text()).get("hooks", {}).items():
        for group in groups:
            for handler in group["hooks"]:
                if claude_code.is_ours(handler):
                    found.setdefault(event, []).append((group.get("matcher"), handler["command"]))
    return found


def bare_path(tmp_path: Path, *tools: str) -> str:
    """A PATH with a shell and ``tools`` but no convgit."""
    bare = tmp_path / "bare-bin"
    bare.mkdir(exist_ok=True)
    for tool in ("sh", "bash", *tools):
        found = shutil.which(tool)
        assert found is not None
        if not (bare / tool).exists():
            (bare / tool).symlink_to(found)
    return str(bare)


def prompt_event(repo: GitRepo, transcript: Path) -> str:
    transcript.write_text("")
    return json.dumps(
        {
            "session_id": SESSION,
            "transcript_path": str(transcript),
            "cwd": str(repo.path),
            "hook_event_name": "UserPromptSubmit",
            "prompt_id": "p-1",
        }
    )


def hook_log(repo: GitRepo) -> str:
    log = repo.path / ".git" / "convgit" / "logs" / "hooks.log"
    return log.read_text() if log.exists() else ""


def test_the_installed_command_runs_this_convgit_when_convgit_is_not_on_the_path(
    repo: GitRepo, tmp_path: Path
) -> None:
    run(repo.path, "hooks", "install", "claude-code")
    (command,) = {c for pairs in ours(repo).values() for _, c in pairs}
    # the shell that started Claude: git, but no convgit and no PYTHONPATH
    env = {"PATH": bare_path(tmp_path, "git"), "HOME": str(tmp_path)}
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=repo.path,
        env=env,
        input=prompt_event(repo, tmp_path / "t.jsonl"),
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert f"UserPromptSubmit {SESSION}: ok" in hook_log(repo)
    status = json.loads(run(repo.path, "hooks", "status", "--json", env={**os.environ, **env}))
    (state,) = [s for s in status["agents"]["claude-code"] if s["scope"] == "local"]
    assert (state["state"], state["problem"]) == ("installed", None)


def test_status_says_when_the_installed_command_would_not_run(
    repo: GitRepo, tmp_path: Path
) -> None:
    gone = str(tmp_path / "removed-venv" / "bin" / "convgit")
    run(repo.path, "hooks", "install", "claude-code", "--command", gone)
    env = {**os.environ, "PATH": bare_path(tmp_path, "git")}
    status = json.loads(run(repo.path, "hooks", "status", "--json", env=env))
    (state,) = [s for s in status["agents"]["claude-code"] if s["scope"] == "local"]
    assert state["state"] == "installed" and "would start no convgit" in state["problem"]
    assert "would start no convgit" in run(repo.path, "hooks", "status", env=env)
    # with a convgit on this shell's PATH the command falls back to it, but the agent's PATH
    # may have none: the convgit it names is gone, whatever this shell's PATH has
    status = json.loads(run(repo.path, "hooks", "status", "--json"))
    (state,) = [s for s in status["agents"]["claude-code"] if s["scope"] == "local"]
    assert state["state"] == "installed" and f"names is gone ({gone})" in state["problem"]
    assert "whatever this shell's PATH has" in state["problem"]
    assert "`convgit hooks install claude-code --scope local`" in state["problem"]


def test_status_names_a_command_that_keeps_no_event_when_no_convgit_runs(
    repo: GitRepo,
) -> None:
    """A command an older convgit installed does nothing when it finds no convgit: the event
    is lost without a word. `hooks status` says so, and `hooks install` updates it."""
    run(repo.path, "hooks", "install", "claude-code")
    settings = json.loads(local(repo).read_text())
    for groups in settings["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                handler["command"] = (
                    handler["command"]
                    .split("; d=$(")[0]
                    .replace("&& exec convgit", "|| exit 0; exec convgit")
                )
    local(repo).write_text(json.dumps(settings))
    status = json.loads(run(repo.path, "hooks", "status", "--json"))
    (state,) = [s for s in status["agents"]["claude-code"] if s["scope"] == "local"]
    assert "is an older convgit's" in state["problem"] and "updates it" in state["problem"]
    run(repo.path, "hooks", "install", "claude-code")
    status = json.loads(run(repo.path, "hooks", "status", "--json"))
    (state,) = [s for s in status["agents"]["claude-code"] if s["scope"] == "local"]
    assert state["problem"] is None


def test_a_handler_edited_to_another_convgit_path_is_still_convgits(
    repo: GitRepo, tmp_path: Path
) -> None:
    run(repo.path, "hooks", "install", "claude-code")
    settings = json.loads(local(repo).read_text())
    edited = "/opt/tools/venv/bin/convgit hook claude-code"
    for groups in settings["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                handler["command"] = edited
    local(repo).write_text(json.dumps(settings))

    status = json.loads(run(repo.path, "hooks", "status", "--json"))
    (state,) = [s for s in status["agents"]["claude-code"] if s["scope"] == "local"]
    assert state["state"] == "installed" and state["events"] == list(claude_code.EVENTS)
    run(repo.path, "hooks", "install", "claude-code")  # no second handler
    assert {e: len(pairs) for e, pairs in ours(repo).items()} == dict.fromkeys(
        claude_code.EVENTS, 1
    )
    local(repo).write_text(json.dumps(settings))
    run(repo.path, "hooks", "uninstall", "claude-code")  # none left behind
    assert not local(repo).exists() or ours(repo) == {}


def test_only_the_events_that_must_run_are_installed_and_an_old_install_is_upgraded(
    repo: GitRepo,
) -> None:
    theirs = {"type": "command", "command": "./lint.sh"}
    old: dict[str, Any] = {"hooks": {}}
    for event, matcher in OLD_EVENTS.items():
        group: dict[str, Any] = {"hooks": [{"type": "command", "command": OLD, "timeout": 30}]}
        if matcher is not None:
            group = {"matcher": matcher, **group}
        old["hooks"][event] = [group]
    old["hooks"]["Stop"].append({"hooks": [theirs]})
    local(repo).parent.mkdir()
    local(repo).write_text(json.dumps(old))

    status = json.loads(run(repo.path, "hooks", "status", "--json"))
    (state,) = [s for s in status["agents"]["claude-code"] if s["scope"] == "local"]
    assert state["state"] == "out of date" and "SessionEnd" in state["events"]
    assert "updates it" in run(repo.path, "hooks", "status")

    run(repo.path, "hooks", "install", "claude-code")
    found = ours(repo)
    assert {e: [m for m, _ in pairs] for e, pairs in found.items()} == {
        "UserPromptSubmit": [None],
        "PostToolUse": ["Write|Edit|MultiEdit|NotebookEdit"],  # not started for Bash
        "Stop": [None],
        "SubagentStop": [None],
    }
    settings = json.loads(local(repo).read_text())
    assert {"hooks": [theirs]} in settings["hooks"]["Stop"]
    handlers = [h for groups in settings["hooks"].values() for g in groups for h in g["hooks"]]
    assert not any("async" in h for h in handlers)
    status = json.loads(run(repo.path, "hooks", "status", "--json"))
    (state,) = [s for s in status["agents"]["claude-code"] if s["scope"] == "local"]
    assert state["state"] == "installed"

    # per-tool snapshots turned on: PostToolUse for Bash too
    (repo.path / ".git" / "convgit" / "config.toml").write_text("[hooks]\ntool_snapshots = true\n")
    status = json.loads(run(repo.path, "hooks", "status", "--json"))
    assert status["agents"]["claude-code"][0]["state"] == "out of date"
    run(repo.path, "hooks", "install", "claude-code")
    assert [m for m, _ in ours(repo)["PostToolUse"]] == ["Write|Edit|MultiEdit|NotebookEdit|Bash"]


def test_status_of_an_empty_agent_name_is_refused_as_install_refuses_it(repo: GitRepo) -> None:
    """`hooks status ""` names no agent: one sentence and exit 2, as `hooks install ""`, not
    the status of every agent."""
    for command in ("status", "install"):
        done = clirun.run("hooks", command, "", cwd=repo.path, code=2)
        assert done.stderr.startswith("convgit: convgit does not run beside '': use one of")
        assert done.stdout == "" and done.stderr.count("\n") == 1
