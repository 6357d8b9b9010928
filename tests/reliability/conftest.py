"""Fixtures for the reliability tests that need real git repositories: a repository made with
``git init`` (a commit, a branch, a tag and a stash entry, as the workspace tests make them), and
a guard proving the user's index, HEAD, branches, tags and stash are byte-identical afterwards.
Not autouse: the hostile-session-file tests here never touch git."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.workspace.gitrepo import GitRepo, UserStateGuard, init_repo


@pytest.fixture
def user_state() -> Iterator[UserStateGuard]:
    """Watch repositories with ``user_state.watch(path)``; verified when the test ends."""
    guard = UserStateGuard()
    yield guard
    guard.verify()


@pytest.fixture
def make_repo(tmp_path: Path, user_state: UserStateGuard) -> Callable[..., GitRepo]:
    """Make a repository under tmp_path; the guard watches it from the moment it exists."""

    def make(name: str = "repo", *, commit: bool = True) -> GitRepo:
        repo = init_repo(tmp_path / name, commit=commit)
        user_state.watch(repo.path)
        return repo

    return make


@pytest.fixture
def repo(make_repo: Callable[..., GitRepo]) -> GitRepo:
    """A real repository with a commit, a branch, a tag and a stash entry, under the guard."""
    return make_repo()
