"""Every file the agent edited can come back: a git-ignored file Claude Code wrote or edited
through its file tools (the real `claude`, its Write and Edit calls scripted) is in the turn's
snapshot, as Claude's own checkpoints keep it, and `restore` brings it back and says so (of it
alone: a file Claude wrote that git does not ignore is restored as any); a file outside the
worktree is never taken, and `[snapshots] agent_ignored = false` turns it off."""

from __future__ import annotations

from pathlib import Path

from tests.agents.hooked import convgit, convgit_json, reply_text
from tests.agents.runners import ClaudeCode
from tests.agents.script import call, say
from tests.agents.server import ModelServer
from tests.workspace.gitrepo import GitRepo


def reply(project: Path, text: str) -> str:
    (found,) = [
        e["id"]
        for e in convgit_json(project, "tree")["entries"]
        if e.get("role") == "assistant" and reply_text(e) == text
    ]
    return str(found)


def snapshot_paths(project: GitRepo, entry: str) -> dict[str, str]:
    tree = convgit_json(project.path, "show", entry)["snapshot"]["tree"]
    return project.tree_paths(tree)


def test_an_ignored_file_claude_wrote_is_snapshotted_and_restored(
    model_server: ModelServer, claude_code: ClaudeCode, project: GitRepo, tmp_path: Path
) -> None:
    project.write(".gitignore", "*.env\n")
    convgit(project.path, "hooks", "install", "claude-code")
    secret = project.path / "local.env"
    notes = project.path / "notes.txt"  # not ignored
    outside = tmp_path / "outside.txt"
    model_server.expect(
        call("Write", {"file_path": str(secret), "content": "TOKEN=one\n"}),
        call("Write", {"file_path": str(notes), "content": "one\n"}),
        call("Write", {"file_path": str(outside), "content": "not ours\n"}),
        say("I wrote the files."),
        call("Edit", {"file_path": str(secret), "old_string": "one", "new_string": "two"}),
        call("Edit", {"file_path": str(notes), "old_string": "one", "new_string": "two"}),
        say("I edited local.env."),
    )
    first = claude_code.run("Write local.env", "--add-dir", str(tmp_path))  # outside.txt too
    claude_code.run("Edit local.env", resume=first.session_id)
    assert secret.read_text() == "TOKEN=two\n" and outside.read_text() == "not ours\n"
    assert project.git("check-ignore", "local.env").strip() == "local.env"

    wrote, edited = (
        reply(project.path, "I wrote the files."),
        reply(project.path, "I edited local.env."),
    )
    at_write, at_edit = snapshot_paths(project, wrote), snapshot_paths(project, edited)
    assert "local.env" in at_write and "local.env" in at_edit
    assert at_write["local.env"] != at_edit["local.env"]  # each turn's own content
    assert not any("outside" in p for p in at_write)  # never a file outside the worktree

    words = convgit(project.path, "restore", wrote, "--yes").splitlines()
    assert "M local.env" in words and "M notes.txt" in words, words
    said = [w for w in words if w.startswith("ignored by git")]
    assert said == ["ignored by git, restored because the agent wrote it: local.env"], words
    assert secret.read_text() == "TOKEN=one\n" and notes.read_text() == "one\n"
    convgit(project.path, "restore", "--undo", "--yes")
    assert secret.read_text() == "TOKEN=two\n"


def test_agent_ignored_false_leaves_ignored_files_out(
    model_server: ModelServer, claude_code: ClaudeCode, project: GitRepo
) -> None:
    project.write(".gitignore", "*.env\n")
    convgit(project.path, "hooks", "install", "claude-code")
    config = project.path / ".git" / "convgit" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[snapshots]\nagent_ignored = false\n")
    secret = project.path / "local.env"
    model_server.expect(
        call("Write", {"file_path": str(secret), "content": "TOKEN=one\n"}),
        say("I wrote local.env."),
    )
    claude_code.run("Write local.env")
    assert secret.read_text() == "TOKEN=one\n"
    assert "local.env" not in snapshot_paths(project, reply(project.path, "I wrote local.env."))
