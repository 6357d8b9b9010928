"""A hook event that failed is seen where the user looks: `convgit status` and `convgit hooks
status` name it (when, which event, a sentence, the log) until a later event of the same agent
session records its turn (or the user dismisses it), and the next event Claude lets speak tells
the user once, as Claude's `systemMessage` (JSON on the hook's stdout). Through the real CLI, the
events written here by hand as Claude sends them."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from convgit.base import locks
from tests.clirun import run
from tests.test_hook import SESSION, line
from tests.workspace.gitrepo import GitRepo


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The environment of every convgit run: a per-user folder of the test's own."""
    return {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg")}


class Claude:
    """Claude Code's side: a transcript that grows a turn at a time, and its hook events."""

    def __init__(self, repo: GitRepo, folder: Path, env: dict[str, str]) -> None:
        self.repo, self.env = repo, env
        self.transcript = folder / f"{SESSION}.jsonl"
        self.transcript.write_text("")
        self.turns = 0
        self.parent: str | None = None

    def hook(self, name: str, **more: Any) -> str:
        """Run the hook as Claude does; its stdout (it always exits 0)."""
        payload = {
            "session_id": SESSION,
            "transcript_path": str(self.transcript),
            "cwd": str(self.repo.path),
            "hook_event_name": name,
            **more,
        }
        done = run(
            "hook", "claude-code", cwd=self.repo.path, input=json.dumps(payload), env=self.env,
            timeout=60, logs_tracebacks=True,
        )  # fmt: skip
        return done.stdout

    def prompt(self) -> str:
        self.turns += 1
        return self.hook("UserPromptSubmit", prompt_id=f"p-{self.turns}")

    def stop(self) -> str:
        n = self.turns
        with self.transcript.open("a") as out:
            out.write(line("user", f"u-{n}", self.parent, f"prompt {n}", promptId=f"p-{n}"))
            out.write(line("assistant", f"a-{n}", f"u-{n}", [{"type": "text", "text": f"R{n}."}]))
        self.parent = f"a-{n}"
        return self.hook("Stop", prompt_id=f"p-{n}", last_assistant_message=f"R{n}.")


def convgit(cwd: Path, env: dict[str, str], *args: str) -> str:
    return run(*args, cwd=cwd, env=env).stdout


def failures(cwd: Path, env: dict[str, str]) -> tuple[list[Any], list[Any]]:
    """hook_failures as `convgit status --json` and `convgit hooks status --json` give them."""
    status = json.loads(convgit(cwd, env, "status", "--json"))
    hooks = json.loads(convgit(cwd, env, "hooks", "status", "--json"))
    return status["hook_failures"], hooks["hook_failures"]


def told(stdout: str) -> str:
    """The systemMessage the hook handed Claude (its stdout is that JSON or nothing)."""
    value = json.loads(stdout)
    assert set(value) == {"systemMessage"}
    return str(value["systemMessage"])


def test_a_failed_event_is_named_until_one_succeeds_and_told_once(
    repo: GitRepo, tmp_path: Path, env: dict[str, str]
) -> None:
    claude = Claude(repo, tmp_path, env)
    assert (claude.prompt(), claude.stop()) == ("", "")
    assert failures(repo.path, env) == ([], [])  # always there, a list
    store = repo.path / ".git" / "convgit"
    log = store / "logs" / "hooks.log"

    # the store is locked past the hook's wait: the Stop fails, and says so at once
    assert claude.prompt() == ""
    with locks.held(store / "locks" / f"agent-claude-code-{SESSION}.lock", 5):
        said = told(claude.stop())
    assert "Stop" in said and "lock" in said and str(log) in said
    in_status, in_hooks = failures(repo.path, env)
    assert in_status == in_hooks
    (failure,) = in_status
    assert failure["event"] == "Stop" and failure["log"] == str(log)
    assert "lock" in failure["problem"] and failure["when"].endswith("Z")
    words = convgit(repo.path, env, "status")
    assert "hook events that failed (1)" in words and failure["problem"] in words
    assert "Stop" in convgit(repo.path, env, "hooks", "status").split("failed (1)")[1]

    # told once: the next event says nothing of it, and catching the turn up, clears it
    assert claude.prompt() == ""
    assert failures(repo.path, env) == ([], [])

    # an event that cannot speak (SessionEnd: Claude is exiting) is told by the next that can
    with locks.held(store / "locks" / f"agent-claude-code-{SESSION}.lock", 5):
        assert claude.hook("SessionEnd", reason="other") == ""
    assert [f["event"] for f in failures(repo.path, env)[0]] == ["SessionEnd"]
    said = told(claude.stop())
    assert "SessionEnd" in said and "succeeded" in said
    assert failures(repo.path, env) == ([], [])
    assert (claude.prompt(), claude.stop()) == ("", "")
    texts = [
        e.get("content") for e in json.loads(convgit(repo.path, env, "log", "--json"))["entries"]
    ]
    assert [t for t in texts if isinstance(t, str)] == [f"prompt {n}" for n in range(1, 5)]


def test_a_store_that_cannot_be_written_still_names_the_failure(
    repo: GitRepo, tmp_path: Path, env: dict[str, str]
) -> None:
    claude = Claude(repo, tmp_path, env)
    assert (claude.prompt(), claude.stop()) == ("", "")
    store = repo.path / ".git" / "convgit"
    saved = tmp_path / "saved"
    saved.mkdir()
    for name in ("locks", "logs"):  # a file where the store writes its locks and its log
        shutil.move(store / name, saved / name)
        (store / name).write_text("not a folder\n")
    try:
        said = told(claude.prompt())
        assert "UserPromptSubmit" in said
        hooks = json.loads(convgit(repo.path, env, "hooks", "status", "--json"))
        (failure,) = hooks["hook_failures"]
        assert failure["event"] == "UserPromptSubmit"
        assert "File exists" in failure["problem"] and "locks" in failure["problem"]
        assert (tmp_path / "xdg" / "convgit" / "hook-failures").is_dir()  # kept per user
    finally:
        for name in ("locks", "logs"):
            (store / name).unlink()
            shutil.move(saved / name, store / name)
    assert claude.prompt() == ""
    assert failures(repo.path, env) == ([], [])


def test_an_event_that_could_not_be_read_is_named_until_the_user_dismisses_it(
    repo: GitRepo, tmp_path: Path, env: dict[str, str]
) -> None:
    """An event convgit could not read names no agent session whose next event could catch it
    up: later turns that succeed leave it named, `convgit hooks dismiss` stops naming it."""
    claude = Claude(repo, tmp_path, env)
    run("hook", "claude-code", cwd=repo.path, input="{not json", env=env, logs_tracebacks=True)
    said = told(claude.prompt())  # it could not speak: the next event that can tells it
    assert "(unread event)" in said and "`convgit hooks dismiss`" in said
    assert claude.stop() == ""
    in_status, in_hooks = failures(repo.path, env)
    assert in_status == in_hooks
    (failure,) = in_status
    assert (failure["event"], failure["agent_session_id"], failure["kind"]) == (
        "(unread event)",
        None,
        "failed",
    )
    assert "`convgit hooks dismiss`" in convgit(repo.path, env, "status")
    dismissed = json.loads(convgit(repo.path, env, "hooks", "dismiss", "--json"))
    assert dismissed == {"dismissed": [failure]}
    assert failures(repo.path, env) == ([], [])
    assert "nothing to dismiss" in convgit(repo.path, env, "hooks", "dismiss")
