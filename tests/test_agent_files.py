"""The files Claude Code's file tools wrote, kept in the snapshots although git ignores them
(`convgit hook claude-code` given PostToolUse events by hand, as Claude gives them): a path
outside the worktree, inside `.git`, or reached through a symlink out of it is never taken;
the size cap applies; Bash's commands name no file and are not read."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.test_hook import SESSION, convgit_json, event, hook, line
from tests.workspace.gitrepo import GitRepo


def tool(transcript: Path, cwd: Path, name: str, **tool_input: Any) -> bytes:
    return event(
        "PostToolUse", transcript, cwd, tool_name=name, tool_input=tool_input, tool_use_id="t-1"
    )


def test_only_files_in_the_worktree_and_under_the_cap_are_kept(
    repo: GitRepo, tmp_path: Path
) -> None:
    repo.write(".gitignore", "*.env\nbuild/\n")
    config = repo.path / ".git" / "convgit" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[snapshots]\nsize_cap_mib = 0.001\n")  # about 1 KiB
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, repo.path / "linked")
    transcript = tmp_path / "claude" / f"{SESSION}.jsonl"
    transcript.parent.mkdir()
    transcript.write_text("")
    hook(repo.path, event("SessionStart", transcript, repo.path, source="startup"))
    hook(repo.path, event("UserPromptSubmit", transcript, repo.path, prompt_id="p-1"))
    files = {
        "local.env": "TOKEN=1\n",
        "build/out.ipynb": "{}\n",
        "big.env": "x" * 4096,
        ".git/notes.env": "in git's folder\n",
        "linked/away.env": "through a symlink\n",
        "made-by-bash.env": "Bash\n",
    }
    for name, text in files.items():
        (repo.path / name).parent.mkdir(parents=True, exist_ok=True)
        (repo.path / name).write_text(text)
    (tmp_path / "elsewhere.env").write_text("outside\n")
    root = str(repo.path)
    for stdin in (
        tool(transcript, repo.path, "Write", file_path=f"{root}/local.env", content="TOKEN=1\n"),
        tool(transcript, repo.path, "NotebookEdit", notebook_path=f"{root}/build/out.ipynb"),
        tool(transcript, repo.path, "Edit", file_path=f"{root}/big.env"),
        tool(transcript, repo.path, "Write", file_path=f"{root}/.git/notes.env"),
        tool(transcript, repo.path, "Write", file_path=f"{root}/linked/away.env"),
        tool(transcript, repo.path, "MultiEdit", file_path=str(tmp_path / "elsewhere.env")),
        tool(transcript, repo.path, "Bash", command="echo Bash > made-by-bash.env"),
    ):
        assert (hook(repo.path, stdin).returncode, b"") == (0, b"")
    with transcript.open("a") as out:
        out.write(line("user", "u-1", None, "Write them", promptId="p-1"))
        out.write(line("assistant", "a-1", "u-1", [{"type": "text", "text": "Done."}]))
    stop = event("Stop", transcript, repo.path, prompt_id="p-1", last_assistant_message="Done.")
    hook(repo.path, stop)

    shown = convgit_json(repo.path, "show", "a-1")["snapshot"]
    paths = repo.tree_paths(shown["tree"])
    assert "local.env" in paths and "build/out.ipynb" in paths
    for never in ("big.env", ".git/notes.env", "linked/away.env", "made-by-bash.env"):
        assert never not in paths, never
    assert not any("elsewhere" in p for p in paths)
    skipped = {s["path"]: s["reason"] for s in shown["skipped"]}
    assert skipped["big.env"].startswith("larger than the size cap")
    log = (repo.path / ".git" / "convgit" / "logs" / "hooks.log").read_text()
    assert "problem" not in log
