"""What a restore leaves alone for the people and agents around the session, and says so: the
user's own files that no snapshot held, the agents' settings files, and whatever else it leaves
alone that differs from its target. Every example runs the real CLI on a real repository,
under the guard that the user's index, HEAD, branches, tags and stash never change."""

from __future__ import annotations

from tests.workspace.cli import convgit
from tests.workspace.gitrepo import GitRepo


def _alone(result: dict) -> dict[str, str]:
    return {row["path"]: row["reason"] for row in result["left_alone"]}


def test_restore_never_deletes_a_file_no_snapshot_held_unless_clean(repo: GitRepo) -> None:
    """The agent's file goes; the user's own file, made after the last snapshot, stays and is
    listed; `--clean` removes it too, saved first, and `--undo` brings it back."""
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    repo.write("agent.py", "print('agent')\n")
    convgit(repo.path, "assistant", "wrote agent.py")
    repo.write("mine/notes.txt", "my own notes\n")

    planned = convgit(repo.path, "restore", task, "--dry-run").stdout
    assert "left alone: mine/notes.txt (no snapshot of the session held it" in planned
    result = convgit(repo.path, "restore", task, "--yes", "--json").json()
    assert [c["path"] for c in result["changes"]] == ["agent.py"]
    assert "--clean" in _alone(result)["mine/notes.txt"]
    assert not (repo.path / "agent.py").exists()
    assert (repo.path / "mine/notes.txt").read_text() == "my own notes\n"

    cleaned = convgit(repo.path, "restore", task, "--clean", "--yes", "--json").json()
    assert cleaned["changes"] == [{"path": "mine/notes.txt", "status": "deleted"}]
    assert not (repo.path / "mine").exists()
    convgit(repo.path, "restore", "--undo", "--yes")
    assert (repo.path / "mine/notes.txt").read_text() == "my own notes\n"


def test_restore_leaves_claudes_settings_files_as_they_are(repo: GitRepo) -> None:
    """`hooks install` writes .claude/settings.json and settings.local.json after the snapshot
    restored: neither is rewound nor deleted, both are listed as left alone."""
    repo.write(".claude/settings.json", '{"permissions": {"allow": []}}\n')
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    convgit(repo.path, "hooks", "install", "claude-code", "--scope", "project")
    convgit(repo.path, "hooks", "install", "claude-code", "--scope", "local")
    repo.write("src/app.py", "print('edited')\n")
    reply = convgit(repo.path, "assistant", "edited", "--json").json()
    held = repo.tree_paths(reply["snapshot"]["tree"])
    project = (repo.path / ".claude/settings.json").read_bytes()
    local_path = repo.path / ".claude/settings.local.json"
    local = local_path.read_bytes()

    planned = convgit(repo.path, "restore", task, "--dry-run").stdout
    assert "left alone: .claude/settings.json (an agent's settings file" in planned
    result = convgit(repo.path, "restore", task, "--yes", "--json").json()
    assert (repo.path / ".claude/settings.json").read_bytes() == project
    assert local_path.read_bytes() == local
    assert [c["path"] for c in result["changes"]] == ["src/app.py"]
    alone = _alone(result)
    assert "settings file" in alone[".claude/settings.json"]
    if ".claude/settings.local.json" in held:  # not when git ignores it (info/exclude)
        assert "settings file" in alone[".claude/settings.local.json"]


def test_restore_lists_an_ignored_file_changed_since_that_the_target_lacks(repo: GitRepo) -> None:
    """A reply's snapshot held cache.txt; the user then has git ignore it and changes it.
    Restoring the task (whose snapshot lacks it) neither deletes it nor passes over it: restore
    and --dry-run list it, and say that what differs is left alone."""
    convgit(repo.path, "init")
    task = convgit(repo.path, "user", "task", "--json").json()["id"]
    repo.write("cache.txt", "v1\n")
    convgit(repo.path, "assistant", "made a cache")
    with (repo.path / ".git/info/exclude").open("a") as exclude:
        exclude.write("cache.txt\n")
    repo.write("cache.txt", "v2\n")

    planned = convgit(repo.path, "restore", task, "--dry-run").stdout
    assert "left alone: cache.txt (ignored by git; the snapshot lacks it)" in planned
    assert "already are" not in planned
    dry = convgit(repo.path, "restore", task, "--dry-run", "--json").json()
    assert "ignored by git" in _alone(dry)["cache.txt"]
    done = convgit(repo.path, "restore", task, "--yes")
    assert "left alone: cache.txt (ignored by git; the snapshot lacks it)" in done.stdout
    assert (repo.path / "cache.txt").read_text() == "v2\n"
