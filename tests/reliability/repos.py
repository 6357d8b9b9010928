"""Real repositories for the reliability tests, and git's own checks of them."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.workspace.gitrepo import GitRepo, git


def init_repo(path: Path, *, commit: bool = True) -> GitRepo:
    """`git init` plus, when ``commit``, a first commit, a branch, a tag and a stash entry."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    repo = GitRepo(path)
    if commit:
        repo.write("README.md", "# demo\n")
        repo.write("src/app.py", "print('hello')\n")
        repo.commit_all("first")
        repo.git("branch", "feature")
        repo.git("tag", "v1")
        repo.write("README.md", "# stashed change\n")
        repo.git("stash", "-q")
    return repo


def git_fsck(path: Path) -> str:
    """`git fsck --full --strict`: assert it is clean (dangling objects are fine) and return
    its report."""
    proc = subprocess.run(
        ["git", "fsck", "--full", "--strict", "--no-progress"],
        cwd=path,
        capture_output=True,
        text=True,
        check=False,
    )
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"git fsck failed: {report}"
    bad = [line for line in report.splitlines() if not line.startswith("dangling ")]
    assert not bad, f"git fsck reported: {bad}"
    return report
