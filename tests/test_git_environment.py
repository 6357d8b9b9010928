"""The README's test command passes for a newcomer whose shell sets git's variables: the run
scrubs them once (tests/gitenv.py), so a repository's own identity wins as it does for a user."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests import gitenv
from tests.workspace.gitrepo import git

ROOT = Path(__file__).resolve().parent.parent
# what many shells set, each of which changed what a test saw
SHELL = {
    "GIT_AUTHOR_NAME": "Shell Author",
    "GIT_AUTHOR_EMAIL": "shell@example.com",
    "GIT_COMMITTER_NAME": "Shell Committer",
    "GIT_COMMITTER_EMAIL": "shell@example.com",
    "EMAIL": "shell@example.com",
    "XDG_CONFIG_HOME": "/nonexistent/xdg-config",
    "XDG_DATA_HOME": "/nonexistent/xdg-data",
    "GIT_CONFIG_GLOBAL": "/nonexistent/gitconfig",
    "CONVGIT_STORE": "/nonexistent/store",
}


def test_a_test_sees_no_variable_of_gits_and_a_repositorys_identity_wins(tmp_path: Path) -> None:
    seen = {name: value for name, value in os.environ.items() if gitenv.scrubbed(name)}
    assert os.environ["CONVGIT_RECORDER"] in ("on", "off")
    assert {n: v for n, v in seen.items() if n not in gitenv.RECORDER} == {
        **gitenv.SET,
        **gitenv.CHECKS,
    }
    assert (Path(os.environ["HOME"]) / ".gitconfig").read_text() == gitenv.IDENTITY
    own = tmp_path / "own"
    own.mkdir()
    git(own, "init", "-q")
    git(own, "config", "user.name", "Ann")
    git(own, "config", "user.email", "ann@example.com")
    git(own, "commit", "-q", "--allow-empty", "-m", "by Ann")
    assert git(own, "log", "-1", "--format=%an <%ae> %cn <%ce>").strip() == (
        "Ann <ann@example.com> Ann <ann@example.com>"
    )
    anyone = tmp_path / "anyone"  # no identity of its own: the run's, from HOME's .gitconfig
    anyone.mkdir()
    git(anyone, "init", "-q")
    git(anyone, "commit", "-q", "--allow-empty", "-m", "by the run")
    assert git(anyone, "log", "-1", "--format=%an <%ae>").strip() == (
        f"{gitenv.NAME} <{gitenv.EMAIL}>"
    )


def test_a_shell_that_sets_gits_variables_changes_nothing_a_test_sees(tmp_path: Path) -> None:
    inside = test_a_test_sees_no_variable_of_gits_and_a_repositorys_identity_wins.__name__
    here = f"{Path(__file__).relative_to(ROOT)}::{inside}"
    inner = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", here],
        cwd=ROOT,
        env={**os.environ, **SHELL},
        capture_output=True,
        text=True,
        check=False,
    )
    assert inner.returncode == 0, inner.stdout + inner.stderr
    assert "1 passed" in inner.stdout
