"""`[share] on_push = true`: `convgit hooks install git` adds a pre-push hook (chaining the one
that was there) through which `git push` sends the shared sessions too."""

from __future__ import annotations

import stat
from pathlib import Path

from tests.sharing.clones import Clone, convgit_refs
from tests.sharing.test_push_fetch import start
from tests.workspace.gitrepo import UserStateGuard, git

THEIRS = (
    '#!/bin/sh\nsaw="$(dirname "$0")/../their-pre-push-saw"\ncat > "$saw"\necho "$1" >> "$saw"\n'
)


def test_git_push_sends_the_shared_sessions_when_on_push_is_set(
    a: Clone, remote: Path, user_state_guard: UserStateGuard
) -> None:
    hook = a.path / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(THEIRS)
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    sid = start(a)
    (a.path / ".git" / "convgit" / "config.toml").write_text("[share]\non_push = true\n")
    installed = {h["hook"]: h for h in a.json("hooks", "install", "git")["hooks"]}
    assert installed["pre-push"]["chained"]
    a.write("src/app.py", "print('committed')\n")
    a.repo.commit_all("the user's commit")
    user_state_guard.watch(a.path)
    git(a.path, "push", "-q", "origin", "main")
    assert f"refs/convgit/_shared/{sid}" in convgit_refs(remote)
    seen = (a.path / ".git" / "their-pre-push-saw").read_text()
    assert "refs/heads/main" in seen and "origin" in seen  # their hook ran, with git's input
    assert git(remote, "rev-parse", "main") == git(a.path, "rev-parse", "main")


def test_without_on_push_the_installed_hooks_send_nothing(a: Clone, remote: Path) -> None:
    start(a)
    installed = [h["hook"] for h in a.json("hooks", "install", "git")["hooks"]]
    assert installed == ["post-commit", "post-rewrite"]
    git(a.path, "push", "-q", "origin", "main")
    assert convgit_refs(remote) == []
